"""The Universal Transformer's recurrence in depth (T2T 1.15.7's universal_transformer_util).

One block (self-attention, [encoder-decoder attention,] feed-forward) is applied
`num_rec_steps` times with the same weights; before each step the state gets a position
and a step (depth) timing signal. `hparams.recurrence_type` says how steps combine:

- "basic": state <- block(state)
- "highway": state <- carry * state + transform * block(state) (gates from the inputs)
- "skip": like highway, but carrying the first step's input instead of the state
- "dwa": depth-wise attention over all earlier states, then the block
- "gru" / "lstm": a GRU / LSTM cell over depth whose input is the attended state
- "act": adaptive computation time: each position halts when its summed halting
  probability passes 1 - act_epsilon (at most act_max_steps steps); the output mixes the
  states by their halting weights and (ponder_times, remainders) feed the ponder loss.

    encoder_output, extra = universal_transformer_encoder(x, bias, hparams)   # [B, L, d]

Variables keep T2T's names: `<scope>/universal_transformer_<type>/rec_layer_0/
self_attention/multihead_attention/q/kernel`, `.../layer_embedding` (the learned step
signal), `.../sigmoid_activation_for_pondering/dense/kernel` (ACT's halting unit).
"""
import copy
import dataclasses
import functools

import tensorflow as tf

from t2t.layers import common_attention
from t2t.layers import expert_utils
from t2t.layers import common_layers
from t2t.layers import conv_layers
from t2t.layers import recurrent
from t2t.layers import shape_utils
from t2t.layers.attention_config import MultiheadAttentionConfig
from t2t.models import transformer

_v1 = tf.compat.v1

RECURRENCE_TYPES = ("basic", "highway", "skip", "dwa", "gru", "lstm", "act")
ACT_TYPES = ("basic", "global", "random", "accumulated")


def _dropout_dims(hparams):
    return common_layers.comma_separated_string_to_integer_list(
        hparams.get("attention_dropout_broadcast_dims") or "")


def _ffn_units_and_attention(hparams, attention_unit_fn, ffn_unit_fn, nonpadding, pad_remover,
                             save_weights_to, make_image_summary, **attention_args):
    ffn_kwargs = {"pad_remover": pad_remover} if pad_remover is not None else {}
    ffn_unit = functools.partial(ffn_unit_fn, hparams=hparams, nonpadding_mask=nonpadding,
                                 **ffn_kwargs)
    attention_unit = functools.partial(
        attention_unit_fn, hparams=hparams,
        attention_dropout_broadcast_dims=_dropout_dims(hparams),
        save_weights_to=save_weights_to, make_image_summary=make_image_summary,
        **attention_args)
    return ffn_unit, attention_unit


def universal_transformer_encoder(encoder_input, encoder_self_attention_bias, hparams,
                                  name="encoder", nonpadding=None, save_weights_to=None,
                                  make_image_summary=True, losses=None,
                                  attn_bias_for_padding=None):
    """The recurrent encoder: [B, L, d] -> ([B, L, d], extra output).

    The extra output is (ponder_times, remainders) [B, L] for "act", the last memory for
    the others. `losses` is accepted (and unused) so `transformer.transformer_encode` can
    call this as its encoder function.
    """
    del losses
    with _v1.variable_scope(name):
        if nonpadding is not None:
            padding = 1.0 - nonpadding
        else:
            padding = common_attention.attention_bias_to_padding(
                encoder_self_attention_bias if attn_bias_for_padding is None
                else attn_bias_for_padding)
            nonpadding = 1.0 - padding
        pad_remover = None
        if hparams.use_pad_remover and not common_layers.is_xla_compiled():
            pad_remover = expert_utils.PadRemover(padding)
        ffn_unit, attention_unit = _ffn_units_and_attention(
            hparams, transformer_encoder_attention_unit, transformer_encoder_ffn_unit,
            nonpadding, pad_remover, save_weights_to, make_image_summary,
            encoder_self_attention_bias=encoder_self_attention_bias)
        x, extra_output = universal_transformer_layer(encoder_input, hparams, ffn_unit,
                                                      attention_unit, pad_remover=pad_remover)
        return common_layers.layer_preprocess(x, hparams), extra_output


