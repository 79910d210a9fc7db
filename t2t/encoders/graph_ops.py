"""t2t's text encoders as TensorFlow ops, so an exported model takes and returns strings.

Each function reproduces the Python encoder's `encode` / `decode` exactly, with graph ops
only (a SavedModel using them loads without t2t):

    vocab = text_encoder.ByteTextEncoder()
    encode_strings(tf.constant(["hi", "a"]), vocab)            # [[106, 107, 1], [99, 1, 0]]
    decode_ids(tf.constant([[106, 107, 1, 0], [99, 1, 5, 0]]), vocab)   # [b"hi", b"a"]

Supported: `ByteTextEncoder`, `TextEncoder` (integer tokens), `TokenTextEncoder`,
`SubwordTextEncoder` (T2T's tokenizer, escaping and greedy longest-prefix matching) and,
for decoding, `ClassLabelEncoder`. Encoders whose class overrides `encode` / `decode` are
not: `unsupported_reason` says why. Ids are cut at the first EOS (1) before decoding.
"""
import tensorflow as tf

from t2t.encoders import text_encoder
from t2t.encoders import tokenizer

EOS_ID = text_encoder.EOS_ID
PAD_ID = text_encoder.PAD_ID
_UNDEFINED_CODE_POINT = 0x3013  # What T2T decodes an impossible "\<n>;" escape to.
_MAX_CODE_POINT = 0x10FFFF

_KINDS = (
    ("byte", text_encoder.ByteTextEncoder),
    ("token", text_encoder.TokenTextEncoder),
    ("subword", text_encoder.SubwordTextEncoder),
    ("class_label", text_encoder.ClassLabelEncoder),
    ("text", text_encoder.TextEncoder),
)


def vocabulary_kind(vocabulary):
    """"byte", "token", "subword", "class_label" or "text" (TextEncoder), else None.

    A subclass counts only if it keeps its base's encode and decode.
    """
    for kind, cls in _KINDS:
        if isinstance(vocabulary, cls):
            same_methods = (type(vocabulary).encode is cls.encode and
                            type(vocabulary).decode is cls.decode)
            return kind if same_methods else None
    return None


def unsupported_reason(vocabulary):
    """None when `vocabulary` works in the graph, else a phrase saying why not."""
    if vocabulary is None:
        return "the problem has no vocabulary"
    if vocabulary_kind(vocabulary) is None:
        return ("vocabulary %s has its own encode/decode, which the graph cannot reproduce"
                % type(vocabulary).__name__)
    if isinstance(vocabulary, text_encoder.OneHotClassLabelEncoder):
        return "one-hot class labels are not text"
    return None


def _code_point_class(chars):
    """An RE2 character class matching exactly `chars`: "[\\x{61}-\\x{63}\\x{78}]"."""
    ranges = tokenizer.code_point_ranges(chars)
    if not ranges:
        return "[^\\x{0}-\\x{10FFFF}]"  # Matches nothing.
    return "[" + "".join("\\x{%X}" % start if start == end else "\\x{%X}-\\x{%X}" % (start, end)
                         for start, end in ranges) + "]"


_ALNUM_CLASS = None


def _alnum_class():
    """The tokenizer's alphanumeric characters (Unicode L* and N*) as an RE2 class."""
    global _ALNUM_CLASS
    if _ALNUM_CLASS is None:
        _ALNUM_CLASS = _code_point_class(tokenizer.ALPHANUMERIC_CHAR_SET)
    return _ALNUM_CLASS


def _sentinel(alphabet):
    """A character outside `alphabet`: it never occurs in subtoken strings."""
    code = 0xE000  # Private use area.
    while chr(code) in alphabet:
        code += 1
    return chr(code)


# ---------------------------------------------------------------------------- encoding
def _ragged_to_padded(ids, append_eos, max_input_size):
    """Ragged [B, (n)] ids -> int32 [B, L], 0-padded, cut to max_input_size - 1 + EOS."""
    ids = tf.cast(ids, tf.int32)
    if max_input_size > 0:
        ids = ids[:, :max_input_size - 1 if append_eos else max_input_size]
    if append_eos:
        eos = tf.fill(tf.stack([ids.nrows(), 1]), tf.constant(EOS_ID, tf.int32))
        ids = tf.concat([ids, eos], axis=1)
    return ids.to_tensor(0)


