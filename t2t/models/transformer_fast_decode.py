"""Fast (cached) Transformer decoding: encode once, then one decoder position per step.

T2T's `fast_decode`: the encoder runs once; each decoder layer's encoder-decoder keys and
values are projected once (`k_encdec` / `v_encdec`); each layer keeps the self-attention
keys and values of the positions decoded so far (`k` / `v`, [B, heads, i, d/heads]), so a
step embeds only the newest id and runs the decoder on one position:

    model = registry.model("transformer")(hp, ModeKeys.PREDICT, p_hp)
    out = transformer_fast_decode(model, {"inputs": ids}, decode_length=5)  # ids [2, 4, 1, 1]
    out["outputs"].shape    # [2, <=9] int32 (input length + 5 at most); 0s after EOS
    out["scores"].shape     # [2]: log-probability of each output up to its first EOS
    out = transformer_fast_decode(model, {"inputs": ids}, 5, beam_size=4, top_beams=2,
                                  alpha=0.6)
    out["outputs"].shape    # [2, 2, <=10]; out["scores"].shape == [2, 2]

The outputs equal those of the generic slow loops (`t2t.model.slow_decoding`), which
re-run the whole model each step, up to and including each row's first EOS.
`Transformer._fast_decode` calls `transformer_fast_decode`; configurations a one-position
step cannot reproduce (non-causal decoders, convolutional feed-forward layers, prepended
inputs, real or class-label targets) fall back to the slow loops.
"""
import functools

import tensorflow as tf
from absl import logging

from t2t.layers import common_attention
from t2t.layers import common_layers
from t2t.layers import loop_invariants
from t2t.layers import modalities
from t2t.layers import shape_utils
from t2t.optim import optimize as optimize_lib
from t2t.search import beam_search
from t2t.search import live_rows
from t2t.search import sampling

_v1 = tf.compat.v1

# Feed-forward layers that look at one position only (a step needs no history of them).
_POSITIONWISE_FFN_LAYERS = ("dense_relu_dense", "conv_hidden_relu", "parameter_attention",
                            "none")


def _to_4d(x):
    """[B, L] or [B, L, 1] -> [B, L, 1, 1]."""
    while x.shape.ndims < 4:
        x = tf.expand_dims(x, axis=-1)
    return x


def fast_decode_unsupported_reason(model):
    """Why `model` cannot decode with the cache (a short phrase), or None when it can.

        fast_decode_unsupported_reason(transformer_model)            # None
        # with hparams.ffn_layer = "conv_relu_conv":
        # "ffn_layer 'conv_relu_conv' mixes positions"
    """
    hparams = model.hparams
    p_hparams = model.problem_hparams
    target_modality = p_hparams.modality["targets"]
    if "class_label" in target_modality or model.target_modality_is_real:
        return "targets of modality %r are not generated token by token" % target_modality
    if hparams.self_attention_type not in ("dot_product", "dot_product_relative"):
        return "self_attention_type %r has no cache" % hparams.self_attention_type
    if not hparams.get("causal_decoder_self_attention", True):
        return "the decoder self-attention is not causal"
    if hparams.get("prepend_mode", "none") not in ("none", None, ""):
        return "prepend_mode %r attends to the inputs inside the targets" % hparams.prepend_mode
    if hparams.get("ffn_layer", "dense_relu_dense") not in _POSITIONWISE_FFN_LAYERS:
        return "ffn_layer %r mixes positions" % hparams.ffn_layer
    if hparams.get("pos", "timing") not in ("timing", "emb", "none", None, ""):
        return "pos %r is not supported" % hparams.pos
    return None


