"""Mixtures of experts and their plumbing, T2T 1.15.7's `utils/expert_utils` (names, signatures,
variable names): `Parallelism` (one call per device), `PadRemover`, noisy top-k gating,
`SparseDispatcher` and `local_moe`.

    dp = Parallelism(["", ""])
    dp(tf.add, [1, 2], 10)                 # [11, 12]: one call per device, lists per shard

    y, loss = local_moe(x, True, ffn_expert_fn(16, [32], 16), num_experts=4, k=2)
    # y has x's shape; vars local_moe/noisy_top_k_gating/{w_gate,w_noise},
    # local_moe/parallel_<i>/{w_0,w_1} (one set per expert)

T2T's ported code imports it as `t2t.utils.expert_utils`.
"""
import functools
import math

import tensorflow as tf

from t2t.layers.common_layers import convert_gradient_to_tensor, should_generate_summaries
from t2t.layers.shape_utils import reshape_like, to_float

_v1 = tf.compat.v1

# A device string meaning "leave placement to the enclosing scope" (experts on one device).
DEFAULT_DEV_STRING = "existing_device"


def add_scope(scope=None, scope_fn=None):
    """A decorator running the function in `scope_fn(name or scope or f.__name__)`; the
    decorated function takes an extra `name` keyword overriding the scope."""
    def decorator(f):
        @functools.wraps(f)
        def decorated(*args, **kwargs):
            name = kwargs.pop("name", None)
            with scope_fn(name or scope or f.__name__):
                return f(*args, **kwargs)
        return decorated
    return decorator


def add_var_scope(scope=None):
    return add_scope(scope, scope_fn=_v1.variable_scope)


def add_name_scope(scope=None):
    return add_scope(scope, scope_fn=tf.name_scope)


def transpose_list_of_lists(lol):
    """[[1, 2], [3, 4]] -> [[1, 3], [2, 4]]."""
    if not lol:
        raise ValueError("transpose_list_of_lists: cannot transpose the empty list")
    return [list(x) for x in zip(*lol)]


