"""Vocabularies: text <-> int ids in Python and in TensorFlow graphs (seqio 0.0.20's API).

Every vocabulary reserves PAD=0; most also have EOS=1 and UNK=2. `decode` keeps the ids
up to and including the first EOS (the rest is padding or garbage after the end):

    >>> vocab = ByteVocabulary()
    >>> vocab.encode("hé")                  # UTF-8 bytes + 3
    [107, 198, 172]
    >>> vocab.decode([107, 198, 172, 1, 50, 0])
    'hé'
    >>> vocab.decode_tf(tf.constant([107, 198, 172, 1, 50])).numpy()
    b'h\\xc3\\xa9'

Classes: `Vocabulary` (the base), `PassThroughVocabulary`, `UnigramVocabulary`,
`SentencePieceVocabulary` (`sentencepiece` in Python, `tensorflow_text` in graphs),
`ByteVocabulary` (ByT5), `FullCodepointVocabulary`, `PartialCodepointVocabulary`,
`BertWordPieceVocabulary`, and `T2TVocabulary`, which serves any t2t (Tensor2Tensor)
text encoder or vocab file to a SeqIO task (see t2t_vocabulary.py).
"""
import abc
import dataclasses
import functools
import hashlib
import threading
from typing import Any, Dict, Iterable, Optional, Sequence, Union

import tensorflow as tf
from absl import logging

PAD_ID = 0


class Vocabulary(metaclass=abc.ABCMeta):
    """Base class: subclasses implement `_encode`/`_decode` (Python) and `_encode_tf`/`_decode_tf`.

    Subclasses reserve PAD_ID=0 and may reserve EOS and UNK. `_base_vocab_size` counts
    PAD/EOS/UNK but not `extra_ids` (sentinels appended at the end of the vocabulary).
    """

    def __init__(self, extra_ids: int = 0):
        self._extra_ids = extra_ids or 0

    @property
    def bos_id(self) -> Optional[int]:
        raise NotImplementedError("need to implement bos_id")

    @property
    @abc.abstractmethod
    def eos_id(self) -> Optional[int]:
        raise NotImplementedError("need to implement eos_id")

    @property
    def pad_id(self) -> int:
        return PAD_ID

    @property
    @abc.abstractmethod
    def unk_id(self) -> Optional[int]:
        raise NotImplementedError("need to implement unk_id")

    @property
    def extra_ids(self) -> int:
        return self._extra_ids

    @property
    def vocab_size(self) -> int:
        """Vocabulary size, including extra ids."""
        return self._base_vocab_size + self.extra_ids

    @property
    @abc.abstractmethod
    def _base_vocab_size(self) -> int:
        """Vocabulary size without extra ids, with PAD/EOS/UNK."""
        raise NotImplementedError

    @abc.abstractmethod
    def _encode(self, s: str) -> Sequence[int]:
        raise NotImplementedError

    def encode(self, s: Union[Sequence[int], str]) -> Sequence[int]:
        """Tokenizes a string to ids, without adding EOS."""
        return self._encode(s)

    @abc.abstractmethod
    def _decode(self, ids):
        raise NotImplementedError

    def decode(self, ids: Iterable[int]):
        """Detokenizes ids up to and including the first EOS; ids >= the base size -> UNK."""
        if isinstance(ids, (tf.Tensor, tf.Variable)) and tf.executing_eagerly():
            ids = ids.numpy().tolist()  # iterating an EagerTensor is ~500x slower
        clean_ids = list(ids)
        if self.unk_id is not None:
            vocab_size = self._base_vocab_size
            clean_ids = [self.unk_id if i >= vocab_size else i for i in clean_ids]
        if self.eos_id is not None and self.eos_id in clean_ids:
            clean_ids = clean_ids[:clean_ids.index(self.eos_id) + 1]
        return self._decode(clean_ids)

    @abc.abstractmethod
    def _encode_tf(self, s: tf.Tensor) -> tf.Tensor:
        raise NotImplementedError

    def encode_tf(self, s: tf.Tensor) -> tf.Tensor:
        """Tokenizes a scalar string Tensor to an int32 Tensor, without adding EOS."""
        return self._encode_tf(s)

    @abc.abstractmethod
    def _decode_tf(self, ids: tf.Tensor) -> tf.Tensor:
        raise NotImplementedError

    def decode_tf(self, ids: tf.Tensor) -> tf.Tensor:
        """Detokenizes an int Tensor (last axis = sequence) through its first EOS."""
        if ids.shape == (0,):
            return tf.constant(b"", dtype=tf.string)
        clean_ids = ids
        if self.unk_id is not None:
            clean_ids = tf.where(tf.less(clean_ids, self._base_vocab_size), clean_ids,
                                 self.unk_id)
        if self.eos_id is not None:
            after_eos = tf.cumsum(tf.cast(tf.equal(clean_ids, self.eos_id), tf.int32),
                                  exclusive=True, axis=-1)
            clean_ids = tf.where(tf.cast(after_eos, tf.bool), self.pad_id, clean_ids)
        return self._decode_tf(clean_ids)