def _init_transformer_cache(cache, hparams, batch_size, attention_init_length, encoder_output,
                            encoder_decoder_attention_bias, scope_prefix):
    """Per-layer decoding caches, as T2T's function of the same name.

    Args:
      cache: a dict to fill (or None for a new one).
      hparams: model hparams (hidden_size, num_heads, layer counts, attention channels).
      batch_size: int or scalar tensor.
      attention_init_length: initial cached length (0: the cache grows one position per
        step).
      encoder_output: [B, L, d] or None for decoder-only models.
      encoder_decoder_attention_bias: [B, 1, 1, L] or None.
      scope_prefix: variable scope of the body inside the model scope ("body/").

    Returns:
      {"layer_<i>": {"k", "v": [B, heads, attention_init_length, d/heads],
                     "k_encdec", "v_encdec": [B, heads, L, d/heads] (with an encoder)},
       "encoder_output", "encoder_decoder_attention_bias" (with an encoder)}.

        cache = _init_transformer_cache(None, hp, 2, 0, enc_out, enc_bias, "body/")
        cache["layer_0"]["k"].shape          # [2, 4, 0, 32] for hidden 128, 4 heads
    """
    key_channels = hparams.attention_key_channels or hparams.hidden_size
    value_channels = hparams.attention_value_channels or hparams.hidden_size
    num_layers = hparams.get("num_decoder_layers") or hparams.num_hidden_layers
    vars_3d_num_heads = hparams.num_heads if hparams.get("attention_variables_3d") else 0
    cache = {} if cache is None else cache
    for layer in range(num_layers):
        cache["layer_%d" % layer] = {
            "k": common_attention.split_heads(
                tf.zeros([batch_size, attention_init_length, key_channels]), hparams.num_heads),
            "v": common_attention.split_heads(
                tf.zeros([batch_size, attention_init_length, value_channels]),
                hparams.num_heads),
        }
    if encoder_output is None:
        return cache
    for layer in range(num_layers):
        layer_name = "layer_%d" % layer
        # The scope of the decoder layer's encoder-decoder attention: the same variables.
        scope = "%sdecoder/%s/encdec_attention/multihead_attention" % (scope_prefix,
                                                                       layer_name)
        with _v1.variable_scope(scope):
            k_encdec = common_attention.compute_attention_component(
                encoder_output, key_channels, name="k", vars_3d_num_heads=vars_3d_num_heads)
            v_encdec = common_attention.compute_attention_component(
                encoder_output, value_channels, name="v", vars_3d_num_heads=vars_3d_num_heads)
        cache[layer_name]["k_encdec"] = common_attention.split_heads(k_encdec,
                                                                     hparams.num_heads)
        cache[layer_name]["v_encdec"] = common_attention.split_heads(v_encdec,
                                                                     hparams.num_heads)
    cache["encoder_output"] = encoder_output
    cache["encoder_decoder_attention_bias"] = encoder_decoder_attention_bias
    return cache