class Parallelism:
    """Calls a function once per device: `Parallelism(devices)(fn, *args, **kwargs)`.

    Each argument is a list with one element per device or a value every call gets. The
    result is a list of n outputs, or a tuple of such lists when `fn` returns a tuple:

        e, f = Parallelism(["/gpu:0", "/gpu:1"])(fn, [a0, a1], c)   # fn(a0, c), fn(a1, c)

    With `reuse=True` every call shares the variables of the first (data parallelism);
    with `reuse=None` call i makes its own under "parallel_<i>" (one set per expert).
    `caching_devices` reads each variable once per device; `daisy_chain_variables` copies
    each variable's value from one device to the next instead of from its home.
    """

    def __init__(self, device_names_or_functions, reuse=True, caching_devices=None,
                 daisy_chain_variables=False, ps_devices=None):
        if not device_names_or_functions:
            raise ValueError("Parallelism needs at least one device, e.g. [''] for the "
                             "default device")
        self._devices = device_names_or_functions
        self._n = len(device_names_or_functions)
        self._reuse = reuse
        self._caching_devices = self._maybe_repeat(caching_devices)
        self._daisy_chain_variables = daisy_chain_variables
        self._ps_devices = ps_devices or [""]

    def __call__(self, fn, *args, **kwargs):
        if args:
            my_args = transpose_list_of_lists([self._maybe_repeat(arg) for arg in args])
        else:
            my_args = [[] for _ in range(self.n)]
        my_kwargs = [{} for _ in range(self.n)]
        for key, value in kwargs.items():
            for i, shard_value in enumerate(self._maybe_repeat(value)):
                my_kwargs[i][key] = shard_value
        fns = self._maybe_repeat(fn)
        cache = {}  # (device, name) or name -> the value read there (shared by the calls)
        outputs = []
        for i in range(self.n):
            with tf.name_scope("parallel_%d" % i):
                with _v1.variable_scope(
                        _v1.get_variable_scope() if self._reuse else "parallel_%d" % i,
                        reuse=True if i > 0 and self._reuse else None,
                        caching_device=self._caching_devices[i],
                        custom_getter=self._custom_getter(i, cache)):
                    if self._devices[i] != DEFAULT_DEV_STRING:
                        with tf.device(self._devices[i]):
                            outputs.append(fns[i](*my_args[i], **my_kwargs[i]))
                    else:
                        outputs.append(fns[i](*my_args[i], **my_kwargs[i]))
        if isinstance(outputs[0], tuple):
            return tuple(list(o) for o in zip(*outputs))
        return outputs

    def _custom_getter(self, i, cache):
        device = self._devices[i]

        def daisy_chain_getter(getter, name, *args, **kwargs):
            if (device, name) in cache:
                return cache[(device, name)]
            if name in cache:  # read on another device: copy from the last one
                value = tf.identity(cache[name])
            else:
                value = tf.convert_to_tensor(getter(name, *args, **kwargs))
            cache[name] = cache[(device, name)] = value
            return value

        def caching_getter(getter, name, *args, **kwargs):
            key = (self._caching_devices[i], name)
            if key not in cache:
                variable = getter(name, *args, **kwargs)
                with tf.device(self._caching_devices[i]):
                    cache[key] = tf.convert_to_tensor(variable)
            return cache[key]

        if self._daisy_chain_variables:
            return daisy_chain_getter
        if self._caching_devices[i]:
            return caching_getter
        return None

    @property
    def n(self):
        return self._n

    @property
    def devices(self):
        return self._devices

    @property
    def ps_devices(self):
        return self._ps_devices

    def _maybe_repeat(self, x):
        if isinstance(x, list):
            if len(x) != self.n:
                raise ValueError("Parallelism over %d devices got a list of %d arguments; "
                                 "pass one per device or a single non-list value"
                                 % (self.n, len(x)))
            return x
        return [x] * self.n


class PadRemover:
    """Drops padding positions before a position-wise layer and puts them back after.

    Built from a padding mask ([batch, length] or flat, > 0 at padding), it removes those
    rows of any tensor [batch * length, ...] and restores them as zeros:

        remover = PadRemover(tf.constant([[0., 1.], [0., 0.]]))   # 1.0 = padding
        x = remover.remove(tf.reshape(tf.range(8.), [4, 2]))        # rows 0, 2, 3 kept
        remover.restore(x)                                          # row 1 is zeros
    """

    def __init__(self, pad_mask):
        with tf.name_scope("pad_reduce/get_ids"):
            pad_mask = tf.reshape(pad_mask, [-1])
            # The mask is >= 0, so "not padding" is "below a small epsilon".
            self.nonpad_ids = tf.cast(tf.where(pad_mask < 1e-9), tf.int32)
            self.dim_origin = tf.shape(pad_mask)[:1]

    def remove(self, x):
        """x [positions, ...] -> [non-padding positions, ...], in order."""
        with tf.name_scope("pad_reduce/remove"):
            x_shape = x.shape.as_list()
            x = tf.gather_nd(x, indices=self.nonpad_ids)
            if not tf.executing_eagerly():
                x.set_shape([None] + x_shape[1:])
            return x

    def restore(self, x):
        """Inverse of `remove`: scatter back, zeros at padding positions."""
        with tf.name_scope("pad_reduce/restore"):
            return tf.scatter_nd(indices=self.nonpad_ids, updates=x,
                                 shape=tf.concat([self.dim_origin, tf.shape(x)[1:]], axis=0))