class PassThroughVocabulary(Vocabulary):
    """Ids in, ids out: for features that are already tokenized.

    >>> PassThroughVocabulary(size=10, eos_id=1).decode([3, 1, 5])
    [3, 1]
    """

    def __init__(self, size: int, eos_id: Optional[Any] = None):
        self._size = size
        self._eos_id = eos_id
        super().__init__()

    @property
    def _base_vocab_size(self):
        return self._size

    def _encode(self, s):
        return s

    def _decode(self, ids):
        return ids

    def _encode_tf(self, s):
        return s

    def _decode_tf(self, ids):
        return ids

    @property
    def eos_id(self) -> Optional[Any]:
        return self._eos_id

    @property
    def unk_id(self) -> Optional[Any]:
        return None

    @property
    def size(self) -> int:
        return self._size

    def __eq__(self, other):
        return (isinstance(other, PassThroughVocabulary) and self._size == other._size
                and self.eos_id == other.eos_id)

    def __hash__(self):
        return hash((PassThroughVocabulary, self._size, self._eos_id))

    def __str__(self) -> str:
        return f"PassThroughVocabulary(size={self._size}, eos_id={self.eos_id})"


class UnigramVocabulary(Vocabulary):
    """Table lookup of whole unigrams: PAD=0, the unigrams from 1, UNK last.

    >>> UnigramVocabulary(["a", "b"], split_on_space=True).encode("b a c")
    [2, 1, 3]
    """

    def __init__(self, unigrams: Sequence[str], split_on_space: bool = False):
        super().__init__()
        unigrams = list(unigrams)
        self._unigram_by_id = ["PAD"] + unigrams + ["UNK"]
        self._id_by_unigram = {u: i for i, u in enumerate(self._unigram_by_id)}
        initializer = tf.lookup.KeyValueTensorInitializer(
            keys=tf.constant(["PAD"] + unigrams),
            values=tf.constant(list(range(len(unigrams) + 1)), dtype=tf.int64))
        self._id_by_unigram_tf = tf.lookup.StaticVocabularyTable(initializer, num_oov_buckets=1)
        self._unigram_by_id_tf = tf.constant(self._unigram_by_id)
        self._split_on_space = split_on_space

    def _encode(self, s):
        if self._split_on_space:
            return [self._id_by_unigram.get(u, self.unk_id) for u in s.split(" ")]
        return [self._id_by_unigram.get(s, self.unk_id)]

    def _encode_tf(self, s):
        if self._split_on_space:
            return tf.cast(self._id_by_unigram_tf.lookup(tf.strings.split(s, " ")), tf.int32)
        return tf.expand_dims(tf.cast(self._id_by_unigram_tf.lookup(s), tf.int32), -1)

    def _decode(self, ids):
        return " ".join(self._unigram_by_id[i] for i in ids)

    def _decode_tf(self, ids):
        if self._split_on_space:
            return tf.strings.reduce_join(tf.gather(self._unigram_by_id_tf, ids), axis=-1,
                                          separator=" ")
        return self._unigram_by_id_tf[ids[0]]

    @property
    def _base_vocab_size(self):
        return len(self._unigram_by_id)

    @property
    def bos_id(self):
        return None

    @property
    def eos_id(self):
        return None

    @property
    def unk_id(self):
        return self._base_vocab_size - 1


# --------------------------------------------------------------------------- SentencePiece
@dataclasses.dataclass
class _ModelContext:
    tokenizer: Any  # sentencepiece.SentencePieceProcessor
    sp_model: bytes


_load_model_lock = threading.Lock()


