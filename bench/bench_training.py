"""Training throughput on CPU: the t2t trainer stack vs a plain tf.keras Model.fit.

For `transformer_tiny` and `transformer_small` (their registered hparams, vocab 256), both
sides train the same architecture on the same fixed batch (`--batch` sequences of
`--length` ids as inputs and as targets, no padding):

  t2t    an Estimator from `trainer_lib.create_estimator` (T2TModel transformer, T2T's
         optimizer and schedule, the trainer's TrainingLogHook) fed by a tf.data input_fn.
  t2t_xla  the same with `use_xla=True` (T2T's `--xla_compile`: the model function in an
         XLA jit scope, layers on their static-shape paths).
  native the native backend's train step (`t2t.training.native.functions`: the same
         T2TModel, optimizer and schedule in a tf.function, variables under Estimator's
         names), fetching the loss and counters every step as its training loop does.
  keras  a functional tf.keras model of the same shape (pre-norm encoder-decoder, heads,
         filter size, dropouts, tied embedding/softmax, label smoothing 0.1, Adam),
         trained with Model.fit.

Each round trains `--warmup` + `--steps` steps per side and times the last `--steps`
(graph building and the first steps are left out); sides alternate round by round so
machine load hits both alike, and medians are reported. Tokens/s counts input + target
tokens. Model FLOPs per step are computed from the shapes (3x the forward matmuls and
attention products) and compared with a float32 matmul peak measured in the same run (the
best of measurements taken before every round, so a busy moment does not lower it).

A profile of one t2t step (`RunOptions(trace_level=FULL_TRACE)`) gives the top op types by
time, which say where a step goes (matmuls, softmax, layer norm, the optimizer, ...).

Where TensorFlow has no tf.estimator (2.16+) the Estimator sides are left out.
`native_over_t2t` is the native backend's throughput over the Estimator's from those
rounds; the `paired` figures are the fairer ones: the Estimator's training graph (its
model_fn in a bare session, and in a MonitoredTrainingSession with the hooks
`estimator.train` runs) and the native train step take turns step by step in one process,
all fed padded batches of unknown shape as a real input pipeline gives them (rounds of a
few seconds on a shared machine differ by more than the backends do):
`native_over_estimator` (bare graph) and `native_over_estimator_hooks` (what a user of the
Estimator backend gets). A run of the matmul peak's chain takes its turn there too, and each
side's `*_fraction_of_matmul_peak` sets every step against the chain of the same turn: the
machine's matmul speed moves by half between measurements minutes apart, which the best-of
peak above cannot follow.

    python bench/bench_training.py [--batch 64] [--length 32] [--rounds 3] [--steps 20]
    # prints a table and writes bench/results/training.json (TF 2.15, both backends) or
    # bench/results/training_tf<major.minor>.json on a TensorFlow without tf.estimator
"""
import argparse
import json
import math
import os
import platform
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import logging  # noqa: E402

from t2t.core import backend_choice
from t2t.core import registry
from t2t.model import model_hparams
from t2t.training import trainer_lib
from t2t.training.native import functions as native_functions

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = 256
HPARAMS_SETS = ("transformer_tiny", "transformer_small")


# ----------------------------------------------------------------------------- shared
def make_batch(args):
    rng = np.random.RandomState(0)
    inputs = rng.randint(2, VOCAB, size=(args.batch, args.length)).astype(np.int32)
    targets = rng.randint(2, VOCAB, size=(args.batch, args.length)).astype(np.int32)
    return inputs, targets


def forward_flops_per_step(hparams, batch, length):
    """Matmul and attention FLOPs of one forward pass (inputs and targets of `length`)."""
    d, f, n = hparams.hidden_size, hparams.filter_size, hparams.num_hidden_layers
    tokens = batch * length
    attention = 4 * length * d  # scores (QK^T) and weighted values, per query token
    encoder = n * tokens * (8 * d * d + attention + 4 * d * f)
    decoder = n * tokens * (8 * d * d + attention        # self-attention
                            + 4 * d * d + attention      # enc-dec queries and output
                            + 4 * d * d                  # enc-dec keys and values
                            + 4 * d * f)
    logits = tokens * 2 * d * VOCAB
    return encoder + decoder + logits


