"""Fixtures of the t2t.seqio tests: empty registries around each test, a SentencePiece model
trained here on a small generated corpus."""
import os

import pytest

from t2t.seqio import dataset_providers

WORDS = ("the cat sat on a mat while the dog ran to the park and a bird sang in the tree "
         "over green hills under blue sky near old towns with small rivers").split()


def corpus_lines(count=300, seed=0):
    """Deterministic sentences of WORDS."""
    import random
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(count)]


@pytest.fixture(autouse=True)
def clean_registries():
    dataset_providers.TaskRegistry.reset()
    dataset_providers.MixtureRegistry.reset()
    yield
    dataset_providers.TaskRegistry.reset()
    dataset_providers.MixtureRegistry.reset()


@pytest.fixture(scope="session")
def spm_model_file(tmp_path_factory):
    """A SentencePiece unigram model with PAD=0, EOS=1, UNK=2 (T5's layout)."""
    import sentencepiece as spm
    folder = tmp_path_factory.mktemp("spm")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(corpus_lines()) + "\n", encoding="utf-8")
    prefix = str(folder / "spm")
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=prefix, vocab_size=64, model_type="unigram",
        pad_id=0, eos_id=1, unk_id=2, bos_id=-1, hard_vocab_limit=False,
        character_coverage=1.0, minloglevel=2)
    return prefix + ".model"