def _import_sentencepiece():
    try:
        import sentencepiece  # pylint: disable=import-outside-toplevel
        from sentencepiece import sentencepiece_model_pb2  # pylint: disable=import-outside-toplevel
    except ImportError as e:  # pragma: no cover - sentencepiece is a t2t dependency
        raise ImportError("SentencePieceVocabulary needs the sentencepiece package; "
                          "pip install sentencepiece==0.2.0") from e
    return sentencepiece, sentencepiece_model_pb2


def _load_model(sentencepiece_model_file, extra_ids, normalizer_spec_overrides_serialized=None,
                reverse_extra_ids=True) -> _ModelContext:
    # SentencePieceProcessor.LoadFromSerializedProto is not thread-safe.
    with _load_model_lock:
        return _load_model_internal(sentencepiece_model_file, extra_ids,
                                    normalizer_spec_overrides_serialized, reverse_extra_ids)


@functools.lru_cache(maxsize=None)
def _load_model_internal(sentencepiece_model_file, extra_ids,
                         normalizer_spec_overrides_serialized=None, reverse_extra_ids=True):
    """Reads the model, adds `▁<extra_id_i>` pieces and normalizer overrides; cached."""
    sentencepiece, model_pb2 = _import_sentencepiece()
    if not tf.io.gfile.exists(sentencepiece_model_file):
        raise ValueError("SentencePieceVocabulary: no model file %s; pass the path of a "
                         "trained .model file" % sentencepiece_model_file)
    with tf.io.gfile.GFile(sentencepiece_model_file, "rb") as f:
        model = model_pb2.ModelProto.FromString(f.read())
    if extra_ids:
        order = reversed(range(extra_ids)) if reverse_extra_ids else range(extra_ids)
        for i in order:
            model.pieces.add(piece=f"▁<extra_id_{i}>", score=0.0,
                             type=model_pb2.ModelProto.SentencePiece.USER_DEFINED)
    if normalizer_spec_overrides_serialized is not None:
        overrides = model_pb2.NormalizerSpec.FromString(normalizer_spec_overrides_serialized)
        model.normalizer_spec.MergeFrom(overrides)
        model.denormalizer_spec.MergeFrom(overrides)
    sp_model = model.SerializeToString()
    tokenizer = sentencepiece.SentencePieceProcessor()
    tokenizer.LoadFromSerializedProto(sp_model)
    if tokenizer.pad_id() != PAD_ID:
        logging.warning("T5 library uses PAD_ID=%s, which is different from the sentencepiece "
                        "vocabulary, which defines pad_id=%s", PAD_ID, tokenizer.pad_id())
    return _ModelContext(tokenizer=tokenizer, sp_model=sp_model)