def matmul_chain_flops(size=1024, iterations=20):
    return 2.0 * size ** 3 * iterations


def matmul_chain(size=1024, iterations=20):
    """(run, flops): `run()` does `iterations` float32 `size` x `size` matmuls in a
    tf.function and waits for them; `flops` is their FLOP count."""
    a = tf.random.normal([size, size])
    b = tf.random.normal([size, size])

    @tf.function
    def chain(x):
        for _ in range(iterations):
            x = tf.matmul(x, b) * 1e-3
        return x

    chain(a).numpy()
    return (lambda: chain(a).numpy()), matmul_chain_flops(size, iterations)


def matmul_peak_flops(size=1024, iterations=20, repeats=5):
    """Best float32 matmul FLOP/s of `size` x `size` products in a tf.function."""
    run, flops = matmul_chain(size, iterations)
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = max(best, flops / (time.perf_counter() - start))
    return best


# ----------------------------------------------------------------------------- t2t side
class StepTimer(tf.compat.v1.train.SessionRunHook):
    """Seconds from the end of step `warmup` to the end of the last step."""

    def __init__(self, warmup):
        self._warmup = warmup
        self.steps = 0
        self.first = self.last = None  # (a hook's `end` is a method: not used as a name)

    def after_run(self, run_context, run_values):
        self.steps += 1
        if self.steps == self._warmup:
            self.first = time.perf_counter()
        self.last = time.perf_counter()

    @property
    def seconds(self):
        return self.last - self.first


def t2t_hparams(hparams_set):
    hparams = registry.hparams(hparams_set)
    problem_hparams = model_hparams.test_problem_hparams(VOCAB, VOCAB)
    model_hparams.set_attribute(hparams, "problem_hparams", problem_hparams)
    return hparams


class OpProfileHook(tf.compat.v1.train.SessionRunHook):
    """Traces step `at_step` and sums the time of each op type over all devices."""

    def __init__(self, at_step):
        self._at_step = at_step
        self._steps = 0
        self.micros_by_type = {}

    def before_run(self, run_context):
        self._steps += 1
        if self._steps == self._at_step:
            return tf.compat.v1.train.SessionRunArgs(None, options=tf.compat.v1.RunOptions(
                trace_level=tf.compat.v1.RunOptions.FULL_TRACE))
        return None

    def after_run(self, run_context, run_values):
        if self._steps != self._at_step:
            return
        graph = run_context.session.graph
        for device in run_values.run_metadata.step_stats.dev_stats:
            for node in device.node_stats:
                name = node.node_name.split(":")[0]
                try:
                    op_type = graph.get_operation_by_name(name).type
                except (KeyError, ValueError):
                    op_type = node.timeline_label.split("=")[-1].split("(")[0].strip() or name
                micros = node.all_end_rel_micros
                self.micros_by_type[op_type] = self.micros_by_type.get(op_type, 0) + micros


