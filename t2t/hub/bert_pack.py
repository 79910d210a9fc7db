"""BERT input packing in TensorFlow ops: round-robin truncation and [CLS] A [SEP] B [SEP].

What TF Hub's `preprocessor.bert_pack_inputs` does (and Model Garden's BertPackInputs with
its default RoundRobinTrimmer), with core TensorFlow ops only (no tensorflow_text):

    a = tf.ragged.constant([[7, 8, 9, 10, 11], [7]])
    b = tf.ragged.constant([[20, 21, 22], [20, 21]])
    out = bert_pack_inputs([a, b], seq_length=8, start_id=2, end_id=3, pad_id=0)
    out["input_word_ids"]   # [[2, 7, 8, 9, 3, 20, 21, 3],  budget 8 - 3 = 5: A keeps 3, B 2
                            #  [2, 7, 3, 20, 21, 3, 0, 0]]
    out["input_type_ids"]   # [[0, 0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1, 0, 0]]
    out["input_mask"]       # [[1, 1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 0, 0]]

All outputs are int32 [batch, seq_length]. Segments are cut to a total budget of
seq_length - (number of segments + 1) tokens, one token from each segment in turn (the
first segment gets the odd one); a segment shorter than its share gives the rest to the
other. Padding positions get pad_id, type id 0 and mask 0.
"""
import tensorflow as tf

MAX_SEGMENTS = 2


def _flat_segment(segment):
    """A RaggedTensor [B, (...)] of ids -> int32 RaggedTensor [B, (tokens)]."""
    if not isinstance(segment, tf.RaggedTensor):
        raise TypeError("bert_pack_inputs takes RaggedTensors of token ids (the output of "
                        "preprocessor.tokenize), not %s" % type(segment).__name__)
    if segment.ragged_rank > 1:
        segment = segment.merge_dims(1, -1)
    return tf.cast(segment, tf.int32)


def round_robin_lengths(lengths, budget):
    """Per row, how many tokens each of 1 or 2 segments keeps; lengths: int32 [B] each.

        round_robin_lengths([[10], [2]], 6)   # [[4], [2]]
        round_robin_lengths([[10], [10]], 5)  # [[3], [2]]
    """
    if not 1 <= len(lengths) <= MAX_SEGMENTS:
        raise ValueError("bert_pack_inputs packs 1 or 2 segments, got %d" % len(lengths))
    budget = tf.maximum(tf.cast(budget, tf.int32), 0)
    if len(lengths) == 1:
        return [tf.minimum(lengths[0], budget)]
    first, second = lengths
    keep_first = tf.minimum(first, tf.maximum((budget + 1) // 2, budget - second))
    keep_second = tf.minimum(second, budget - keep_first)
    return [keep_first, keep_second]


def _trim(segment, keep):
    """Keep the first keep[i] tokens of row i of a ragged [B, (n)]."""
    positions = tf.ragged.range(tf.cast(segment.row_lengths(), tf.int32))
    return tf.ragged.boolean_mask(segment, positions < keep[:, tf.newaxis])


def _to_dense(ragged, seq_length, static_length, default_value):
    dense = ragged.to_tensor(default_value)[:, :seq_length]
    padding = seq_length - tf.shape(dense)[1]
    dense = tf.pad(dense, [[0, 0], [0, padding]], constant_values=default_value)
    dense.set_shape([None, static_length])
    return dense


def bert_pack_inputs(segments, seq_length, start_id, end_id, pad_id):
    """Pack 1 or 2 tokenized segments into BERT encoder inputs (see the module doc).

    Args:
      segments: a list of int RaggedTensors [batch, (tokens)] (or ragged rank 2, e.g.
        [batch, (words), (pieces)], flattened first).
      seq_length: int or int32 scalar Tensor, the packed length.
      start_id, end_id, pad_id: the [CLS], [SEP] and padding ids.

    Returns:
      {"input_word_ids", "input_mask", "input_type_ids"}: int32 [batch, seq_length].
    """
    segments = [_flat_segment(s) for s in segments]
    num_segments = len(segments)
    static_length = tf.get_static_value(seq_length)
    static_length = int(static_length) if static_length is not None else None
    seq_length = tf.cast(seq_length, tf.int32)
    lengths = [tf.cast(s.row_lengths(), tf.int32) for s in segments]
    keep = round_robin_lengths(lengths, seq_length - (num_segments + 1))
    segments = [_trim(s, k) for s, k in zip(segments, keep)]
    batch = segments[0].nrows(out_type=tf.int32)
    marker_shape = tf.stack([batch, 1])
    start = tf.RaggedTensor.from_tensor(tf.fill(marker_shape, tf.constant(start_id, tf.int32)))
    end = tf.RaggedTensor.from_tensor(tf.fill(marker_shape, tf.constant(end_id, tf.int32)))
    word_parts, type_parts = [start], [tf.zeros_like(start)]
    for index, segment in enumerate(segments):
        type_id = min(index, 1)
        word_parts += [segment, end]
        type_parts += [tf.ones_like(segment) * type_id, tf.ones_like(end) * type_id]
    word_ids = tf.concat(word_parts, axis=1)
    type_ids = tf.concat(type_parts, axis=1)
    return {
        "input_word_ids": _to_dense(word_ids, seq_length, static_length, pad_id),
        "input_mask": _to_dense(tf.ones_like(word_ids), seq_length, static_length, 0),
        "input_type_ids": _to_dense(type_ids, seq_length, static_length, 0),
    }