def fast_decode(encoder_output, encoder_decoder_attention_bias, symbols_to_logits_fn, hparams,
                decode_length, vocab_size, init_cache_fn=_init_transformer_cache, beam_size=1,
                top_beams=1, alpha=1.0, sos_id=0, eos_id=beam_search.EOS_ID, batch_size=None,
                force_decode_length=False, scope_prefix="body/", cache=None, use_tpu=False,
                prefix_length=0, drop_finished=True, stopping_bound="max_length"):
    """Greedy/sampled or beam decoding with a per-layer cache (T2T's `fast_decode`).

    Args:
      encoder_output: [B, L, d] or None (decoder-only; then give `batch_size`).
      encoder_decoder_attention_bias: [B, 1, 1, L] or None.
      symbols_to_logits_fn: `(ids [B', i + 1], i, cache) -> (logits [B', vocab], cache)`.
      hparams: model hparams; `sampling_method` "random" samples with `sampling_temp`
        among the `sampling_keep_top_k` best ids, otherwise greedy takes the argmax.
      decode_length: maximum number of generated ids (int or scalar tensor).
      vocab_size: size of the logits' last dimension.
      init_cache_fn: builds the cache (see `_init_transformer_cache`).
      beam_size, top_beams, alpha: beam search with beam_size > 1 (length penalty alpha).
      sos_id: the start id fed at step 0. eos_id: the id that ends a sequence.
      batch_size: needed when there is no encoder output.
      force_decode_length: greedy decoding runs all `decode_length` steps (no EOS stop).
      scope_prefix: the body's variable scope inside the model scope.
      cache: an initial dict for `init_cache_fn` to fill.
      use_tpu: beam search with fixed-size sequence buffers.
      prefix_length: steps of a prompt that `symbols_to_logits_fn` forces: an EOS there
        (a PrefixLM prompt ends with its inputs' EOS) does not end the sequence.
      drop_finished: remove a batch element from the loop state (cache, encoder output,
        beams) once its search is done: beam search's bound met, greedy's EOS emitted
        (`beam_search.beam_search`, `sampling.sample_decode`); not with `use_tpu`, when
        sampling, with `force_decode_length`, or for a batch of one. The same search in
        exact arithmetic; the remaining elements' scores can differ by rounding.
      stopping_bound: when a beam search ends, "max_length" (T2T's) or "current_length"
        (`beam_search.beam_search`).

    Returns:
      {"outputs": int32 [B, n] (greedy, top_beams == 1) or [B, top_beams, n],
       "scores": [B] (greedy: log-probability; beam: length-penalised) or [B, top_beams],
       "cache": the final cache (with drop_finished, of the elements not done at the
       end)}. Greedy rows hold 0s after their EOS.
    """
    if encoder_output is not None:
        batch_size = shape_utils.shape_list(encoder_output)[0]
    if batch_size is None:
        raise ValueError("fast_decode without an encoder output needs batch_size")
    cache = init_cache_fn(cache=cache, hparams=hparams, batch_size=batch_size,
                          attention_init_length=0, encoder_output=encoder_output,
                          encoder_decoder_attention_bias=encoder_decoder_attention_bias,
                          scope_prefix=scope_prefix)
    states, constants = _split_cache(cache)
    temperature = hparams.sampling_temp if hparams.get("sampling_method") == "random" else 0.0
    drop_finished = bool(drop_finished and not use_tpu and live_rows.worth_dropping(batch_size)
                         and (beam_size > 1 or (temperature == 0.0
                                                and not force_decode_length)))
    # The encoder side never changes while decoding (and is the same for all beams of an
    # example): it stays out of the loop state, copied once per beam instead of being
    # carried and reordered at every step. When finished elements are dropped, the search
    # carries it and gathers it in the steps where some element leaves.

    def step_fn(ids, i, step_states, step_constants):
        logits, step_cache = symbols_to_logits_fn(ids, i,
                                                  _merge_cache(step_states, step_constants))
        return logits, _split_cache(step_cache)[0]

    initial_ids = sos_id * tf.ones([batch_size], dtype=tf.int32)
    if beam_size > 1:
        decoded_ids, scores, states = beam_search.beam_search(
            step_fn, initial_ids, beam_size, decode_length, vocab_size, alpha,
            states=states, eos_id=eos_id, stop_early=(top_beams == 1), use_tpu=use_tpu,
            prefix_length=prefix_length, drop_finished=drop_finished, constants=constants,
            stopping_bound=stopping_bound)
        cache = _merge_cache(states, {} if drop_finished else constants)
        if top_beams == 1:
            return {"outputs": decoded_ids[:, 0, 1:], "scores": scores[:, 0], "cache": cache}
        return {"outputs": decoded_ids[:, :top_beams, 1:], "scores": scores[:, :top_beams],
                "cache": cache}
    top_k = hparams.get("sampling_keep_top_k", -1)
    # An id that never occurs keeps every row going for force_decode_length.
    loop_eos_id = -1 if force_decode_length else eos_id
    decoded_ids, scores, states = sampling.sample_decode(
        step_fn, initial_ids, decode_length, temperature=temperature,
        top_k=top_k, eos_id=loop_eos_id, states=states, prefix_length=prefix_length,
        drop_finished=drop_finished, constants=constants)
    return {"outputs": decoded_ids[:, 1:], "scores": scores,
            "cache": _merge_cache(states, {} if drop_finished else constants)}