def run_t2t(hparams_set, batch, args, use_xla=False, profile=False):
    """One round: a fresh estimator trains warmup + steps steps; returns timed seconds.

    With `profile`, one more step after the timed ones is traced: (seconds, params, profile).
    """
    inputs, targets = batch
    features = {"inputs": inputs[:, :, None, None], "targets": targets[:, :, None, None]}

    def input_fn(params=None, config=None):
        del params, config
        dataset = tf.data.Dataset.from_tensors((features, features["targets"]))
        return dataset.repeat()

    model_dir = tempfile.mkdtemp(prefix="bench_t2t_")
    config = trainer_lib.create_run_config(
        "transformer", model_dir=model_dir, save_checkpoints_steps=10 ** 9,
        keep_checkpoint_max=1, log_step_count_steps=10 ** 9)
    estimator = trainer_lib.create_estimator("transformer", t2t_hparams(hparams_set), config,
                                             use_xla=use_xla)
    timer = StepTimer(args.warmup)
    hooks = trainer_lib.create_hooks(log_step_count_steps=10 ** 9,
                                     model_name="transformer")[0] + [timer]
    estimator.train(input_fn, hooks=hooks, max_steps=args.warmup + args.steps)
    if not profile:
        return timer.seconds, checkpoint_params(model_dir)
    profiler = OpProfileHook(at_step=2)  # the first step of a resumed run warms up
    estimator.train(input_fn, hooks=[profiler], steps=2)
    return timer.seconds, checkpoint_params(model_dir), profiler.micros_by_type


def checkpoint_params(model_dir):
    """Model weights in the latest checkpoint (optimizer slots and counters left out)."""
    reader = tf.train.load_checkpoint(model_dir)
    return int(sum(np.prod(shape) for name, shape in reader.get_variable_to_shape_map().items()
                   if name.startswith("transformer/") and "Adam" not in name))


# ----------------------------------------------------------------------------- native side
def run_native(hparams_set, batch, args):
    """One round: fresh native train functions train warmup + steps steps; timed seconds."""
    inputs, targets = batch
    features = {"inputs": inputs[:, :, None, None], "targets": targets[:, :, None, None]}
    dataset = tf.data.Dataset.from_tensors((features, features["targets"])).repeat()
    functions = native_functions.NativeModelFunctions("transformer", t2t_hparams(hparams_set))
    functions.build(dataset.element_spec, dataset.element_spec)
    iterator = iter(dataset)
    first = None
    for step in range(1, args.warmup + args.steps + 1):
        loss, tokens, examples, _, global_step = functions.train_step(next(iterator))
        float(loss), int(tokens), int(examples), int(global_step)  # what the loop logs
        if step == args.warmup:
            first = time.perf_counter()
    return time.perf_counter() - first


# ----------------------------------------------------------------------------- paired steps
def padded_input(batch):
    """The batch through a real input pipeline's padded batching: batch and length unknown
    to the graph (as `Problem.input_fn` gives them), for both backends alike."""
    inputs, targets = batch
    examples = {"inputs": inputs[:, :, None, None], "targets": targets[:, :, None, None]}
    shapes = {"inputs": [None, 1, 1], "targets": [None, 1, 1]}
    dataset = tf.data.Dataset.from_tensor_slices(examples).repeat()
    dataset = dataset.padded_batch(len(inputs), padded_shapes=shapes)
    return dataset.map(lambda features: (features, features["targets"]))


def estimator_training_graph(hparams_set, batch, model_dir):
    """The Estimator's training graph (its model_fn on padded batches): (graph, spec,
    global step, estimator)."""
    config = trainer_lib.create_run_config(
        "transformer", model_dir=model_dir, save_checkpoints_steps=10 ** 9,
        keep_checkpoint_max=1, log_step_count_steps=10 ** 9)
    estimator = trainer_lib.create_estimator("transformer", t2t_hparams(hparams_set), config)
    graph = tf.Graph()
    with graph.as_default():
        global_step = tf.compat.v1.train.get_or_create_global_step()
        features, labels = tf.compat.v1.data.make_one_shot_iterator(
            padded_input(batch)).get_next()
        spec = estimator.model_fn(features, labels, tf.estimator.ModeKeys.TRAIN,
                                  estimator.config)
    return graph, spec, global_step, estimator