def _encode_bytes(strings, num_reserved):
    pieces = tf.strings.bytes_split(strings)
    byte_values = tf.reshape(tf.io.decode_raw(pieces.flat_values, tf.uint8), [-1])
    return pieces.with_flat_values(tf.cast(byte_values, tf.int32) + num_reserved)


def _lookup_table(keys, values, default_value):
    initializer = tf.lookup.KeyValueTensorInitializer(
        tf.constant(keys, tf.string), tf.constant(values, tf.int64))
    return tf.lookup.StaticHashTable(initializer, default_value)


def _encode_tokens(strings, vocabulary):
    tokens = tf.strings.split(strings)
    token_to_id = vocabulary.token_to_id
    oov = vocabulary.replace_oov
    table = _lookup_table(list(token_to_id), list(token_to_id.values()),
                          token_to_id[oov] if oov is not None else -1)
    ids = tf.ragged.map_flat_values(table.lookup, tokens)
    if oov is None:
        check = tf.debugging.assert_non_negative(
            ids.flat_values, message="a token is not in the vocab (TokenTextEncoder without "
                                     "replace_oov)")
        with tf.control_dependencies([check]):
            ids = tf.identity(ids)
    if vocabulary.reverse:
        dense = ids.to_tensor(-1)
        dense = tf.reverse_sequence(dense, ids.row_lengths(), seq_axis=1, batch_axis=0)
        ids = tf.RaggedTensor.from_tensor(dense, lengths=ids.row_lengths())
    return ids


def _tokenize(strings):
    """T2T's tokenizer: (raw tokens, escaping code points...) as flat arrays + token rows.

    Returns (chars, codes, token_index, num_tokens, token_rows, keep): flat characters
    and code points of all strings, the token of each character, the row of each token
    and which tokens survive (single spaces between tokens are dropped).
    """
    chars = tf.strings.unicode_split(strings, "UTF-8")
    codes = tf.strings.unicode_decode(strings, "UTF-8")
    flat_chars = chars.flat_values
    row_ids = tf.cast(chars.value_rowids(), tf.int32)
    position = tf.range(tf.size(flat_chars, out_type=tf.int32))
    row_start = tf.equal(position, tf.gather(tf.cast(chars.row_splits, tf.int32), row_ids))
    alnum = tf.strings.regex_full_match(flat_chars, _alnum_class())
    previous_alnum = tf.concat([[False], alnum[:-1]], axis=0)
    new_token = tf.logical_or(row_start, tf.not_equal(alnum, previous_alnum))
    token_index = tf.cumsum(tf.cast(new_token, tf.int32)) - 1
    num_tokens = tf.reduce_sum(tf.cast(new_token, tf.int32))
    token_rows = tf.boolean_mask(row_ids, new_token)
    raw_tokens = tf.strings.unsorted_segment_join(flat_chars, token_index, num_tokens)
    first = tf.not_equal(token_rows, tf.concat([[-1], token_rows[:-1]], axis=0))
    last = tf.not_equal(token_rows, tf.concat([token_rows[1:], [-1]], axis=0))
    keep = tf.logical_or(tf.not_equal(raw_tokens, " "), tf.logical_or(first, last))
    return flat_chars, codes.flat_values, token_index, num_tokens, token_rows, keep


def _escape_chars(chars, codes, alphabet):
    """Per character: "\\" -> "\\\\", "_" -> "\\u", outside the alphabet -> "\\<code>;"."""
    in_alphabet = tf.logical_and(
        tf.strings.regex_full_match(chars, _code_point_class(alphabet - {"\n"})),
        tf.not_equal(chars, "\n"))
    numeric = tf.strings.join(["\\", tf.strings.as_string(codes), ";"])
    escaped = tf.where(in_alphabet, chars, numeric)
    escaped = tf.where(tf.equal(chars, "_"), "\\u", escaped)
    return tf.where(tf.equal(chars, "\\"), "\\\\", escaped)


def subword_table(vocabulary):
    """A SubwordTextEncoder's subtoken string -> id table (-1 when absent).

    Build it once, outside any tf.function, and pass it to `encode_subwords_ragged` when
    the encoding is saved with `tf.saved_model.save` (the saved object must hold it).
    """
    string_to_id = vocabulary.subtoken_string_to_id
    return _lookup_table(list(string_to_id), list(string_to_id.values()), -1)