def universal_transformer_decoder(decoder_input, encoder_output, decoder_self_attention_bias,
                                  encoder_decoder_attention_bias, hparams, name="decoder",
                                  nonpadding=None, save_weights_to=None,
                                  make_image_summary=True):
    """The recurrent decoder: [B, L, d] -> ([B, L, d], extra output); see the encoder."""
    with _v1.variable_scope(name):
        ffn_unit, attention_unit = _ffn_units_and_attention(
            hparams, transformer_decoder_attention_unit, transformer_decoder_ffn_unit,
            nonpadding, None, save_weights_to, make_image_summary,
            encoder_output=encoder_output,
            decoder_self_attention_bias=decoder_self_attention_bias,
            encoder_decoder_attention_bias=encoder_decoder_attention_bias)
        x, extra_output = universal_transformer_layer(decoder_input, hparams, ffn_unit,
                                                      attention_unit)
        return common_layers.layer_preprocess(x, hparams), extra_output


def universal_transformer_layer(x, hparams, ffn_unit, attention_unit, pad_remover=None):
    """All recurrent steps (scope `universal_transformer_<type>`), with the vanilla
    Transformer layers `mix_with_transformer` puts "before_ut" and/or "after_ut".

    Returns (output, extra output: (ponder_times, remainders) for ACT, else the memory).
    """
    def vanilla_layers(x, prefix):
        if hparams.add_position_timing_signal:
            # hparams.pos is None (each step adds positions), so these layers add their own.
            x = common_attention.add_timing_signal_1d(x)
        for layer in range(hparams.num_mixedin_layers):
            with _v1.variable_scope(prefix + "layer_%d" % layer):
                x = ffn_unit(attention_unit(x))
        return x

    mix = hparams.get("mix_with_transformer") or ""
    if hparams.recurrence_type not in RECURRENCE_TYPES:
        raise ValueError("unknown hparams.recurrence_type %r; use one of %s" % (
            hparams.recurrence_type, ", ".join(RECURRENCE_TYPES)))
    with _v1.variable_scope("universal_transformer_%s" % hparams.recurrence_type):
        if "before_ut" in mix:
            x = vanilla_layers(x, "before_ut_")
        if hparams.recurrence_type == "act":
            output, extra_output = universal_transformer_act(x, hparams, ffn_unit,
                                                             attention_unit)
        else:
            ut_function, initializer = get_ut_layer(x, hparams, ffn_unit, attention_unit,
                                                    pad_remover)
            output, _, extra_output = tf.foldl(ut_function, tf.range(hparams.num_rec_steps),
                                               initializer=initializer)
            if hparams.recurrence_type == "lstm" and hparams.get("use_memory_as_final_state"):
                output = extra_output
        if "after_ut" in mix:
            output = vanilla_layers(output, "after_ut_")
        return output, extra_output


def get_ut_layer(x, hparams, ffn_unit, attention_unit, pad_remover=None):
    """(step function for tf.foldl, its initial (state, inputs, memory)) for the
    fixed-step recurrence types."""
    recurrence = hparams.recurrence_type
    functions = {
        "basic": universal_transformer_basic,
        "highway": functools.partial(universal_transformer_highway, pad_remover=pad_remover),
        "skip": functools.partial(universal_transformer_skip, pad_remover=pad_remover),
        "dwa": universal_transformer_depthwise_attention,
        "gru": functools.partial(universal_transformer_with_gru_as_transition_function,
                                 pad_remover=pad_remover),
        "lstm": functools.partial(universal_transformer_with_lstm_as_transition_function,
                                  pad_remover=pad_remover),
    }
    if recurrence not in functions:
        raise ValueError("unknown recurrence type %r for a fixed number of steps; use one of "
                         "%s" % (recurrence, ", ".join(sorted(functions))))
    memory = x
    if recurrence == "dwa":
        # Slot 0 holds the input, slot s + 1 the output of step s.
        memory = fill_memory_slot(
            tf.zeros([hparams.num_rec_steps + 1] + shape_utils.shape_list(x)), x, 0)
    elif recurrence == "lstm":
        memory = tf.zeros(shape_utils.shape_list(x))
    ut_function = functools.partial(functions[recurrence], hparams=hparams, ffn_unit=ffn_unit,
                                    attention_unit=attention_unit)
    return ut_function, (x, x, memory)