def run_paired(hparams_set, batch, args):
    """Seconds of each step of the Estimator's training graph (bare, and as
    `estimator.train` runs it) and of the native train step, taking turns step by step in
    one process ({"estimator": [...], "estimator_hooks": [...], "native": [...]}).

    "estimator" is the model_fn's graph in a plain session with the Estimator's session
    config: no hooks, so faster than `estimator.train`. "estimator_hooks" is the same graph
    in a MonitoredTrainingSession with the hooks `estimator.train` runs under t2t-trainer
    (t2t's step log, NanTensorHook, the loss logger, the step counter and summary saver
    every 100 steps): what a user of the Estimator backend gets. The native side reads the
    loss and counters back every step, as its trainer does. Taking turns puts every side
    under the same machine load: on a shared machine rounds of one side then another
    differ by more than the sides do. "matmul_peak" takes its turn too: one run of the
    peak's matmul chain, so each step's FLOP/s can be set against the matmul speed of the
    same moment (this machine's matmul peak moved between 156 and 239 GFLOP/s in one
    benchmark run).
    """
    graph, spec, global_step, estimator = estimator_training_graph(
        hparams_set, batch, tempfile.mkdtemp(prefix="bench_paired_"))
    with graph.as_default():
        initialize = tf.compat.v1.global_variables_initializer()
    session = tf.compat.v1.Session(graph=graph, config=estimator.config.session_config)
    session.run(initialize)
    fetches = [spec.train_op, spec.loss, global_step]

    hooked_dir = tempfile.mkdtemp(prefix="bench_paired_hooks_")
    hooked_graph, hooked_spec, hooked_step, _ = estimator_training_graph(
        hparams_set, batch, hooked_dir)
    with hooked_graph.as_default():
        hooks = (trainer_lib.create_hooks(log_step_count_steps=100,
                                          model_name="transformer")[0] +
                 [tf.compat.v1.train.NanTensorHook(hooked_spec.loss),
                  tf.compat.v1.train.LoggingTensorHook(
                      {"loss": hooked_spec.loss, "step": hooked_step}, every_n_iter=100)] +
                 list(hooked_spec.training_hooks))
        hooked_session = tf.compat.v1.train.MonitoredTrainingSession(
            checkpoint_dir=hooked_dir, hooks=hooks, save_checkpoint_secs=None,
            save_checkpoint_steps=None, save_summaries_steps=100, log_step_count_steps=100,
            config=estimator.config.session_config)

    dataset = padded_input(batch)
    functions = native_functions.NativeModelFunctions("transformer", t2t_hparams(hparams_set))
    functions.build(dataset.element_spec, dataset.element_spec)
    iterator = iter(dataset)

    def native_step():
        loss, tokens, examples, _, step = functions.train_step(next(iterator))
        float(loss), int(tokens), int(examples), int(step)  # what the loop logs

    sides = [("estimator", lambda: session.run(fetches)),
             ("estimator_hooks", lambda: hooked_session.run(hooked_spec.train_op)),
             ("native", native_step), ("matmul_peak", matmul_chain()[0])]
    seconds = {name: [] for name, _ in sides}
    for index in range(args.warmup + args.paired_steps):
        for name, step in sides[index % len(sides):] + sides[:index % len(sides)]:
            start = time.perf_counter()
            step()
            if index >= args.warmup:
                seconds[name].append(time.perf_counter() - start)
    session.close()
    hooked_session.close()
    return seconds


# ----------------------------------------------------------------------------- keras side
def timing_signal(length, channels):
    """T2T's sinusoid position signal [1, length, channels]."""
    position = np.arange(length, dtype=np.float64)
    num_timescales = channels // 2
    log_increment = math.log(1.0e4) / max(num_timescales - 1, 1)
    inv_timescales = np.exp(np.arange(num_timescales) * -log_increment)
    scaled = position[:, None] * inv_timescales[None, :]
    signal = np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1)
    return signal[None].astype(np.float32)