@add_name_scope("map_ids")
def map_ids(x, indices, map_fn):
    """Apply `map_fn` to the rows of x [length, ...] of each id in indices [length, 1].

    Ids are 0..n-1 and grouped (each id's rows contiguous); map_fn gets [1, rows, ...] and
    the outputs are concatenated in id order.
    """
    indices = tf.reshape(indices, [-1])
    batch_size = tf.reduce_max(indices) + 1
    outputs = tf.TensorArray(x.dtype, size=batch_size, infer_shape=False)

    def body(i, outputs):
        rows = tf.gather_nd(x, indices=tf.cast(tf.where(tf.equal(indices, i)), tf.int32))
        out = tf.squeeze(map_fn(tf.expand_dims(rows, axis=0)), axis=0)
        return i + 1, outputs.write(i, out)

    _, outputs = tf.while_loop(lambda i, _: i < batch_size, body, [tf.constant(0), outputs])
    return outputs.concat()


# --------------------------------------------------------------------------- gating
def cv_squared(x):
    """The squared coefficient of variation of a sample (variance / mean^2); 0 if empty.

    A loss that pushes positive values (expert importances, loads) towards uniform:
    cv_squared([1., 1.]) == 0, cv_squared([0., 2.]) == 1.
    """
    epsilon = 1e-10
    float_size = to_float(tf.size(x)) + epsilon
    mean = tf.reduce_sum(x) / float_size
    variance = tf.reduce_sum(tf.math.squared_difference(x, mean)) / float_size
    return variance / (tf.square(mean) + epsilon)


def _gates_to_load(gates):
    """How many examples each expert gets: count of gates > 0 per column, [n] float32."""
    return tf.reduce_sum(to_float(gates > 0), 0)