def _static_length(decode_length):
    value = tf.get_static_value(decode_length) if tf.is_tensor(decode_length) else decode_length
    if value is None:
        raise ValueError("fixed-shape (TPU) decoding needs a decode length known when the "
                         "graph is built (a static input length and decode_length); got %s"
                         % (decode_length,))
    return int(value)


def fast_decode_tpu(encoder_output, encoder_decoder_attention_bias, symbols_to_logits_fn,
                    hparams, decode_length, vocab_size, init_cache_fn=_init_transformer_cache,
                    beam_size=1, top_beams=1, alpha=1.0, sos_id=0, eos_id=beam_search.EOS_ID,
                    batch_size=None, force_decode_length=False, scope_prefix="body/",
                    use_top_k_with_unique=True, cache=None, prefix_length=0,
                    stopping_bound="max_length"):
    """`fast_decode` with every shape fixed when the graph is built (T2T's fast_decode_tpu).

    The cache is preallocated: each layer's "k" / "v" is [B, heads, decode_length, d/heads]
    of zeros, and step i writes position i (`decode_loop_step`); the self-attention bias
    masks the positions not written yet. The loop state never changes shape, which is what
    XLA (TPUs) needs; on CPU/GPU it runs too, giving the same ids as `fast_decode`.

    Args:
      symbols_to_logits_fn: `(ids [B', 1] (the last id), i, cache) -> (logits [B', vocab],
        cache)`; it must write position i of the cache.
      decode_length: a Python int (or a tensor with a static value).
      The others as `fast_decode`.

    Returns:
      {"outputs": int32 [B, decode_length] (greedy, top_beams == 1) or [B, top_beams,
       decode_length], 0 after each row's EOS; "scores": [B] or [B, top_beams];
       "cache": the final cache}.
    """
    decode_length = _static_length(decode_length)
    if encoder_output is not None:
        batch_size = shape_utils.shape_list(encoder_output)[0]
    if batch_size is None:
        raise ValueError("fast_decode_tpu without an encoder output needs batch_size")
    cache = init_cache_fn(cache=cache, hparams=hparams, batch_size=batch_size,
                          attention_init_length=decode_length, encoder_output=encoder_output,
                          encoder_decoder_attention_bias=encoder_decoder_attention_bias,
                          scope_prefix=scope_prefix)
    states, constants = _split_cache(cache)
    constants = tf.nest.map_structure(lambda t: _repeat_rows(t, max(beam_size, 1)), constants)

    def step_fn(ids, i, step_states):
        logits, step_cache = symbols_to_logits_fn(ids[:, -1:], i,
                                                  _merge_cache(step_states, constants))
        return logits, _split_cache(step_cache)[0]

    initial_ids = sos_id * tf.ones([batch_size], dtype=tf.int32)
    if beam_size > 1:
        decoded_ids, scores, states = beam_search.beam_search(
            step_fn, initial_ids, beam_size, decode_length, vocab_size, alpha, states=states,
            eos_id=eos_id, stop_early=(top_beams == 1), use_tpu=True,
            use_top_k_with_unique=use_top_k_with_unique, fixed_states=True,
            prefix_length=prefix_length, stopping_bound=stopping_bound)
        cache = _merge_cache(states, constants)
        if top_beams == 1:
            return {"outputs": decoded_ids[:, 0, 1:], "scores": scores[:, 0], "cache": cache}
        return {"outputs": decoded_ids[:, :top_beams, 1:], "scores": scores[:, :top_beams],
                "cache": cache}
    temperature = hparams.sampling_temp if hparams.get("sampling_method") == "random" else 0.0
    top_k = hparams.get("sampling_keep_top_k", -1)

    def inner_loop(i, finished, last_ids, decoded_ids, step_states, log_prob):
        logits, step_states = step_fn(last_ids, i, step_states)
        logits = tf.cast(tf.reshape(logits, [batch_size, vocab_size]), tf.float32)
        next_ids = tf.cast(common_layers.sample_with_temperature(logits, temperature, top_k),
                           tf.int32)
        chosen = tf.gather(beam_search.log_prob_from_logits(logits), next_ids, batch_dims=1)
        # The log-probabilities count up to and including each row's first EOS.
        log_prob += tf.where(finished, tf.zeros_like(chosen), chosen)
        next_ids = tf.where(finished, tf.zeros_like(next_ids), next_ids)
        if not force_decode_length:
            finished = tf.logical_or(finished, tf.logical_and(tf.equal(next_ids, eos_id),
                                                              i >= prefix_length))
        mask = tf.one_hot(i, decode_length, dtype=tf.int32)
        decoded_ids = decoded_ids * (1 - mask) + tf.expand_dims(next_ids, 1) * mask
        return i + 1, finished, tf.expand_dims(next_ids, 1), decoded_ids, step_states, log_prob

    def not_finished(i, finished, *unused):
        return tf.logical_and(tf.less(i, decode_length),
                              tf.logical_not(tf.reduce_all(finished)))

    loop_vars = [tf.constant(0), tf.zeros([batch_size], tf.bool),
                 tf.reshape(initial_ids, [batch_size, 1]),
                 tf.zeros([batch_size, decode_length], tf.int32), states,
                 tf.zeros([batch_size], tf.float32)]
    _, _, _, decoded_ids, states, log_prob = tf.compat.v1.while_loop(
        not_finished, inner_loop, loop_vars,
        shape_invariants=tf.nest.map_structure(lambda t: t.shape, loop_vars),
        parallel_iterations=1, back_prop=False)
    return {"outputs": decoded_ids, "scores": log_prob,
            "cache": _merge_cache(states, constants)}