class TiedSoftmax(tf.keras.layers.Layer):
    """Logits with the embedding matrix as softmax weights (shared_embedding_and_softmax)."""

    def __init__(self, embedding, **kwargs):
        super().__init__(**kwargs)
        self._embedding = embedding

    def call(self, x):
        return tf.matmul(x, self._embedding.embeddings, transpose_b=True)


def keras_transformer(hparams, length):
    """Pre-norm encoder-decoder of the t2t hparams' sizes as a functional tf.keras model."""
    keras = tf.keras
    d, heads = hparams.hidden_size, hparams.num_heads
    drop = hparams.layer_prepostprocess_dropout
    inputs = keras.Input((length,), dtype="int32", name="inputs")
    targets = keras.Input((length,), dtype="int32", name="targets")
    embedding = keras.layers.Embedding(VOCAB, d)
    position = tf.constant(timing_signal(length, d))

    def embed(ids):
        return keras.layers.Dropout(drop)(embedding(ids) * math.sqrt(d) + position)

    def ffn(x):
        y = keras.layers.LayerNormalization(epsilon=1e-6)(x)
        y = keras.layers.Dense(hparams.filter_size, activation="relu")(y)
        y = keras.layers.Dropout(hparams.relu_dropout)(y)
        return x + keras.layers.Dropout(drop)(keras.layers.Dense(d)(y))

    def attention(x, memory=None, causal=False):
        y = keras.layers.LayerNormalization(epsilon=1e-6)(x)
        # T2T's attention projections have no biases.
        layer = keras.layers.MultiHeadAttention(heads, d // heads, use_bias=False,
                                                dropout=hparams.attention_dropout)
        memory = y if memory is None else memory
        return x + keras.layers.Dropout(drop)(layer(y, memory, use_causal_mask=causal))

    x = embed(inputs)
    for _ in range(hparams.num_hidden_layers):
        x = ffn(attention(x))
    encoded = keras.layers.LayerNormalization(epsilon=1e-6)(x)
    shifted = tf.pad(targets, [[0, 0], [1, 0]])[:, :-1]
    x = embed(shifted)
    for _ in range(hparams.num_hidden_layers):
        x = ffn(attention(attention(x, causal=True), memory=encoded))
    x = keras.layers.LayerNormalization(epsilon=1e-6)(x)
    logits = TiedSoftmax(embedding)(x)
    model = keras.Model([inputs, targets], logits)
    model.compile(optimizer=keras.optimizers.Adam(1e-3, beta_1=0.9, beta_2=0.997,
                                                  epsilon=1e-9),
                  loss=keras.losses.CategoricalCrossentropy(from_logits=True,
                                                            label_smoothing=0.1))
    return model


class BatchTimer(tf.keras.callbacks.Callback):
    def __init__(self, warmup):
        super().__init__()
        self._warmup = warmup

    def on_train_begin(self, logs=None):
        self.batches = 0
        self.first = self.last = None

    def on_train_batch_end(self, batch, logs=None):
        self.batches += 1
        if self.batches == self._warmup:
            self.first = time.perf_counter()
        self.last = time.perf_counter()

    @property
    def seconds(self):
        return self.last - self.first


def keras_dataset(batch):
    inputs, targets = batch
    labels = tf.one_hot(targets, VOCAB)
    return tf.data.Dataset.from_tensors(((inputs, targets), labels)).repeat()


def run_keras(model, dataset, args):
    timer = BatchTimer(args.warmup)
    model.fit(dataset, epochs=1, steps_per_epoch=args.warmup + args.steps, verbose=0,
              callbacks=[timer])
    return timer.seconds