def _greedy_subtoken_ids(tokens, vocabulary, table=None):
    """Escaped tokens [T] -> ragged [T, (n)] ids of the greedy longest-prefix split."""
    if table is None:
        table = subword_table(vocabulary)
    max_length = max(1, vocabulary.max_subtoken_len)
    lengths = tf.strings.length(tokens, unit="UTF8_CHAR")
    num = tf.size(tokens)
    candidate_lengths = tf.tile(tf.range(1, max_length + 1)[tf.newaxis], [num, 1])
    tiled_tokens = tf.tile(tokens[:, tf.newaxis], [1, max_length])

    def step(start, ids):
        active = start < lengths
        candidates = tf.strings.substr(tiled_tokens, tf.tile(start[:, tf.newaxis],
                                                             [1, max_length]),
                                       candidate_lengths, unit="UTF8_CHAR")
        candidate_ids = tf.cast(table.lookup(candidates), tf.int32)
        fits = candidate_lengths <= (lengths - start)[:, tf.newaxis]
        found = tf.logical_and(candidate_ids >= 0, fits)
        best = tf.reduce_max(tf.where(found, candidate_lengths, 0), axis=1)
        check = tf.debugging.Assert(
            tf.reduce_all(tf.logical_or(best > 0, tf.logical_not(active))),
            ["SubwordTextEncoder vocab has no single-character subtoken for a character "
             "of its alphabet; rebuild it with build_from_generator"])
        with tf.control_dependencies([check]):
            best_id = tf.gather(candidate_ids, tf.maximum(best - 1, 0), batch_dims=1)
        new_ids = tf.where(active, best_id, -1)
        return start + tf.where(active, best, 0), tf.concat([ids, new_ids[:, None]], axis=1)

    _, ids = tf.while_loop(
        lambda start, ids: tf.reduce_any(start < lengths), step,
        [tf.zeros_like(lengths), tf.zeros([num, 0], tf.int32)],
        shape_invariants=[tf.TensorShape([None]), tf.TensorShape([None, None])])
    return tf.ragged.boolean_mask(ids, ids >= 0)


def _encode_subwords(strings, vocabulary, table=None):
    chars, codes, token_index, num_tokens, token_rows, keep = _tokenize(strings)
    escaped = _escape_chars(chars, codes, vocabulary.alphabet)
    tokens = tf.strings.unsorted_segment_join(escaped, token_index, num_tokens) + "_"
    tokens = tf.boolean_mask(tokens, keep)
    token_rows = tf.boolean_mask(token_rows, keep)
    ids_per_token = _greedy_subtoken_ids(tokens, vocabulary, table)
    per_row = tf.RaggedTensor.from_value_rowids(
        ids_per_token, tf.cast(token_rows, tf.int64), nrows=tf.size(strings, out_type=tf.int64))
    return per_row.merge_dims(1, 2)


def encode_subwords_ragged(strings, vocabulary, table=None):
    """Strings [B] -> int32 RaggedTensor [B, (ids)]: SubwordTextEncoder.encode, no EOS.

        encode_subwords_ragged(tf.constant(["the cat", ""]), vocab)   # [[2, 5, 3], []]

    `table`: the vocabulary's `subword_table`, built once (default: a new one).
    """
    if vocabulary_kind(vocabulary) != "subword":
        raise ValueError("encode_subwords_ragged needs a SubwordTextEncoder, not %s"
                         % type(vocabulary).__name__)
    ids = _encode_subwords(tf.convert_to_tensor(strings, tf.string), vocabulary, table)
    return tf.cast(ids, tf.int32)


def encode_strings(strings, vocabulary, append_eos=True, max_input_size=-1):
    """Strings [B] -> int32 ids [B, L]: `vocabulary.encode` of each, + EOS, 0-padded.

    max_input_size > 0 keeps the first max_input_size - 1 ids before EOS (as
    `t2t-decoder --decode_from_file`). Raises ValueError for unsupported vocabularies.
    """
    reason = unsupported_reason(vocabulary)
    if reason is not None:
        raise ValueError("cannot encode strings in the graph: %s" % reason)
    strings = tf.convert_to_tensor(strings, tf.string)
    kind = vocabulary_kind(vocabulary)
    num_reserved = vocabulary.num_reserved_ids or 0
    if kind == "byte":
        ids = _encode_bytes(strings, num_reserved)
    elif kind == "text":
        ids = tf.strings.to_number(tf.strings.split(strings), tf.int32) + num_reserved
    elif kind == "token":
        ids = _encode_tokens(strings, vocabulary)
    elif kind == "subword":
        ids = _encode_subwords(strings, vocabulary)
    else:
        raise ValueError("cannot encode strings in the graph with %s; inputs must be text"
                         % type(vocabulary).__name__)
    return _ragged_to_padded(ids, append_eos, max_input_size)