# ---------------------------------------------------------------------------- units
def transformer_encoder_ffn_unit(x, hparams, nonpadding_mask=None, pad_remover=None):
    """Scope "ffn": x + the Transformer's feed-forward block (pre/post-processed)."""
    return _ffn_unit(x, hparams, "SAME", nonpadding_mask, pad_remover)


def transformer_decoder_ffn_unit(x, hparams, nonpadding_mask=None):
    """Scope "ffn": the decoder's feed-forward block (left padding for convolutions)."""
    return _ffn_unit(x, hparams, "LEFT", nonpadding_mask, None)


def _ffn_unit(x, hparams, conv_padding, nonpadding_mask, pad_remover):
    """"fc": the Transformer's feed-forward block; "sepconv": separable convolutions of
    widths 3 then 5 over the positions (left-padded in the decoder, so causal)."""
    ffn_type = hparams.transformer_ffn_type
    if ffn_type not in ("fc", "sepconv"):
        raise ValueError("unknown hparams.transformer_ffn_type %r; use 'fc' or 'sepconv'"
                         % ffn_type)
    with _v1.variable_scope("ffn"):
        x_in = common_layers.layer_preprocess(x, hparams)
        if ffn_type == "fc":
            y = transformer.transformer_ffn_layer(
                x_in, hparams, pad_remover, conv_padding=conv_padding,
                nonpadding_mask=nonpadding_mask)
        else:
            y = conv_layers.sepconv_relu_sepconv(
                x_in, filter_size=hparams.filter_size, output_size=hparams.hidden_size,
                first_kernel_size=(3, 1), second_kernel_size=(5, 1), padding=conv_padding,
                nonpadding_mask=nonpadding_mask, dropout=hparams.relu_dropout)
        return common_layers.layer_postprocess(x, y, hparams)


def _attention(x, memory, bias, config, hparams, scope, save_weights_to):
    with _v1.variable_scope(scope):
        y = common_attention.multihead_attention_with_config(
            common_layers.layer_preprocess(x, hparams), memory, bias, config,
            save_weights_to=save_weights_to)
        return common_layers.layer_postprocess(x, y, hparams)


def _attention_config(hparams, attention_dropout_broadcast_dims, make_image_summary):
    # T2T's units passed neither 3-D variables nor Gumbel noise: 2-D q/k/v/output kernels.
    return MultiheadAttentionConfig.from_hparams(
        hparams, make_image_summary=make_image_summary,
        dropout_broadcast_dims=tuple(attention_dropout_broadcast_dims or ()) or None,
        vars_3d=False, gumbel_noise_weight=0.0)


def transformer_encoder_attention_unit(x, hparams, encoder_self_attention_bias,
                                       attention_dropout_broadcast_dims, save_weights_to=None,
                                       make_image_summary=True):
    """Scope "self_attention": x + multi-head self-attention (pre/post-processed)."""
    config = _attention_config(hparams, attention_dropout_broadcast_dims, make_image_summary)
    return _attention(x, None, encoder_self_attention_bias, config, hparams, "self_attention",
                      save_weights_to)


def transformer_decoder_attention_unit(x, hparams, encoder_output, decoder_self_attention_bias,
                                       encoder_decoder_attention_bias,
                                       attention_dropout_broadcast_dims, save_weights_to=None,
                                       make_image_summary=True):
    """Causal self-attention, then (with an encoder output) "encdec_attention"."""
    config = _attention_config(hparams, attention_dropout_broadcast_dims, make_image_summary)
    x = _attention(x, None, decoder_self_attention_bias, config, hparams, "self_attention",
                   save_weights_to)
    if encoder_output is not None:
        x = _attention(x, encoder_output, encoder_decoder_attention_bias,
                       dataclasses.replace(config, attention_type="dot_product"), hparams,
                       "encdec_attention", save_weights_to)
    return x