class SentencePieceVocabulary(Vocabulary):
    """A SentencePiece model; assumes it reserves PAD=0, EOS=1, UNK=2 (T5's models do).

    `extra_ids` sentinels `<extra_id_0>`, `<extra_id_1>`, ... are added at the end of the
    vocabulary, the first one with the highest id (`reverse_extra_ids`), for T5's span
    corruption. Encoding in graphs uses `tensorflow_text.SentencepieceTokenizer` over the
    same serialized model, so `encode_tf` gives the ids `encode` gives.

        vocab = SentencePieceVocabulary("spm.model", extra_ids=100)
        vocab.encode("a b")          # e.g. [9, 12]
        vocab.decode([9, 12, 1, 0])  # "a b"
    """

    def __init__(self, sentencepiece_model_file: str, extra_ids: int = 0,
                 normalizer_spec_overrides=None, reverse_extra_ids: bool = True,
                 use_fast_tokenizer: bool = False):
        self._sentencepiece_model_file = sentencepiece_model_file
        self._normalizer_spec_overrides = normalizer_spec_overrides
        self._reverse_extra_ids = reverse_extra_ids
        self._model: Optional[_ModelContext] = None
        self._use_fast_tokenizer = use_fast_tokenizer
        super().__init__(extra_ids=extra_ids)

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_model"]  # reloaded lazily; keeps the vocabulary picklable
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._model = None

    def load_model(self) -> None:
        self._model_context()

    def _model_context(self) -> _ModelContext:
        if self._model:
            return self._model
        overrides = (self._normalizer_spec_overrides.SerializeToString(deterministic=True)
                     if self._normalizer_spec_overrides else None)
        self._model = _load_model(self._sentencepiece_model_file, self._extra_ids, overrides,
                                  self._reverse_extra_ids)
        return self._model

    @property
    def bos_id(self) -> Optional[int]:
        return self.tokenizer.bos_id()

    @property
    def eos_id(self) -> Optional[int]:
        return self.tokenizer.eos_id()

    @property
    def unk_id(self) -> Optional[int]:
        return self.tokenizer.unk_id()

    @property
    def sp_model(self) -> Optional[bytes]:
        return self._model_context().sp_model

    @property
    def sentencepiece_model_file(self) -> str:
        return self._sentencepiece_model_file

    @property
    def tokenizer(self):
        """The Python `sentencepiece.SentencePieceProcessor`."""
        return self._model_context().tokenizer

    @property
    def tf_tokenizer(self):
        """A `tensorflow_text` tokenizer over the same serialized model."""
        import tensorflow_text as tf_text  # pylint: disable=import-outside-toplevel
        if self._use_fast_tokenizer:
            return tf_text.FastSentencepieceTokenizer(model=self.sp_model)
        return tf_text.SentencepieceTokenizer(model=self.sp_model)

    @property
    def vocab_size(self):
        return self._base_vocab_size

    @property
    def _base_vocab_size(self):
        """Number of pieces, extra ids included (they are pieces of the model)."""
        return self.tokenizer.GetPieceSize()

    def _encode(self, s):
        return self.tokenizer.EncodeAsIds(s)

    def _decode(self, ids):
        unk_id = self.tokenizer.unk_id()
        piece_size = self.tokenizer.GetPieceSize()
        return self.tokenizer.DecodeIds([unk_id if i >= piece_size else int(i) for i in ids])

    def _encode_tf(self, s):
        return self.tf_tokenizer.tokenize(s)

    def _decode_tf(self, ids):
        return self.tf_tokenizer.detokenize(ids)

    def __eq__(self, other):
        if not isinstance(other, SentencePieceVocabulary):
            return False
        return self.__getstate__() == other.__getstate__()

    def __hash__(self):
        return hash((SentencePieceVocabulary, self._sentencepiece_model_file, self._extra_ids))

    def __str__(self) -> str:
        return (f"SentencePieceVocabulary(file={self.sentencepiece_model_file}, "
                f"extra_ids={self._extra_ids}, "
                f"spm_md5={hashlib.md5(self.sp_model).hexdigest()})")


# ------------------------------------------------------------------------------- bytes
class ByteVocabulary(Vocabulary):
    """UTF-8 bytes + 3 (PAD=0, EOS=1, UNK=2 reserved): ByT5's vocabulary.

    Ids outside the byte range (special ids, extra ids) are left out of decoded text, and
    invalid UTF-8 is dropped, in `decode` and `decode_tf` alike; a character of several
    bytes comes back whole from both:

    >>> ByteVocabulary().decode_tf(tf.constant([[229, 141, 136, 1], [107, 2, 0, 0]]))
    [b"\\xe2\\x8a\\x85", b"h"]          # "⊅" (3 bytes), then "h"
    """

    def __init__(self, extra_ids: int = 0):
        self._byte_size = 256
        self._num_special_tokens = 3
        super().__init__(extra_ids=extra_ids)

    @property
    def _byte_strings(self):
        return tf.constant([bytes([i]) for i in range(self._byte_size)])

    @property
    def bos_id(self) -> Optional[int]:
        return None

    @property
    def eos_id(self) -> Optional[int]:
        return 1

    @property
    def unk_id(self) -> Optional[int]:
        return 2

    @property
    def _base_vocab_size(self):
        return self._num_special_tokens + self._byte_size

    def _encode(self, s):
        data = s if isinstance(s, bytes) else s.encode("utf-8")
        return [b + self._num_special_tokens for b in data]

    def _decode(self, ids):
        low, high = self._num_special_tokens, self._num_special_tokens + self._byte_size
        data = bytes(int(i) - low for i in ids if low <= int(i) < high)
        return data.decode("utf-8", errors="ignore")

    def _encode_tf(self, s):
        return tf.cast(tf.io.decode_raw(s, tf.uint8), tf.int32) + self._num_special_tokens

    def _decode_tf(self, ids):
        low, high = self._num_special_tokens, self._num_special_tokens + self._byte_size
        ids = tf.convert_to_tensor(ids)
        keep = tf.logical_and(ids >= low, ids < high)
        ids = tf.ragged.boolean_mask(ids, keep) if ids.shape.rank > 1 else tf.boolean_mask(
            ids, keep)
        joined = tf.strings.reduce_join(tf.gather(self._byte_strings, ids - low), axis=-1)
        # Whole multi-byte characters survive; invalid sequences are dropped, as in decode.
        return tf.strings.unicode_transcode(joined, input_encoding="UTF-8",
                                            output_encoding="UTF-8", errors="ignore")

    def __eq__(self, other):
        return (isinstance(other, ByteVocabulary) and self.extra_ids == other.extra_ids
                and self.eos_id == other.eos_id and self.unk_id == other.unk_id)

    def __hash__(self):
        return hash((ByteVocabulary, self.extra_ids))

    def __str__(self):
        return f"ByteVocabulary(extra_ids={self.extra_ids})"