# Cache entries computed once from the encoder output; everything else grows each step.
_CONSTANT_CACHE_KEYS = ("encoder_output", "encoder_decoder_attention_bias", "k_encdec",
                        "v_encdec")


def _split_cache(cache):
    """(growing entries, constant entries) of a (nested) cache dict.

        _split_cache({"layer_0": {"k": k, "k_encdec": ke}, "encoder_output": e})
        # ({"layer_0": {"k": k}}, {"layer_0": {"k_encdec": ke}, "encoder_output": e})
    """
    growing, constant = {}, {}
    for key, value in cache.items():
        if isinstance(value, dict):
            growing[key], constant_part = _split_cache(value)
            if constant_part:
                constant[key] = constant_part
        elif key in _CONSTANT_CACHE_KEYS:
            constant[key] = value
        else:
            growing[key] = value
    return growing, constant


def _merge_cache(growing, constant):
    """Inverse of `_split_cache`, as new dicts (decoding layers update them in place)."""
    merged = {}
    for key in set(growing) | set(constant):
        if isinstance(growing.get(key, constant.get(key)), dict):
            merged[key] = _merge_cache(growing.get(key, {}), constant.get(key, {}))
        else:
            merged[key] = growing[key] if key in growing else constant[key]
    return merged


def _repeat_rows(tensor, times):
    """[B, ...] -> [B * times, ...], each row repeated `times` times in a row (beam order)."""
    if times == 1:
        return tensor
    return tf.repeat(tensor, times, axis=0)


def _targets_scope_name(model):
    """The variable scope T2TModel.bottom uses for the "targets" feature."""
    modality_name = model.modality_name("targets")
    target_names = model.target_modality_names()
    return modality_name if len(target_names) == 1 else "%s/targets" % modality_name


def _embed_inputs(model, inputs):
    """Input ids [B, L, 1, 1] -> [B, L, 1, d] with the inputs modality's bottom."""
    p_hparams = model.problem_hparams
    modality = p_hparams.modality["inputs"]
    bottom = model.hparams.bottom.get("inputs", modalities.get_bottom(modality))
    with _v1.variable_scope(model.modality_name("inputs")):
        return bottom(inputs, model.hparams, model.padded_vocab_size("inputs"))