def _rowwise_unsorted_segment_sum(values, indices, n):
    """Per row b: out[b, indices[b, j]] += values[b, j]; values/indices [batch, k] -> [batch, n]."""
    batch, k = tf.unstack(tf.shape(indices), num=2)
    indices_flat = tf.reshape(indices, [-1]) + (tf.range(batch * k) // k) * n
    ret_flat = tf.math.unsorted_segment_sum(tf.reshape(values, [-1]), indices_flat, batch * n)
    return tf.reshape(ret_flat, [batch, n])


def _normal_distribution_cdf(x, stddev):
    """CDF of N(0, stddev^2) at x."""
    return 0.5 * (1.0 + tf.math.erf(x / (math.sqrt(2) * stddev + 1e-20)))


def _prob_in_top_k(clean_values, noisy_values, noise_stddev, noisy_top_values, k):
    """The probability of each value being in the top k under fresh noise ([batch, n]).

    Differentiable in clean_values, so the load can be balanced by gradient descent.
    noisy_top_values: the m >= k + 1 largest noisy values per row.
    """
    batch = tf.shape(clean_values)[0]
    m = tf.shape(noisy_top_values)[1]
    top_values_flat = tf.reshape(noisy_top_values, [-1])
    # The value to beat: the (k+1)-th if this one is in the top k, else the k-th.
    threshold_positions_if_in = tf.range(batch) * m + k
    threshold_if_in = tf.expand_dims(tf.gather(top_values_flat, threshold_positions_if_in), 1)
    is_in = tf.greater(noisy_values, threshold_if_in)
    if noise_stddev is None:
        return to_float(is_in)
    threshold_if_out = tf.expand_dims(
        tf.gather(top_values_flat, threshold_positions_if_in - 1), 1)
    prob_if_in = _normal_distribution_cdf(clean_values - threshold_if_in, noise_stddev)
    prob_if_out = _normal_distribution_cdf(clean_values - threshold_if_out, noise_stddev)
    return tf.where(is_in, prob_if_in, prob_if_out)


def _my_top_k(x, k):
    """tf.math.top_k for a small k by repeated argmax: (values, int32 indices) [batch, k]."""
    if k > 10:
        return tf.math.top_k(x, k)
    values, indices = [], []
    depth = tf.shape(x)[1]
    for i in range(k):
        values.append(tf.reduce_max(x, 1))
        argmax = tf.argmax(x, 1)
        indices.append(argmax)
        if i + 1 < k:
            x += tf.one_hot(argmax, depth, -1e9)
    return tf.stack(values, axis=1), tf.cast(tf.stack(indices, axis=1), tf.int32)


def noisy_top_k_gating(x, num_experts, train, k=2, initializer=_v1.zeros_initializer(),
                       noisy_gating=True, noise_epsilon=1e-2, name=None):
    """Noisy top-k gating (Shazeer et al. 2017, arXiv:1701.06538).

    x [batch, input_size] -> (gates [batch, num_experts], k non-zeros per row summing to 1;
    load [num_experts], the expected number of examples per expert). Noise is added only
    when `train`. Variables `w_gate` (and `w_noise`) [input_size, num_experts].
    """
    with _v1.variable_scope(name, default_name="noisy_top_k_gating"):
        input_size = x.get_shape().as_list()[-1]
        w_gate = _v1.get_variable("w_gate", [input_size, num_experts], tf.float32, initializer)
        if noisy_gating:
            w_noise = _v1.get_variable("w_noise", [input_size, num_experts], tf.float32,
                                       initializer)
        clean_logits = tf.matmul(x, w_gate)
        if noisy_gating:
            raw_noise_stddev = tf.matmul(x, w_noise)
            noise_stddev = (tf.nn.softplus(raw_noise_stddev) + noise_epsilon) * to_float(train)
            noisy_logits = clean_logits + (
                tf.random.normal(tf.shape(clean_logits)) * noise_stddev)
            logits = noisy_logits
            if should_generate_summaries():
                _v1.summary.histogram("noisy_logits", noisy_logits)
                _v1.summary.histogram("noise_stddev", noise_stddev)
        else:
            logits = clean_logits
        top_logits, top_indices = _my_top_k(logits, min(k + 1, num_experts))
        top_k_logits = tf.slice(top_logits, [0, 0], [-1, k])
        top_k_indices = tf.slice(top_indices, [0, 0], [-1, k])
        top_k_gates = tf.nn.softmax(top_k_logits)
        gates = _rowwise_unsorted_segment_sum(top_k_gates, top_k_indices, num_experts)
        if noisy_gating and k < num_experts:
            load = tf.reduce_sum(_prob_in_top_k(clean_logits, noisy_logits, noise_stddev,
                                                top_logits, k), 0)
        else:
            load = _gates_to_load(gates)
        if should_generate_summaries():
            _v1.summary.histogram("importance", tf.reduce_sum(gates, 0))
            _v1.summary.histogram("load", load)
        return gates, load


# --------------------------------------------------------------------------- dispatch
class SparseDispatcher:
    """Sends each example only to the experts whose gate is non-zero, and sums back.

        dispatcher = SparseDispatcher(num_experts, gates)        # gates [batch, num_experts]
        expert_inputs = dispatcher.dispatch(inputs)              # num_experts tensors
        outputs = dispatcher.combine([f(x) for f, x in zip(experts, expert_inputs)])
        # outputs[b] = sum_i gates[b, i] * experts[i](inputs[b])
    """

    def __init__(self, num_experts, gates):
        self._gates = gates
        self._num_experts = num_experts
        where = tf.cast(tf.where(tf.transpose(gates) > 0), tf.int32)
        self._expert_index, self._batch_index = tf.unstack(where, num=2, axis=1)
        self._part_sizes_tensor = tf.reduce_sum(tf.cast(gates > 0, tf.int32), [0])
        self._nonzero_gates = tf.gather(tf.reshape(self._gates, [-1]),
                                        self._batch_index * num_experts + self._expert_index)

    @add_name_scope()
    def dispatch(self, inp):
        """inp [batch, ...] -> num_experts tensors [examples of expert i, ...]."""
        inp = tf.gather(inp, self._batch_index)
        return tf.split(inp, self._part_sizes_tensor, 0, num=self._num_experts)

    @add_name_scope()
    def combine(self, expert_out, multiply_by_gates=True):
        """The experts' outputs summed per example (weighted by the gates): [batch, ...]."""
        # A dense gradient: the concat's would be sparse slices, summed many times.
        stitched = convert_gradient_to_tensor(tf.concat(expert_out, 0))
        if multiply_by_gates:
            stitched *= tf.expand_dims(self._nonzero_gates, 1)
        return tf.math.unsorted_segment_sum(stitched, self._batch_index,
                                            tf.shape(self._gates)[0])

    def expert_to_gates(self):
        """Per expert, the gate values of its examples: num_experts tensors [examples]."""
        return tf.split(self._nonzero_gates, self._part_sizes_tensor, 0, num=self._num_experts)

    def expert_to_batch_indices(self):
        """Per expert, the batch positions of its examples: num_experts tensors [examples]."""
        return tf.split(self._batch_index, self._part_sizes_tensor, 0, num=self._num_experts)

    @property
    def part_sizes(self):
        return self._part_sizes_tensor


def ffn_expert_fn(input_size, hidden_sizes, output_size, hidden_activation=tf.nn.relu):
    """A function x [batch, input_size] -> [batch, output_size]: a feed-forward network
    without biases, variables w_0, w_1, ... (the expert of `local_moe`)."""
    def my_fn(x):
        layer_sizes = [input_size] + hidden_sizes + [output_size]
        for i in range(1 + len(hidden_sizes)):
            w = _v1.get_variable("w_%d" % i, layer_sizes[i:i + 2], tf.float32)
            x = tf.matmul(x, w)
            if i < len(hidden_sizes):
                x = hidden_activation(x)
            if layer_sizes[i] != input_size:
                x *= (layer_sizes[i] / float(input_size)) ** -0.5
        return x
    return my_fn


def flatten_all_but_last(a):
    """[d0, ..., dn-1, dn] -> [d0 * ... * dn-1, dn]."""
    ret = tf.reshape(a, [-1, tf.shape(a)[-1]])
    if not tf.executing_eagerly():
        ret.set_shape([None] + a.get_shape().as_list()[-1:])
    return ret


def local_moe(x, train, expert_fn, num_experts, k=1, loss_coef=1e-2, hparams=None,
              pass_x=True, pass_gates=False, additional_dispatch_params=None, name=None):
    """A mixture of experts on one device, gated by noisy top-k.

    x [..., input_size] -> (y [..., output_size], the load-balancing loss: loss_coef *
    (cv_squared(importance) + cv_squared(load)), to add to the training loss). Each expert
    is `expert_fn` called with keyword arguments: `x` (its examples, when pass_x), `gates`
    (when pass_gates) and each of `additional_dispatch_params`, flattened and dispatched.
    `hparams.gating_type` must be "topk" (the default when hparams is None).
    """
    gating_type = getattr(hparams, "gating_type", "topk") if hparams is not None else "topk"
    if gating_type != "topk":
        raise ValueError("local_moe: gating_type %r is not supported in t2t (VQ gating needs "
                         "T2T's discretization bottleneck); use 'topk'" % (gating_type,))
    with _v1.variable_scope(name, default_name="local_moe"):
        x_flat = flatten_all_but_last(x)
        gates, load = noisy_top_k_gating(x_flat, num_experts, train, k,
                                         initializer=_v1.zeros_initializer(),
                                         noisy_gating=True, noise_epsilon=1e-2)
        importance = tf.reduce_sum(gates, 0)
        loss = (cv_squared(importance) + cv_squared(load)) * loss_coef
        dispatcher = SparseDispatcher(num_experts, gates)
        expert_kwargs = {}
        if pass_x:
            expert_kwargs["x"] = dispatcher.dispatch(x_flat)
        if pass_gates:
            expert_kwargs["gates"] = dispatcher.expert_to_gates()
        for key, val in (additional_dispatch_params or {}).items():
            expert_kwargs[key] = dispatcher.dispatch(flatten_all_but_last(val))
        ep = Parallelism([DEFAULT_DEV_STRING] * num_experts, reuse=None)
        expert_outputs = ep(expert_fn, **expert_kwargs)
        y_flat = dispatcher.combine(expert_outputs)
        return reshape_like(y_flat, x), loss