# ---------------------------------------------------------------------------- steps
def _recurrent_block(state, hparams, ffn_unit, attention_unit):
    """The shared block, `num_inrecurrence_layers` times (scopes rec_layer_<i>)."""
    for i in range(hparams.num_inrecurrence_layers):
        with _v1.variable_scope("rec_layer_%d" % i):
            state = ffn_unit(attention_unit(state))
    return state


def universal_transformer_basic(layer_inputs, step, hparams, ffn_unit, attention_unit):
    """state <- block(step_preprocess(state)): a Transformer with weights shared by depth."""
    state, inputs, memory = layer_inputs
    new_state = _recurrent_block(step_preprocess(state, step, hparams), hparams, ffn_unit,
                                 attention_unit)
    return new_state, inputs, memory


def _gated_step(layer_inputs, step, hparams, ffn_unit, attention_unit, pad_remover, carried):
    """new = carried * carry + block(state) * transform; gates from hparams.gates_inputs
    ("s" state, "t" transformed state, "i" first input; default "i")."""
    state, inputs, memory = layer_inputs
    transformed = _recurrent_block(step_preprocess(state, step, hparams), hparams, ffn_unit,
                                   attention_unit)
    gates_inputs = hparams.get("gates_inputs") or "i"
    gate_inputs = [tensor for key, tensor in (("s", state), ("t", transformed), ("i", inputs))
                   if key in gates_inputs]

    def gate(name, bias):
        return _ffn_layer_multi_inputs(
            list(gate_inputs), hparams, ffn_layer_type=hparams.gate_ffn_layer, name=name,
            bias_initializer=_v1.constant_initializer(bias), activation=tf.sigmoid,
            pad_remover=pad_remover, preprocess=True)

    transform_gate = gate("transform", hparams.transform_bias_init)
    if hparams.couple_carry_transform_gates:
        carry_gate = tf.subtract(1.0, transform_gate, name="carry")
    else:
        carry_gate = gate("carry", -hparams.transform_bias_init)
    carried = state if carried == "state" else inputs
    return carried * carry_gate + transformed * transform_gate, inputs, memory


def universal_transformer_highway(layer_inputs, step, hparams, ffn_unit, attention_unit,
                                  pad_remover=None):
    """A highway connection around the block: the state is carried."""
    return _gated_step(layer_inputs, step, hparams, ffn_unit, attention_unit, pad_remover,
                       "state")


def universal_transformer_skip(layer_inputs, step, hparams, ffn_unit, attention_unit,
                               pad_remover=None):
    """A skip-all connection around the block: the first step's input is carried."""
    return _gated_step(layer_inputs, step, hparams, ffn_unit, attention_unit, pad_remover,
                       "inputs")


def universal_transformer_depthwise_attention(layer_inputs, step, hparams, ffn_unit,
                                              attention_unit):
    """The block applied to an attention-weighted sum of the input and every earlier state.

    memory [num_rec_steps + 1, B, L, d]: slot 0 the input, slot s + 1 step s's output;
    weights (per element with dwa_elements, else per state) are normalised over depth.
    """
    _, inputs, memory = layer_inputs
    all_states = add_depth_embedding(memory) if hparams.depth_embedding else memory
    # T2T took all_states[:step] (step 0 saw nothing, step s not step s - 1's output) and
    # normalised over channels; here: every state so far, normalised over the steps.
    states_so_far = all_states[:step + 1, :, :, :]
    weights = tf.nn.softmax(
        common_layers.dense(states_so_far,
                            hparams.hidden_size if hparams.dwa_elements else 1,
                            activation=None, use_bias=True), axis=0)
    state = tf.reduce_sum(states_so_far * weights, axis=0)
    new_state = _recurrent_block(step_preprocess(state, step, hparams), hparams, ffn_unit,
                                 attention_unit)
    return new_state, inputs, fill_memory_slot(memory, new_state, step + 1)


def _gate(inputs, hparams, name, bias, activation, pad_remover):
    initializer = (_v1.zeros_initializer() if bias == 0.0 else
                   _v1.constant_initializer(bias))
    return _ffn_layer_multi_inputs(list(inputs), hparams, name=name,
                                   bias_initializer=initializer, activation=activation,
                                   pad_remover=pad_remover)