def _embed_targets(model, targets):
    """Target ids [B, 1, 1, 1] -> [B, 1, 1, d] with the targets modality's targets_bottom."""
    modality = model.problem_hparams.modality["targets"]
    bottom = model.hparams.bottom.get("targets", modalities.get_targets_bottom(modality))
    with _v1.variable_scope(_targets_scope_name(model)):
        return bottom(targets, model.hparams, model.padded_vocab_size("targets"))


def _positional_encoding(hparams, length):
    """[1, length, d] position signal of the decoder input, or None for pos "none"."""
    pos = hparams.get("pos", "timing")
    if pos == "timing":
        return common_attention.get_timing_signal_1d(length, hparams.hidden_size)
    if pos == "emb":
        with _v1.variable_scope("body"):
            return common_attention.add_positional_embedding(
                tf.zeros([1, length, hparams.hidden_size]), hparams.max_length,
                "targets_positional_embedding", None)
    return None


def transformer_fast_decode(model, features, decode_length, beam_size=1, top_beams=1,
                            alpha=1.0, use_tpu=False, drop_finished=True,
                            stopping_bound="max_length"):
    """`Transformer._fast_decode`: cached decoding of `model` (a built or fresh Transformer).

    Args:
      model: a Transformer (PREDICT mode) with problem hparams; its `_init_cache_fn` (as
        in T2T) builds the cache its decoder reads.
      features: {"inputs": int [B, L(, 1, 1)]}; decoder-only models take the prompt in
        "inputs" (or "targets"). An int "decode_length" feature overrides decode_length.
      decode_length: ids to decode beyond the input (or prompt) length.
      beam_size, top_beams, alpha: as `T2TModel.infer`.
      use_tpu: fixed shapes throughout (`fast_decode_tpu`, T2T's `_fast_decode_tpu`): the
        outputs are input length + decode_length long, 0 after EOS. That needs the input
        length and decode_length when the graph is built; without them only the beam
        search buffers are fixed (the cache grows).
      drop_finished: `fast_decode`'s (off for a prompt, which the step reads per row of
        the input batch).
      stopping_bound: when a beam search ends (`fast_decode`'s).

    Returns:
      {"outputs", "scores"} as the slow decoders (prompt positions removed).
    """
    reason = fast_decode_unsupported_reason(model)
    if reason is not None:
        logging.info("Fast decoding unavailable (%s); using the slow decoder.", reason)
        if beam_size > 1:
            return model.beam_decode_slow(features, decode_length, beam_size, top_beams,
                                           alpha, use_tpu)
        return model.slow_greedy_infer(features, decode_length)

    hparams = model.hparams
    features = dict(features)
    model.fill_problem_hparams_features(features)
    extra_length = features.get("decode_length", decode_length)
    # As T2TModel.call: the first build creates the variables, later ones reuse them.
    reuse = True if model.variables_exist() else None
    initializer = optimize_lib.get_variable_initializer(hparams)
    # The sharded embedding / softmax matrix is put together once, outside the decoding
    # loop, not twice a step.
    with _v1.variable_scope(model.name, reuse=reuse, use_resource=True,
                            initializer=initializer), \
            loop_invariants.hoisting_into(_v1.get_default_graph()):
        partial_targets = None
        if model.has_input:
            inputs = _to_4d(tf.cast(features["inputs"], tf.int32))
            features["inputs"] = inputs
            batch_size, input_length = shape_utils.shape_list(inputs)[:2]
            total_length = input_length + extra_length
            embedded = _embed_inputs(model, inputs)
            with _v1.variable_scope("body"):
                encoder_output, encoder_decoder_attention_bias = model.encode(
                    embedded, features.get("target_space_id"), hparams, features=features)
        else:
            encoder_output, encoder_decoder_attention_bias = None, None
            prompt = features.get("inputs")
            if prompt is None:
                prompt = features.get("targets")
            if prompt is None:
                raise ValueError("decoding a model without inputs needs a prompt: ids in "
                                 "features['inputs'] or features['targets'] (length may be 0)")
            partial_targets = tf.reshape(tf.cast(prompt, tf.int32),
                                         shape_utils.shape_list(prompt)[:2])
            batch_size, partial_length = shape_utils.shape_list(partial_targets)
            total_length = partial_length + extra_length

        fixed = bool(use_tpu)
        if fixed:
            try:
                total_length = _static_length(total_length)
            except ValueError:
                # Lengths known only at run time (CPU/GPU placeholders): fixed-size
                # sequence buffers for beam search, a growing cache.
                logging.info("Decode length not static; decoding with a growing cache.")
                fixed = False
        positional_encoding = _positional_encoding(hparams, total_length + 1)
        self_attention_bias = common_attention.attention_bias_lower_triangle(total_length)
        if hparams.get("proximity_bias"):
            self_attention_bias += common_attention.attention_bias_proximal(total_length)
        vocab_size = model.padded_vocab_size("targets")

        def symbols_to_logits_fn(ids, i, cache):
            """ids [B', i + 1] (the start id first) -> logits [B', vocab] for position i."""
            targets = _to_4d(ids[:, -1:])
            targets = shape_utils.flatten4d3d(_embed_targets(model, targets))
            # Position 0 sees the all-zero "shifted" input, as in training.
            targets *= tf.cast(tf.greater(i, 0), targets.dtype)
            if positional_encoding is not None:
                signal = tf.slice(positional_encoding, [0, i, 0], [1, 1, -1])
                targets += shape_utils.cast_like(signal, targets)
            if fixed:
                # The whole preallocated cache, its unwritten positions masked.
                bias = tf.slice(self_attention_bias, [0, 0, i, 0], [1, 1, 1, total_length])
            else:
                bias = self_attention_bias[:, :, i:i + 1, :i + 1]
            with _v1.variable_scope("body"):
                body_output = model.decode(
                    targets, cache.get("encoder_output"),
                    cache.get("encoder_decoder_attention_bias"), bias, hparams, cache=cache,
                    decode_loop_step=i if fixed else None)
            logits = model.top(body_output, {})
            logits = tf.reshape(logits, [-1, vocab_size])
            if partial_targets is not None:
                # Inside the prompt, the prompt's id is the only choice.
                beams = shape_utils.shape_list(logits)[0] // batch_size
                unforced = logits

                def forced():
                    # Rows are batch-major ([batch * beam]): repeat each prompt `beams` times.
                    forced_ids = tf.repeat(partial_targets[:, i], beams)
                    return tf.one_hot(forced_ids, vocab_size, 0.0, -1e9, dtype=unforced.dtype)

                logits = tf.cond(tf.less(i, partial_length), forced, lambda: unforced)
            return logits, cache

        decode_fn = fast_decode_tpu if fixed else functools.partial(
            fast_decode, use_tpu=use_tpu,
            drop_finished=drop_finished and partial_targets is None)
        result = decode_fn(
            encoder_output, encoder_decoder_attention_bias, symbols_to_logits_fn, hparams,
            total_length, vocab_size, init_cache_fn=model._init_cache_fn,
            beam_size=beam_size, top_beams=top_beams, alpha=alpha,
            batch_size=batch_size,
            force_decode_length=bool(hparams.get("force_decode_length", False)),
            prefix_length=0 if partial_targets is None else partial_length,
            stopping_bound=stopping_bound)
    result.pop("cache")
    if partial_targets is not None:
        if beam_size > 1 and top_beams > 1:
            result["outputs"] = result["outputs"][:, :, partial_length:]
        else:
            result["outputs"] = result["outputs"][:, partial_length:]
    return result
