"""Shared helpers of the t2t.seqio tests."""
import random

WORDS = ("the cat sat on a mat while the dog ran to the park and a bird sang in the tree "
         "over green hills under blue sky near old towns with small rivers").split()


def corpus_lines(count=300, seed=0):
    """Deterministic sentences of WORDS: "the dog ran to a park", ..."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(count)]


def train_sentencepiece(folder, lines, vocab_size=64):
    """A SentencePiece unigram model with PAD=0, EOS=1, UNK=2 (T5's layout); its path."""
    import sentencepiece as spm
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    prefix = str(folder / "spm")
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=prefix, vocab_size=vocab_size, model_type="unigram",
        pad_id=0, eos_id=1, unk_id=2, bos_id=-1, hard_vocab_limit=False,
        character_coverage=1.0, minloglevel=2)
    return prefix + ".model"


def build_tiny_tfds(data_dir):
    """Builds the TFDS dataset "t2t_seqio_tiny:1.0.0" in `data_dir`: question/answer text
    pairs q<i>/a<i>, i in 0..9 (train) and 100..103 (validation)."""
    import tensorflow_datasets as tfds

    try:
        builder_cls = tfds.builder_cls("t2t_seqio_tiny")
    except Exception:  # pylint: disable=broad-except  (not registered yet)
        class T2tSeqioTiny(tfds.core.GeneratorBasedBuilder):
            """Defined in this one-part module: TFDS locates a builder's code by module."""

            VERSION = tfds.core.Version("1.0.0")

            def _info(self):
                return tfds.core.DatasetInfo(builder=self, features=tfds.features.FeaturesDict(
                    {"question": tfds.features.Text(), "answer": tfds.features.Text()}))

            def _split_generators(self, dl_manager):
                return {"train": self._generate_examples(0, 10),
                        "validation": self._generate_examples(100, 4)}

            def _generate_examples(self, start, count):
                for i in range(start, start + count):
                    yield i, {"question": "q%d" % i, "answer": "a%d" % i}

        builder_cls = T2tSeqioTiny
    builder_cls(data_dir=str(data_dir)).download_and_prepare()