def _transition_input(state, step, hparams, ffn_unit, attention_unit, what):
    if hparams.add_step_timing_signal:
        raise ValueError("recurrence_type %r counts the steps itself; set "
                         "hparams.add_step_timing_signal=False" % what)
    x = attention_unit(step_preprocess(state, step, hparams))
    if hparams.add_ffn_unit_to_the_transition_function:
        x = ffn_unit(x)
    return common_layers.layer_preprocess(x, hparams)


def universal_transformer_with_gru_as_transition_function(layer_inputs, step, hparams,
                                                          ffn_unit, attention_unit,
                                                          pad_remover=None):
    """A GRU over depth (scope "gru": update, reset, candidate) fed the attended state."""
    state, inputs, memory = layer_inputs
    x = _transition_input(state, step, hparams, ffn_unit, attention_unit, "gru")
    with _v1.variable_scope("gru"):
        update = _gate([x, state], hparams, "update", 1.0, tf.sigmoid, pad_remover)
        reset = _gate([x, state], hparams, "reset", 1.0, tf.sigmoid, pad_remover)
        candidate = _gate([x, reset * state], hparams, "candidate", 0.0, tf.tanh,
                          pad_remover)
        output = (1 - update) * x + update * candidate
    return common_layers.layer_preprocess(output, hparams), inputs, memory


def universal_transformer_with_lstm_as_transition_function(layer_inputs, step, hparams,
                                                           ffn_unit, attention_unit,
                                                           pad_remover=None):
    """An LSTM over depth (scope "lstm": input, forget, output, input_modulation)."""
    state, inputs, memory = layer_inputs
    x = _transition_input(state, step, hparams, ffn_unit, attention_unit, "lstm")
    with _v1.variable_scope("lstm"):
        input_gate = _gate([x, state], hparams, "input", 0.0, tf.sigmoid, pad_remover)
        forget_gate = tf.sigmoid(
            _gate([x, state], hparams, "forget", 0.0, None, pad_remover) +
            hparams.lstm_forget_bias)
        output_gate = _gate([x, state], hparams, "output", 0.0, tf.sigmoid, pad_remover)
        modulation = _gate([x, state], hparams, "input_modulation", 0.0, tf.tanh,
                           pad_remover)
        memory = memory * forget_gate + input_gate * modulation
        output = tf.tanh(memory) * output_gate
    return common_layers.layer_preprocess(output, hparams), inputs, memory