# -------------------------------------------------------------------------- codepoints
class FullCodepointVocabulary(Vocabulary):
    """Every Unicode code point is its own id; PAD=0, EOS=U+E005 (private use)."""

    LARGEST_CODEPOINT = 0x10FFFF
    PAD_CODEPOINT = 0
    EOS_CODEPOINT = 0xE005

    @property
    def eos_id(self) -> int:
        return self.EOS_CODEPOINT

    @property
    def pad_id(self) -> int:
        return self.PAD_CODEPOINT

    @property
    def unk_id(self) -> Optional[int]:
        return None

    @property
    def _base_vocab_size(self) -> int:
        return self.LARGEST_CODEPOINT

    def _encode(self, s):
        return [ord(c) for c in s]

    def _decode(self, ids):
        return "".join(chr(int(i)) for i in ids if int(i) != self.EOS_CODEPOINT)

    def _encode_tf(self, s):
        return tf.strings.unicode_decode(s, input_encoding="UTF-8")

    def _decode_tf(self, ids):
        return tf.strings.unicode_encode(ids, output_encoding="UTF-8")

    def __eq__(self, other):
        return isinstance(other, FullCodepointVocabulary)

    def __hash__(self):
        return hash(FullCodepointVocabulary)


class PartialCodepointVocabulary(Vocabulary):
    """A fixed set of code points, numbered after PAD=0, EOS=1, UNK=2 in the given order."""

    PAD_CODEPOINT = FullCodepointVocabulary.PAD_CODEPOINT
    EOS_CODEPOINT = FullCodepointVocabulary.EOS_CODEPOINT
    UNK_CODEPOINT = 0xE004
    PAD_ID = 0
    EOS_ID = 1
    UNK_ID = 2

    def __init__(self, codepoints: Sequence[int], extra_ids: int = 0):
        self._codepoint_to_id = {self.PAD_CODEPOINT: self.PAD_ID,
                                 self.EOS_CODEPOINT: self.EOS_ID,
                                 self.UNK_CODEPOINT: self.UNK_ID}
        for codepoint in codepoints:
            if codepoint not in self._codepoint_to_id:
                self._codepoint_to_id[codepoint] = len(self._codepoint_to_id)
        self._id_to_codepoint = {v: k for k, v in self._codepoint_to_id.items()}
        self._codepoint_to_id_tf = self.convert_dict_to_tf(self._codepoint_to_id,
                                                           default_value=self.UNK_ID)
        self._id_to_codepoint_tf = self.convert_dict_to_tf(self._id_to_codepoint,
                                                           default_value=self.UNK_CODEPOINT)
        super().__init__(extra_ids=extra_ids)

    @classmethod
    def create_from_file(cls, vocab_file: str, extra_ids: int = 0):
        """One decimal code point per line."""
        with tf.io.gfile.GFile(vocab_file, "r") as f:
            return cls([int(line.strip()) for line in f if line.strip()], extra_ids)

    @property
    def eos_id(self) -> int:
        return self.EOS_ID

    @property
    def pad_id(self) -> int:
        return self.PAD_ID

    @property
    def unk_id(self) -> int:
        return self.UNK_ID

    @property
    def _base_vocab_size(self) -> int:
        return len(self._codepoint_to_id)

    @staticmethod
    def convert_dict_to_tf(d: Dict[Any, Any], default_value: Optional[Any] = None):
        return tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(list(d)),
                                                tf.constant(list(d.values()))),
            default_value=default_value)

    def _encode(self, s):
        return [self._codepoint_to_id.get(ord(c), self.unk_id) for c in s]

    def _decode(self, ids):
        chars = []
        for i in ids:
            codepoint = self._id_to_codepoint.get(int(i), self.UNK_CODEPOINT)
            if codepoint != self.EOS_CODEPOINT:
                chars.append(chr(codepoint))
        return "".join(chars)

    def _encode_tf(self, s):
        return self._codepoint_to_id_tf[tf.strings.unicode_decode(s, input_encoding="UTF-8")]

    def _decode_tf(self, ids):
        return tf.strings.unicode_encode(self._id_to_codepoint_tf[ids], output_encoding="UTF-8")

    def __eq__(self, other):
        return (isinstance(other, PartialCodepointVocabulary)
                and self._codepoint_to_id == other._codepoint_to_id
                and self.extra_ids == other.extra_ids)

    def __hash__(self):
        return hash((PartialCodepointVocabulary, len(self._codepoint_to_id), self.extra_ids))