# ----------------------------------------------------------------------------- main
def bench_one(hparams_set, args, peaks):
    batch = make_batch(args)
    hparams = registry.hparams(hparams_set)
    tokens_per_step = 2 * args.batch * args.length
    flops_per_step = 3 * forward_flops_per_step(hparams, args.batch, args.length)
    keras_model = keras_transformer(hparams, args.length)
    dataset = keras_dataset(batch)
    estimator = backend_choice.estimator_available()
    seconds = {"t2t": [], "t2t_xla": [], "native": [], "keras": []}
    if not estimator:
        del seconds["t2t"], seconds["t2t_xla"]
    profile, t2t_params = {}, None
    for round_index in range(args.rounds):
        peaks.append(matmul_peak_flops())
        if estimator:
            if round_index == 0:
                t2t_seconds, t2t_params, profile = run_t2t(hparams_set, batch, args,
                                                           profile=True)
            else:
                t2t_seconds, t2t_params = run_t2t(hparams_set, batch, args)
            seconds["t2t"].append(t2t_seconds)
        seconds["native"].append(run_native(hparams_set, batch, args))
        if estimator:
            seconds["t2t_xla"].append(run_t2t(hparams_set, batch, args, use_xla=True)[0])
        seconds["keras"].append(run_keras(keras_model, dataset, args))
    paired = run_paired(hparams_set, batch, args) if estimator and args.paired_steps else None
    total = float(sum(profile.values())) or 1.0
    top_ops = sorted(profile.items(), key=lambda item: -item[1])[:12]
    result = {"tokens_per_step": tokens_per_step, "train_flops_per_step": flops_per_step,
              "t2t_params": t2t_params, "keras_params": keras_model.count_params(),
              "seconds_all": seconds, "paired_step_seconds": paired,
              "t2t_top_ops": [{"op": op, "share_of_op_time": micros / total}
                              for op, micros in top_ops]}
    return result


