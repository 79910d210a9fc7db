"""A SeqIO vocabulary over t2t's own text encoders, so any T2T vocab file serves a Task.

T2T encoders reserve PAD=0 and EOS=1 (no UNK), as SeqIO expects, so their ids are used
unchanged: a Task over a T2T problem's TFRecords decodes with the problem's encoder.

    >>> vocab = T2TVocabulary("vocab.translate_ende_wmt32k.32768.subwords")  # a T2T file
    >>> ids = vocab.encode("Hello")                    # SubwordTextEncoder ids
    >>> vocab.decode(ids + [1, 0, 0])                  # cut at EOS, PAD dropped
    'Hello'
    >>> vocab.encode_tf(tf.constant("Hello"))          # the same ids, with graph ops
    >>> T2TVocabulary(text_encoder.ByteTextEncoder()).encode("hi")
    [106, 107]

In graphs, `encode_tf`/`decode_tf` use `t2t.encoders.graph_ops` (pure TF ops reproducing
`ByteTextEncoder`, `TextEncoder`, `TokenTextEncoder` and `SubwordTextEncoder` exactly).
An encoder with its own `encode`/`decode` runs through `tf.numpy_function` instead (so
in-process only, like any Python code in tf.data).
"""
import hashlib
from typing import Optional, Sequence, Union

import numpy as np
import tensorflow as tf

from t2t.encoders import graph_ops
from t2t.encoders import text_encoder
import t2t.seqio.vocabularies as vocabularies


def _encoder_vocab_size(encoder) -> Optional[int]:
    """encoder.vocab_size, or None for encoders without one (T2T's plain TextEncoder)."""
    try:
        return int(encoder.vocab_size)
    except NotImplementedError:
        return None


def _fingerprint(encoder, vocab_size) -> str:
    """A digest of what the encoder maps, for equality of vocabularies."""
    kind = graph_ops.vocabulary_kind(encoder)
    parts = [type(encoder).__name__, str(encoder.num_reserved_ids), str(vocab_size)]
    if kind == "subword":
        parts += encoder.all_subtoken_strings
    elif kind == "token":
        parts += ["%d=%s" % kv for kv in sorted(encoder.id_to_token.items())]
        parts.append(str(encoder.reverse))
    elif kind == "class_label":
        parts += list(encoder.class_labels)
    elif kind is None:
        parts.append("id=%d" % id(encoder))  # unknown encoders are equal only to themselves
    return hashlib.md5("\n".join(parts).encode("utf-8")).hexdigest()


