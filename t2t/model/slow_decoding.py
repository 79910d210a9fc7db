"""Generic autoregressive decoding for any T2TModel: re-run the whole model every step.

Both decoders work for every model whose body reads shifted targets (Transformer, LSTM,
...); each step costs a full forward pass over the prefix, so decoding n positions is
O(n^2). Models with a cache (the Transformer's fast decoding) override
`T2TModel._greedy_infer` / `_beam_decode` instead.

    model = registry.model("transformer")(hp, ModeKeys.PREDICT, p_hp)
    out = slow_greedy_infer(model, {"inputs": ids}, decode_length=5)   # ids [2, 4, 1, 1]
    out["outputs"].shape     # [2, <=9] int32: at most input length + decode_length
    out["scores"].shape      # [2]: log-probability of each output, up to its first EOS
    out = beam_decode_slow(model, {"inputs": ids}, 5, beam_size=3, top_beams=2, alpha=0.6)
    out["outputs"].shape     # [2, 2, <=10]; out["scores"].shape == [2, 2]
"""
import tensorflow as tf

from t2t.encoders.text_encoder import EOS_ID
from t2t.layers import common_layers
from t2t.layers import modalities
from t2t.layers import shape_utils
from t2t.search import beam_search

# Features that describe each example's input: copied once per beam in beam search.
_BEAM_CLONED_PREFIXES = ("inputs", "knowledge")


def _to_4d(x):
    """[B, L] or [B, L, 1] -> [B, L, 1, 1]."""
    while x.shape.ndims < 4:
        x = tf.expand_dims(x, axis=-1)
    return x


def _is_class_label(modality):
    return "class_label" in modality


def _partial_targets(model, features):
    """The prefix the decoder continues, [B, P, 1, 1] int32, or None.

    Models without inputs continue a prompt; models with inputs continue
    features["partial_targets"] when given (prepend_mode's "inputs 0", as T2T).
    """
    if model.has_input:
        partial_targets = features.get("partial_targets")
        return None if partial_targets is None else tf.cast(_to_4d(partial_targets),
                                                            tf.int32)
    prompt = features.get("inputs")
    if prompt is None:
        prompt = features.get("targets")
    if prompt is None:
        raise ValueError("decoding a model without inputs needs a prompt: ids in "
                         "features['inputs'] or features['targets'] (length may be 0)")
    return tf.cast(_to_4d(prompt), tf.int32)


def _top_is_pointwise(model):
    modality = model.problem_hparams.modality["targets"]
    top = model.hparams.top.get("targets", modalities.get_top(modality))
    return getattr(top, "pointwise", False)


def slow_greedy_infer(model, features, decode_length):
    """Greedy (or sampled, per `hparams.sampling_method`) decoding in a tf.while_loop.

    Each step pads the outputs so far with one position, runs the model on them as
    "targets" and appends the sample at that position. Decoding stops after
    input-length (or prefix-length) + `decode_length` positions (1 for class labels) or,
    when the problem sets `stop_at_eos`, once every row has produced EOS. A prefix (a
    prompt, or `partial_targets`) is forced and left out of the outputs.

    Returns {"outputs": int32 [B, L], 0 after a row's first EOS, as the fast decoders
    (real targets: float [B, L, 1, depth]), "scores": float [B], "logits": logits of every
    decoded position, "losses"}.
    """
    features = dict(features)
    if "inputs" in features:
        features["inputs"] = _to_4d(features["inputs"])
    p_hparams = model.problem_hparams
    is_real = model.target_modality_is_real
    vocab_size = model.padded_vocab_size("targets")
    partial_targets = _partial_targets(model, features)

    if partial_targets is not None:
        initial_output = partial_targets
        prefix_length = shape_utils.shape_list(partial_targets)[1]
        batch_size = shape_utils.shape_list(partial_targets)[0]
    else:
        inputs_shape = shape_utils.shape_list(features["inputs"])
        batch_size, prefix_length = inputs_shape[0], inputs_shape[1]
        if is_real:
            initial_output = tf.zeros((batch_size, 0, 1, vocab_size), dtype=tf.float32)
        else:
            initial_output = tf.zeros((batch_size, 0, 1, 1), dtype=tf.int32)
    if is_real and partial_targets is not None:
        raise ValueError("a prompt (partial targets) cannot be continued with real-valued "
                         "targets; give the model inputs instead")
    if _is_class_label(p_hparams.modality["targets"]):
        max_length = 1
    else:
        max_length = prefix_length + decode_length

    if is_real:
        initial_logits = tf.zeros((batch_size, 0, 1, vocab_size))
        logits_invariant = tf.TensorShape([None, None, None, None])
    else:
        initial_logits = tf.zeros((batch_size, 0, 1, 1, vocab_size))
        logits_invariant = tf.TensorShape([None, None, None, None, None])
    stop_at_eos = bool(p_hparams.get("stop_at_eos")) and not is_real

    def infer_step(result, logits, finished, scores, unused_loss):
        step_features = dict(features)
        result.set_shape([None, None, None, vocab_size if is_real else 1])
        step_features["targets"] = tf.pad(result, [[0, 0], [0, 1], [0, 0], [0, 0]])
        samples, step_logits, losses = model.sample(step_features)
        # The padded position is the last one; pointwise tops return only that one.
        cur_logits = step_logits[:, -1:]
        if is_real:
            cur_sample = samples[:, -1:]
        else:
            cur_sample = tf.cast(samples[:, -1:], tf.int32)
            cur_ids = tf.reshape(cur_sample, [batch_size])
            log_probs = common_layers.log_prob_from_logits(
                tf.reshape(cur_logits, [batch_size, -1]))
            chosen = tf.gather(log_probs, cur_ids, batch_dims=1)
            scores += chosen * (1.0 - tf.cast(finished, tf.float32))
            finished = tf.logical_or(finished, tf.equal(cur_ids, EOS_ID))
        result = tf.concat([result, cur_sample], axis=1)
        logits = tf.concat([logits, cur_logits], axis=1)
        loss = tf.add_n([tf.cast(l, tf.float32) for l in losses.values()
                         if l is not None] + [tf.constant(0.0)])
        return result, logits, finished, scores, loss

    def not_done(result, unused_logits, finished, unused_scores, unused_loss):
        not_overflow = shape_utils.shape_list(result)[1] < max_length
        if stop_at_eos:
            # T2T stopped early only for batch size 1; here when every row has hit EOS.
            return tf.logical_and(not_overflow,
                                  tf.logical_not(tf.reduce_all(finished)))
        return not_overflow

    loop_vars = [initial_output, initial_logits, tf.zeros([batch_size], dtype=tf.bool),
                 tf.zeros([batch_size]), tf.constant(0.0)]
    result, logits, _, scores, loss = tf.compat.v1.while_loop(
        not_done, infer_step, loop_vars,
        shape_invariants=[tf.TensorShape([None, None, None, None]), logits_invariant,
                          tf.TensorShape([None]), tf.TensorShape([None]),
                          tf.TensorShape([])],
        back_prop=False, parallel_iterations=1)

    if partial_targets is not None:
        result = result[:, prefix_length:]
    if not is_real:
        result = _zeros_after_eos(tf.squeeze(result, axis=[2, 3]))
    return {"outputs": result, "scores": scores, "logits": logits,
            "losses": {"training": loss}}