def add_figures(result, args, peak):
    """Per side: median steps/s, tokens/s, model FLOP/s and the fraction of `peak`."""
    tokens_per_step = result["tokens_per_step"]
    flops_per_step = result["train_flops_per_step"]
    for side, values in result["seconds_all"].items():
        median = statistics.median(values)
        steps_per_sec = args.steps / median
        result[side] = {
            "steps_per_sec": steps_per_sec,
            "tokens_per_sec": steps_per_sec * tokens_per_step,
            "model_flops_per_sec": steps_per_sec * flops_per_step,
            "fraction_of_matmul_peak": steps_per_sec * flops_per_step / peak,
        }
    result["native_over_keras"] = (result["native"]["steps_per_sec"] /
                                   result["keras"]["steps_per_sec"])
    paired = result.get("paired_step_seconds")
    if paired:
        estimator, hooked, native = (statistics.median(paired[side]) for side in
                                     ("estimator", "estimator_hooks", "native"))
        result["paired"] = {"estimator_median_step_seconds": estimator,
                            "estimator_hooks_median_step_seconds": hooked,
                            "native_median_step_seconds": native,
                            "native_over_estimator": estimator / native,
                            "native_over_estimator_hooks": hooked / native,
                            "steps_each": len(paired["native"])}
        if paired.get("matmul_peak"):
            # Each step against the matmul chain run in the same turn; the median of those.
            chain_flops = matmul_chain_flops()
            for side in ("estimator", "estimator_hooks", "native"):
                result["paired"]["%s_fraction_of_matmul_peak" % side] = statistics.median(
                    (flops_per_step / step) / (chain_flops / chain)
                    for step, chain in zip(paired[side], paired["matmul_peak"]))
    if "t2t" in result:
        result["t2t_over_keras"] = (result["t2t"]["steps_per_sec"] /
                                    result["keras"]["steps_per_sec"])
        result["native_over_t2t"] = (result["native"]["steps_per_sec"] /
                                     result["t2t"]["steps_per_sec"])
        result["xla_on_over_off"] = (result["t2t_xla"]["steps_per_sec"] /
                                     result["t2t"]["steps_per_sec"])
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    # 64 x 32 inputs + 64 x 32 targets: 4,096 tokens a step, a realistic CPU batch.
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    # Native vs Estimator in alternating steps (0: leave out); where tf.estimator exists.
    parser.add_argument("--paired_steps", type=int, default=40)
    parser.add_argument("--hparams_sets", default=",".join(HPARAMS_SETS))
    args = parser.parse_args()
    logging.set_verbosity(logging.WARNING)
    tf.get_logger().setLevel("ERROR")

    peaks = [matmul_peak_flops()]
    models = {name: bench_one(name, args, peaks) for name in args.hparams_sets.split(",")}
    peak = max(peaks)
    print("float32 matmul peak: %.1f GFLOP/s (best of %d measurements, lowest %.1f)" % (
        peak / 1e9, len(peaks), min(peaks) / 1e9))
    results = {"config": vars(args), "tensorflow": tf.__version__,
               "python": platform.python_version(),
               "vocab_size": VOCAB, "cpu_count": os.cpu_count(),
               "matmul_peak_flops_per_sec": peak, "matmul_peak_measurements": peaks,
               "models": models}
    header = "%-18s %-7s %10s %12s %12s %10s" % ("hparams_set", "side", "steps/s", "tokens/s",
                                                  "GFLOP/s", "of peak")
    print(header)
    for hparams_set, result in models.items():
        add_figures(result, args, peak)
        for side in ("t2t", "t2t_xla", "native", "keras"):
            if side not in result:
                continue
            figures = result[side]
            print("%-18s %-7s %10.2f %12.0f %12.2f %9.1f%%" % (
                hparams_set, side, figures["steps_per_sec"], figures["tokens_per_sec"],
                figures["model_flops_per_sec"] / 1e9,
                100 * figures["fraction_of_matmul_peak"]))
        if "t2t" in result:
            print("%-18s native / Estimator throughput: %.2f; t2t / keras: %.2f (parameters: "
                  "t2t %d, keras %d); XLA on / off: %.2f" % (
                      hparams_set, result["native_over_t2t"], result["t2t_over_keras"],
                      result["t2t_params"], result["keras_params"], result["xla_on_over_off"]))
        if "paired" in result:
            paired = result["paired"]
            print("%-18s paired steps (%d each, taking turns, padded input): Estimator "
                  "graph %.0f ms, with estimator.train's hooks %.0f ms, native %.0f ms a "
                  "step; native / Estimator throughput: %.3f bare, %.3f with hooks" % (
                      hparams_set, paired["steps_each"],
                      1000 * paired["estimator_median_step_seconds"],
                      1000 * paired["estimator_hooks_median_step_seconds"],
                      1000 * paired["native_median_step_seconds"],
                      paired["native_over_estimator"],
                      paired["native_over_estimator_hooks"]))
            if "native_fraction_of_matmul_peak" in paired:
                print("%-18s paired fraction of the matmul peak (each step against the "
                      "matmul chain of its turn): Estimator %.1f%%, with hooks %.1f%%, "
                      "native %.1f%%" % (
                          hparams_set, 100 * paired["estimator_fraction_of_matmul_peak"],
                          100 * paired["estimator_hooks_fraction_of_matmul_peak"],
                          100 * paired["native_fraction_of_matmul_peak"]))
        print("%-18s native / keras throughput: %.2f" % (hparams_set,
                                                         result["native_over_keras"]))
        if not result["t2t_top_ops"]:
            continue
        print("%-18s top ops of a t2t step: %s" % (hparams_set, ", ".join(
            "%s %.0f%%" % (entry["op"], 100 * entry["share_of_op_time"])
            for entry in result["t2t_top_ops"][:8])))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    # Each stack keeps its own figures: the Estimator stack's file has every side.
    name = ("training.json" if backend_choice.estimator_available() else
            "training_tf%s.json" % ".".join(tf.__version__.split(".")[:2]))
    out_path = os.path.join(HERE, "results", name)
    with open(out_path, "w") as out:
        json.dump(results, out, indent=2)
    print("wrote %s" % out_path)


if __name__ == "__main__":
    main()