# ---------------------------------------------------------------------------- decoding
def _cut_at_eos(ids):
    """Ids [N, L] -> ragged [N, (n)]: each row up to, not including, its first EOS or PAD
    (as t2t-decoder cuts a decode)."""
    is_end = tf.cast(tf.logical_or(tf.equal(ids, EOS_ID), tf.equal(ids, PAD_ID)), tf.int32)
    lengths = tf.reduce_sum(tf.cast(tf.equal(tf.cumsum(is_end, axis=1), 0), tf.int32), axis=1)
    return tf.RaggedTensor.from_tensor(ids, lengths=lengths)


def _utf8_of_code_points(code):
    """The UTF-8 string of each code point of int32 `code` [n] (a surrogate: U+FFFD).

        _utf8_of_code_points(tf.constant([97, 0xE9, 0xFFFE]))  # [b"a", b"\xc3\xa9", b"\xef\xbf\xbe"]

    Computed here, not by `tf.strings.unicode_encode`: TensorFlow 2.15's replaces the
    noncharacters (U+FFFE, U+FDD0, ...) with U+FFFD, which Python encodes as they are.
    """
    code = tf.where(tf.logical_and(code >= 0xD800, code <= 0xDFFF), 0xFFFD, code)
    length = (1 + tf.cast(code >= 0x80, tf.int32) + tf.cast(code >= 0x800, tf.int32) +
              tf.cast(code >= 0x10000, tf.int32))
    lead_mark = tf.gather(tf.constant([0, 0, 0xC0, 0xE0, 0xF0]), length)
    byte_strings = tf.constant([bytes([b]) for b in range(256)], tf.string)
    pieces = []
    for k in range(4):
        shift = 6 * (length - 1 - k)
        value = tf.bitwise.right_shift(code, tf.maximum(shift, 0))
        byte = tf.where(tf.equal(k, 0), tf.bitwise.bitwise_or(value, lead_mark),
                        tf.bitwise.bitwise_or(0x80, tf.bitwise.bitwise_and(value, 0x3F)))
        piece = tf.gather(byte_strings, tf.bitwise.bitwise_and(byte, 0xFF))
        pieces.append(tf.where(k < length, piece, ""))
    return tf.strings.reduce_join(tf.stack(pieces, axis=1), axis=1)


def _pieces_table(strings, ids):
    """strings[id] for ids in range, "" elsewhere."""
    table = tf.constant(list(strings) + [""], tf.string)
    size = len(strings)
    in_range = tf.logical_and(ids >= 0, ids < size)
    return tf.gather(table, tf.where(in_range, ids, size))


def _decode_subwords(ids, vocabulary):
    """Ragged ids [N, (n)] -> strings [N], as SubwordTextEncoder.decode."""
    alphabet = vocabulary.alphabet
    strings = tf.ragged.map_flat_values(_pieces_table, vocabulary.all_subtoken_strings, ids)
    joined = tf.strings.reduce_join(strings, axis=1)
    pieces = tf.strings.split(joined, sep="_")
    pieces = tf.ragged.boolean_mask(pieces, tf.not_equal(pieces, ""))
    backslash, number_mark = _sentinel(alphabet), _sentinel(alphabet | {_sentinel(alphabet)})
    flat = pieces.flat_values
    flat = tf.strings.regex_replace(flat, r"\\\\", backslash)
    flat = tf.strings.regex_replace(flat, r"\\u", "_")
    flat = tf.strings.regex_replace(flat, r"\\([0-9]+);", number_mark + r"\1" + number_mark)
    flat = tf.strings.regex_replace(flat, backslash, "\\\\")
    # "a<m>233<m>b" -> ["a", "233", "b"]: odd parts are code points.
    parts = tf.strings.split(flat, sep=number_mark)
    part_values = parts.flat_values
    is_number = tf.equal(tf.math.floormod(
        tf.range(tf.size(part_values)) - tf.cast(tf.gather(parts.row_splits,
                                                           parts.value_rowids()), tf.int32),
        2), 1)
    too_long = tf.strings.length(part_values) > 7
    safe = tf.where(tf.logical_and(is_number, tf.logical_not(too_long)), part_values, "0")
    code = tf.strings.to_number(safe, tf.int32)
    code = tf.where(tf.logical_or(too_long, code > _MAX_CODE_POINT), _UNDEFINED_CODE_POINT,
                    code)
    chars = _utf8_of_code_points(code)
    part_values = tf.where(is_number, chars, part_values)
    tokens = tf.strings.reduce_join(parts.with_flat_values(part_values), axis=1)
    tokens = pieces.with_flat_values(tokens)
    tokens = tf.ragged.boolean_mask(tokens, tf.not_equal(tokens, ""))
    # tokenizer.decode: a space between two tokens that start with alphanumerics.
    flat_tokens = tokens.flat_values
    alnum = tf.strings.regex_full_match(flat_tokens, "(?s)" + _alnum_class() + ".*")
    position = tf.range(tf.size(flat_tokens, out_type=tf.int64))
    row_start = tf.equal(position, tf.gather(tokens.row_splits, tokens.value_rowids()))
    previous_alnum = tf.logical_and(tf.concat([[False], alnum[:-1]], axis=0),
                                    tf.logical_not(row_start))
    spaced = tf.where(tf.logical_and(previous_alnum, alnum), " " + flat_tokens, flat_tokens)
    return tf.strings.reduce_join(tokens.with_flat_values(spaced), axis=1)


