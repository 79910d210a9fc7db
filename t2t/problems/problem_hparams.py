"""T2T's `data_generators/problem_hparams.py`: problem hparams for testing model bodies.

Model tests ported from T2T build a model without a dataset:

    from t2t.problems import problem_hparams
    p_hparams = problem_hparams.test_problem_hparams(vocab_size, vocab_size, hparams)
    p_hparams.modality      # {"inputs": "symbol", "targets": "symbol"}
    p_hparams.vocab_size    # {"inputs": vocab_size, "targets": vocab_size}
    model = lstm.LSTMSeq2seq(hparams, ModeKeys.TRAIN, p_hparams)

T2T's module also registered hparams-only problems for TIMIT audio and Penn Treebank
parsing (no data generators, and modalities t2t does not have); t2t leaves them out.
"""
from t2t.layers.modality_type import ModalityType
from t2t.problems import problem


class TestProblem(problem.Problem):
    """A symbol-to-symbol problem with the given vocab sizes and no data."""

    def __init__(self, input_vocab_size, target_vocab_size):
        super().__init__(False, False)
        self.input_vocab_size = input_vocab_size
        self.target_vocab_size = target_vocab_size

    def hparams(self, defaults, model_hparams):
        del model_hparams
        defaults.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.SYMBOL}
        defaults.vocab_size = {"inputs": self.input_vocab_size,
                               "targets": self.target_vocab_size}


def test_problem_hparams(input_vocab_size=None, target_vocab_size=None, model_hparams=None):
    """The hparams of a `TestProblem` (T2T's signature and result)."""
    return TestProblem(input_vocab_size, target_vocab_size).get_hparams(model_hparams)


test_problem_hparams.__test__ = False  # a helper, not a pytest test
TestProblem.__test__ = False