def universal_transformer_act(x, hparams, ffn_unit, attention_unit):
    """Adaptive computation time: -> (output [B, L, d], (ponder_times, remainders)).

    Per position (per example for act_type "global"), each step adds the halting
    probability p (a sigmoid unit; uniform noise for "random") until the sum would pass
    1 - act_epsilon; that step gets the remainder 1 - sum instead, so the weights of a
    halted position sum to 1. ponder_times counts the steps (1..act_max_steps). The output
    is the weighted blend of the step outputs ("accumulated": their weighted sum).
    """
    if hparams.act_type not in ACT_TYPES:
        raise ValueError("unknown hparams.act_type %r; use one of %s" % (
            hparams.act_type, ", ".join(ACT_TYPES)))
    act_max_steps = hparams.act_max_steps
    threshold = 1.0 - hparams.act_epsilon
    static_shape = x.get_shape()
    per = slice(0, 1) if hparams.act_type == "global" else slice(0, 2)
    update_shape = tf.shape(x)[per]

    def step_fn(state, step, halting_probability, remainders, n_updates, previous_state):
        state = step_preprocess(state, step, hparams)
        if hparams.act_type == "random":
            p = tf.random.uniform(shape_utils.shape_list(halting_probability))
        else:
            with _v1.variable_scope("sigmoid_activation_for_pondering"):
                p = common_layers.dense(
                    state, 1, activation=tf.nn.sigmoid, use_bias=True,
                    bias_initializer=_v1.constant_initializer(hparams.act_halting_bias_init))
                if hparams.act_type == "global":
                    p = tf.reduce_mean(p, axis=1)
                p = tf.squeeze(p, axis=-1)
        running = tf.cast(tf.less(halting_probability, 1.0), tf.float32)
        total = halting_probability + p * running
        new_halted = tf.cast(tf.greater(total, threshold), tf.float32) * running
        running = tf.cast(tf.less_equal(total, threshold), tf.float32) * running
        halting_probability += p * running
        remainders += new_halted * (1 - halting_probability)
        halting_probability += new_halted * remainders
        n_updates += running + new_halted
        update_weights = tf.expand_dims(p * running + new_halted * remainders, -1)
        if hparams.act_type == "global":
            update_weights = tf.expand_dims(update_weights, -1)
        transformed = _recurrent_block(state, hparams, ffn_unit, attention_unit)
        if hparams.act_type == "accumulated":
            new_state = transformed * update_weights + previous_state
        else:
            new_state = transformed * update_weights + previous_state * (1 - update_weights)
        transformed.set_shape(static_shape)
        new_state.set_shape(static_shape)
        for tensor in (halting_probability, remainders, n_updates):
            tensor.set_shape(static_shape[per])
        return transformed, step + 1, halting_probability, remainders, n_updates, new_state

    def should_continue(unused_state, unused_step, halting_probability, unused_remainders,
                        n_updates, unused_new_state):
        return tf.reduce_any(tf.logical_and(tf.less(halting_probability, threshold),
                                            tf.less(n_updates, act_max_steps)))

    zeros = tf.zeros(update_shape)
    loop_vars = (x, tf.constant(0, dtype=tf.int32), tf.identity(zeros, "halting_probability"),
                 tf.identity(zeros, "remainder"), tf.identity(zeros, "n_updates"),
                 tf.zeros_like(x, name="previous_state"))
    _, _, _, remainders, ponder_times, new_state = _v1.while_loop(
        should_continue, step_fn, loop_vars, maximum_iterations=act_max_steps + 1)
    if common_layers.should_generate_summaries():
        _v1.summary.scalar("ponder_times", tf.reduce_mean(ponder_times))
    return new_state, (ponder_times, remainders)


# ---------------------------------------------------------------------------- helpers
def _ffn_layer_multi_inputs(inputs_list, hparams, output_size=None, ffn_layer_type="dense",
                            name="ffn", kernel_initializer=None, bias_initializer=None,
                            activation=None, pad_remover=None, preprocess=False,
                            postprocess=False):
    """One dense ("dense") or dense-relu-dense layer on the concatenated inputs (all shaped
    like the first), padding positions skipped with a pad_remover; optionally each input
    pre-processed and the output post-processed (with a residual for one input)."""
    if not inputs_list:
        raise ValueError("_ffn_layer_multi_inputs needs at least one input")
    if preprocess:
        inputs_list = [common_layers.layer_preprocess(x, hparams) for x in inputs_list]
    main_input = inputs_list[0]
    original_shape = shape_utils.shape_list(main_input)
    if pad_remover:
        inputs_list = [tf.expand_dims(pad_remover.remove(
            tf.reshape(x, tf.concat([[-1], shape_utils.shape_list(x)[2:]], axis=0))), axis=0)
            for x in inputs_list]
    ffn_inputs = inputs_list[0] if len(inputs_list) == 1 else tf.concat(inputs_list, -1)
    units = hparams.hidden_size if output_size is None else output_size
    if ffn_layer_type == "dense":
        output = common_layers.dense(ffn_inputs, units, name=name, activation=activation,
                                     use_bias=True, kernel_initializer=kernel_initializer,
                                     bias_initializer=bias_initializer)
    elif ffn_layer_type == "dense_relu_dense":
        output = common_layers.dense_relu_dense(ffn_inputs, hparams.filter_size, units,
                                                name=name, dropout=hparams.relu_dropout,
                                                output_activation=activation)
    elif ffn_layer_type == "dense_dropconnect":
        output = common_layers.dense_dropconnect(
            ffn_inputs, units, name=name, activation=activation,
            dropconnect_dropout=hparams.get("dropconnect_dropout", 0.0))
        postprocess = False  # as T2T: the dropped kernel is the unit's dropout
    else:
        raise ValueError("unknown ffn_layer_type %r; use dense, dense_relu_dense or "
                         "dense_dropconnect" % ffn_layer_type)
    if pad_remover:
        output = tf.reshape(pad_remover.restore(tf.squeeze(output, axis=0)), original_shape)
    if postprocess:
        if len(inputs_list) == 1:
            return common_layers.layer_postprocess(main_input, output, hparams)
        # Several inputs: dropout only, no residual.
        hp = copy.copy(hparams)
        hp.layer_postprocess_sequence = hp.layer_postprocess_sequence.replace("a", "")
        return common_layers.layer_postprocess(None, output, hp)
    return output