def _decode_rows(ids, vocabulary):
    """Ragged ids [N, (n)] (EOS already cut) -> strings [N]."""
    kind = vocabulary_kind(vocabulary)
    num_reserved = vocabulary.num_reserved_ids or 0
    reserved = text_encoder.RESERVED_TOKENS[:num_reserved]
    if kind == "byte":
        pieces = [t.encode("utf-8") for t in reserved] + [bytes([b]) for b in range(256)]
        joined = tf.strings.reduce_join(
            tf.ragged.map_flat_values(_pieces_table, pieces, ids), axis=1)
        return tf.strings.unicode_transcode(joined, "UTF-8", "UTF-8", errors="replace",
                                            replacement_char=0xFFFD)
    if kind == "text":
        def to_text(flat):
            numbers = tf.strings.as_string(flat - num_reserved)
            if not reserved:
                return numbers
            return tf.where(flat < num_reserved, _pieces_table(reserved, flat), numbers)
        return tf.strings.reduce_join(tf.ragged.map_flat_values(to_text, ids), axis=1,
                                      separator=" ")
    if kind == "token":
        size = max(vocabulary.id_to_token, default=-1) + 1
        tokens = [vocabulary.id_to_token.get(i, "ID_%d" % i) for i in range(size)]

        def to_tokens(flat):
            fallback = tf.strings.join(["ID_", tf.strings.as_string(flat)])
            in_range = tf.logical_and(flat >= 0, flat < size)
            return tf.where(in_range, _pieces_table(tokens, flat), fallback)
        if vocabulary.reverse:
            dense = tf.reverse_sequence(ids.to_tensor(0), ids.row_lengths(), seq_axis=1,
                                        batch_axis=0)
            ids = tf.RaggedTensor.from_tensor(dense, lengths=ids.row_lengths())
        return tf.strings.reduce_join(tf.ragged.map_flat_values(to_tokens, ids), axis=1,
                                      separator=" ")
    if kind == "subword":
        return _decode_subwords(ids, vocabulary)
    raise ValueError("cannot decode ids in the graph with %s" % type(vocabulary).__name__)


def decode_ids(ids, vocabulary):
    """Ids [..., L] -> strings [...]: `vocabulary.decode` of each row up to its first EOS
    or PAD.

    Class labels ([..., 1] ids) decode to their label without cutting at EOS.
    """
    reason = unsupported_reason(vocabulary)
    if reason is not None:
        raise ValueError("cannot decode ids in the graph: %s" % reason)
    ids = tf.convert_to_tensor(ids)
    ids = tf.cast(ids, tf.int32)
    outer_shape = tf.shape(ids)[:-1]
    flat = tf.reshape(ids, [-1, tf.shape(ids)[-1]])
    if vocabulary_kind(vocabulary) == "class_label":
        labels = _pieces_table(vocabulary.class_labels, flat[:, 0])
        return tf.reshape(labels, outer_shape)
    return tf.reshape(_decode_rows(_cut_at_eos(flat), vocabulary), outer_shape)