def _zeros_after_eos(ids):
    """[B, L] ids with 0 after each row's first EOS, as the fast (cached) decoders give."""
    seen_eos = tf.cumsum(tf.cast(tf.equal(ids, EOS_ID), tf.int32), axis=1, exclusive=True)
    return tf.where(seen_eos > 0, tf.zeros_like(ids), ids)


def _clone_for_beam(tensor, beam_size):
    """[B, ...] -> [B * beam_size, ...], each example repeated beam_size times in a row."""
    shape = shape_utils.shape_list(tensor)
    tiled = tf.tile(tf.expand_dims(tensor, 1), [1, beam_size] + [1] * (len(shape) - 1))
    return tf.reshape(tiled, [shape[0] * beam_size] + shape[1:])


def beam_decode_slow(model, features, decode_length, beam_size, top_beams, alpha,
                     use_tpu=False):
    """Beam search (`t2t.search.beam_search`) re-running the model on every beam.

    Returns {"outputs": int32 [B, L] (top_beams == 1) or [B, top_beams, L],
    "scores": [B] or [B, top_beams]: length-penalised log-probabilities}.
    """
    features = dict(features)
    if "inputs" in features:
        features["inputs"] = _to_4d(features["inputs"])
    partial_targets = _partial_targets(model, features)
    if partial_targets is not None:
        batch_size = shape_utils.shape_list(partial_targets)[0]
        beam_partial_targets = _clone_for_beam(partial_targets, beam_size)
    else:
        batch_size = shape_utils.shape_list(features["inputs"])[0]
        # The output may be as long as the input plus decode_length.
        decode_length = shape_utils.shape_list(features["inputs"])[1] + decode_length

    beam_features = dict(features)
    for name, value in features.items():
        if name.startswith(_BEAM_CLONED_PREFIXES) and isinstance(value, tf.Tensor):
            if value.shape.ndims and value.shape.ndims >= 1:
                beam_features[name] = _clone_for_beam(value, beam_size)
    pointwise = _top_is_pointwise(model)
    vocab_size = model.padded_vocab_size("targets")

    def symbols_to_logits_fn(ids, i=None):
        """ids [B * beam, t] (starting with the initial 0) -> logits [B * beam, vocab].

        With use_tpu the ids are a fixed buffer, 0 after position i; position i is decoded.
        """
        targets = _to_4d(ids[:, 1:])
        # One padded position: the model's output there predicts the next id.
        targets = tf.pad(targets, [[0, 0], [0, 1], [0, 0], [0, 0]])
        prefix = 0
        if partial_targets is not None:
            targets = tf.concat([beam_partial_targets, targets], axis=1)
            prefix = shape_utils.shape_list(beam_partial_targets)[1]
        step_features = dict(beam_features)
        step_features["targets"] = targets
        fixed_buffer = use_tpu and i is not None
        if fixed_buffer:
            step_features["decode_loop_step"] = prefix + i
        logits, _ = model(step_features)
        if not pointwise:
            logits = logits[:, prefix + i:prefix + i + 1] if fixed_buffer else logits[:, -1:]
        return tf.reshape(logits, [-1, vocab_size])

    initial_ids = tf.zeros([batch_size], dtype=tf.int32)
    ids, scores, _ = beam_search.beam_search(
        symbols_to_logits_fn, initial_ids, beam_size, decode_length, vocab_size, alpha,
        stop_early=(top_beams == 1), use_tpu=use_tpu, stopping_bound=model.stopping_bound)
    if top_beams == 1:
        return {"outputs": ids[:, 0, 1:], "scores": scores[:, 0]}
    return {"outputs": ids[:, :top_beams, 1:], "scores": scores[:, :top_beams]}