def fill_memory_slot(memory, value, index):
    """memory [slots, B, L, d] with slot `index` replaced by value [B, L, d]."""
    mask = tf.cast(tf.one_hot(index, tf.shape(memory)[0]), memory.dtype)[:, None, None, None]
    return (1 - mask) * memory + mask * value[None, ...]


def add_depth_embedding(x):
    """x [steps, B, L, d] + a learned embedding per step (variable `depth_embedding`)."""
    num_steps, depth = shape_utils.shape_list(x)[0], shape_utils.shape_list(x)[-1]
    embedding = _v1.get_variable(
        "depth_embedding", [num_steps, 1, 1, depth],
        initializer=_v1.random_normal_initializer(0, depth ** -0.5)) * (depth ** 0.5)
    return x + embedding


def _num_steps(hparams):
    return hparams.act_max_steps if hparams.recurrence_type == "act" else hparams.num_rec_steps


def step_preprocess(x, step, hparams):
    """Before each step: position and step timing signals (added, or concatenated and
    projected back to the depth of x by a bias-free dense)."""
    depth = shape_utils.shape_list(x)[-1]
    if hparams.add_position_timing_signal:
        x = add_position_timing_signal(x, step, hparams)
    if hparams.add_step_timing_signal:
        x = add_step_timing_signal(x, step, hparams)
    if hparams.add_position_timing_signal and hparams.add_or_concat_timing_signal == "concat":
        x = common_layers.dense(x, depth, activation=None, use_bias=False)
    if hparams.add_sru:
        x = recurrent.sru(x)
    return x


def _add_or_concat(x, signal, hparams):
    mode = hparams.add_or_concat_timing_signal
    if mode == "add":
        return x + shape_utils.cast_like(signal, x)
    if mode == "concat":
        shape = shape_utils.shape_list(x)
        tiles = [shape[0], 1, 1] if signal.shape[1] != 1 else [shape[0], shape[1], 1]
        return tf.concat([x, tf.tile(shape_utils.cast_like(signal, x), tiles)], axis=-1)
    raise ValueError("unknown hparams.add_or_concat_timing_signal %r; use add or concat"
                     % mode)


def add_position_timing_signal(x, step, hparams):
    """x [B, L, d] + sinusoids of the positions, from index 0, a random shift
    (position_start_index "random") or L * step / num_steps ("step")."""
    length, channels = shape_utils.shape_list(x)[1], shape_utils.shape_list(x)[2]
    start = hparams.position_start_index
    if not start:
        index = 0
    elif start == "random":
        index = tf.random.uniform([], maxval=length, dtype=tf.int32)
    elif start == "step":
        index = (length * step) // _num_steps(hparams)
    else:
        raise ValueError("unknown hparams.position_start_index %r; use None, random or step"
                         % start)
    signal = common_attention.get_timing_signal_1d(length, channels, start_index=index)
    return _add_or_concat(x, signal, hparams)


def add_step_timing_signal(x, step, hparams):
    """x [B, L, d] + the step's timing signal ("learned" embedding or "sinusoid")."""
    channels = shape_utils.shape_list(x)[-1]
    kind = hparams.step_timing_signal_type
    if kind == "learned":
        signal = common_attention.get_layer_timing_signal_learned_1d(channels, step,
                                                                     _num_steps(hparams))
    elif kind == "sinusoid":
        signal = common_attention.get_layer_timing_signal_sinusoid_1d(channels, step,
                                                                      _num_steps(hparams))
    else:
        raise ValueError("unknown hparams.step_timing_signal_type %r; use learned or "
                         "sinusoid" % kind)
    return _add_or_concat(x, signal, hparams)