class T2TVocabulary(vocabularies.Vocabulary):
    """A `t2t.encoders.text_encoder` encoder (or a T2T subword vocab file) as a Vocabulary.

    Args:
      encoder: a `TextEncoder` instance (SubwordTextEncoder, ByteTextEncoder,
        TokenTextEncoder, ...) or the path of a T2T subword vocab file.
      extra_ids: sentinel ids appended after the encoder's ids; they decode to nothing.
      vocab_size: the number of ids, for encoders that do not know it (T2T's plain
        `TextEncoder` of integer tokens; a problem's hparams give it).
    """

    def __init__(self, encoder: Union[str, text_encoder.TextEncoder], extra_ids: int = 0,
                 vocab_size: Optional[int] = None):
        if isinstance(encoder, (str, bytes)):
            path = encoder.decode() if isinstance(encoder, bytes) else encoder
            if not tf.io.gfile.exists(path):
                raise ValueError("T2TVocabulary: no vocab file %s; pass a T2T subword vocab "
                                 "file (e.g. vocab.<problem>.<size>.subwords) or an encoder"
                                 % path)
            encoder = text_encoder.SubwordTextEncoder(path)
        if not hasattr(encoder, "encode") or not hasattr(type(encoder), "vocab_size"):
            raise TypeError("T2TVocabulary: expected a t2t TextEncoder or a vocab file path, "
                            "got %r" % (encoder,))
        self._encoder = encoder
        self._num_reserved = encoder.num_reserved_ids or 0
        self._in_graph = graph_ops.unsupported_reason(encoder) is None
        self._vocab_size = vocab_size if vocab_size is not None else _encoder_vocab_size(encoder)
        self._fingerprint = _fingerprint(encoder, self._vocab_size)
        super().__init__(extra_ids=extra_ids)

    @classmethod
    def from_subword_file(cls, filename: str, extra_ids: int = 0) -> "T2TVocabulary":
        """A T2T `SubwordTextEncoder` vocab file ("'subtoken'" per line)."""
        return cls(text_encoder.SubwordTextEncoder(filename), extra_ids=extra_ids)

    @classmethod
    def from_token_file(cls, filename: str, extra_ids: int = 0, **kwargs) -> "T2TVocabulary":
        """A T2T `TokenTextEncoder` vocab file (one token per line)."""
        return cls(text_encoder.TokenTextEncoder(filename, **kwargs), extra_ids=extra_ids)

    @property
    def encoder(self) -> text_encoder.TextEncoder:
        """The wrapped t2t encoder."""
        return self._encoder

    @property
    def bos_id(self) -> Optional[int]:
        return None

    @property
    def eos_id(self) -> Optional[int]:
        return text_encoder.EOS_ID if self._num_reserved > text_encoder.EOS_ID else None

    @property
    def unk_id(self) -> Optional[int]:
        return None  # T2T encoders escape unknown characters instead of using an UNK id.

    @property
    def _base_vocab_size(self) -> int:
        if self._vocab_size is None:
            raise ValueError("T2TVocabulary over %s: the encoder has no vocab_size; pass "
                             "vocab_size=..." % type(self._encoder).__name__)
        return self._vocab_size

    def _encode(self, s) -> Sequence[int]:
        if isinstance(s, bytes):
            s = s.decode("utf-8")
        return [int(i) for i in self._encoder.encode(s)]

    def _text_ids(self, ids):
        """Ids that stand for text: not PAD/EOS/reserved, not extra ids."""
        low = self._num_reserved
        high = self._vocab_size if self._vocab_size is not None else float("inf")
        return [int(i) for i in ids if low <= int(i) < high]

    def _decode(self, ids) -> str:
        return self._encoder.decode(self._text_ids(ids))

    def _encode_tf(self, s):
        s = tf.convert_to_tensor(s, tf.string)
        flat = tf.reshape(s, [-1])
        if self._in_graph:
            padded = graph_ops.encode_strings(flat, self._encoder, append_eos=False)
            # Encoders never emit PAD (0), so each row's length is its count of nonzero ids.
            lengths = tf.reduce_sum(tf.cast(tf.not_equal(padded, 0), tf.int64), axis=1)
            ragged = tf.RaggedTensor.from_tensor(padded, lengths=lengths)
        else:
            def encode_all(strings):
                rows = [self._encode(x.decode("utf-8")) for x in strings]
                lengths = np.array([len(r) for r in rows], np.int64)
                values = np.array([i for r in rows for i in r], np.int32)
                return values, lengths

            values, lengths = tf.numpy_function(encode_all, [flat], [tf.int32, tf.int64],
                                                stateful=False)
            values.set_shape([None])
            lengths.set_shape([None])
            ragged = tf.RaggedTensor.from_row_lengths(values, lengths)
        if s.shape.rank == 0:
            return ragged[0]
        return ragged

    def _decode_tf(self, ids):
        ids = tf.cast(tf.convert_to_tensor(ids), tf.int32)
        rank = ids.shape.rank
        flat = tf.reshape(ids, [-1, tf.shape(ids)[-1]])
        if not self._in_graph:
            def decode_all(rows):
                return np.array([self._decode(r).encode("utf-8") for r in rows], object)

            texts = tf.numpy_function(decode_all, [flat], tf.string, stateful=False)
        else:
            keep = flat >= self._num_reserved
            if self._vocab_size is not None:
                keep = tf.logical_and(keep, flat < self._vocab_size)
            text_ids = tf.ragged.boolean_mask(flat, keep)
            # Rows padded with EOS: graph_ops cuts each row at its first EOS.
            pad = text_encoder.EOS_ID if self._num_reserved > text_encoder.EOS_ID else 0
            texts = graph_ops.decode_ids(text_ids.to_tensor(pad), self._encoder)
        if rank == 1:
            return tf.reshape(texts, [])
        return tf.reshape(texts, tf.shape(ids)[:-1])

    def __eq__(self, other):
        return (isinstance(other, T2TVocabulary) and self._fingerprint == other._fingerprint
                and self.extra_ids == other.extra_ids)

    def __hash__(self):
        return hash((T2TVocabulary, self._fingerprint, self.extra_ids))

    def __str__(self):
        return "T2TVocabulary(%s, vocab_size=%s, extra_ids=%d)" % (
            type(self._encoder).__name__, self._vocab_size, self.extra_ids)