class BertWordPieceVocabulary(Vocabulary):
    """BERT's WordPiece tokenizer (`tensorflow_text.BertTokenizer`) over a vocab.txt file."""

    def __init__(self, vocab_lookup_table: str, suffix_indicator: str = "##",
                 max_bytes_per_word: int = 100, max_chars_per_token: Optional[int] = None,
                 token_out_type: tf.dtypes.DType = tf.dtypes.int64,
                 unknown_token: str = "[UNK]", split_unknown_characters: bool = False,
                 lower_case: bool = False, keep_whitespace: bool = False,
                 normalization_form: Optional[str] = None,
                 preserve_unused_token: bool = False, pad_id: int = 0,
                 start_of_sequence_id: int = 101, end_of_sequence_id: int = 102):
        import tensorflow_text as tf_text  # pylint: disable=import-outside-toplevel
        self._tokenizer = tf_text.BertTokenizer(
            vocab_lookup_table=vocab_lookup_table, suffix_indicator=suffix_indicator,
            max_bytes_per_word=max_bytes_per_word, max_chars_per_token=max_chars_per_token,
            token_out_type=token_out_type, unknown_token=unknown_token,
            split_unknown_characters=split_unknown_characters, lower_case=lower_case,
            keep_whitespace=keep_whitespace, normalization_form=normalization_form,
            preserve_unused_token=preserve_unused_token)
        self._vocab = self._tokenizer._wordpiece_tokenizer._vocab_lookup_table
        self._pad_id = pad_id
        self._unk_id = self._vocab.lookup(tf.constant(unknown_token)).numpy()
        self._sos_id = start_of_sequence_id
        self._eos_id = end_of_sequence_id
        with tf.io.gfile.GFile(vocab_lookup_table, "rb") as f:
            self._wp_model = f.read()
        super().__init__()

    @property
    def sos_id(self) -> Optional[int]:
        return self._sos_id

    @property
    def eos_id(self) -> Optional[int]:
        return self._eos_id

    @property
    def unk_id(self) -> Optional[int]:
        return self._unk_id

    @property
    def pad_id(self) -> Optional[int]:
        return self._pad_id

    @property
    def _base_vocab_size(self):
        return int(self._vocab.size().numpy())

    @property
    def tokenizer(self):
        return self._tokenizer

    @property
    def tf_tokenizer(self):
        return self._tokenizer

    @property
    def vocab_size(self):
        return self._base_vocab_size

    def _encode(self, s):
        return self._encode_tf(s).numpy()

    def _decode(self, ids):
        return self._decode_tf(tf.constant(ids)).numpy().decode("UTF-8")

    def _encode_tf(self, s):
        return tf.squeeze(self._tokenizer.tokenize(s).to_tensor())

    def _decode_tf(self, ids):
        ids = tf.RaggedTensor.from_tensor(tf.expand_dims(ids, axis=1))
        tokens = self._tokenizer.detokenize(ids)
        return tf.strings.reduce_join(tokens.flat_values, separator=" ")

    def __eq__(self, other):
        return (isinstance(other, BertWordPieceVocabulary)
                and hashlib.md5(self._wp_model).digest() == hashlib.md5(
                    other._wp_model).digest() and self._sos_id == other._sos_id)

    def __hash__(self):
        return hash((BertWordPieceVocabulary, hashlib.md5(self._wp_model).hexdigest()))
