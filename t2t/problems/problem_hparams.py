"""T2T's `data_generators/problem_hparams.py`: problem hparams for testing model bodies.

Model tests ported from T2T build a model without a dataset:

    from t2t.problems import problem_hparams
    p_hparams = problem_hparams.test_problem_hparams(vocab_size, vocab_size, hparams)
    p_hparams.modality      # {"inputs": "symbol", "targets": "symbol"}
    p_hparams.vocab_size    # {"inputs": vocab_size, "targets": vocab_size}
    model = lstm.LSTMSeq2seq(hparams, ModeKeys.TRAIN, p_hparams)

It also registers T2T's two hparams-only Penn Treebank parsing problems, which generate
no data (their TFRecords and subword vocabularies come from elsewhere, e.g. T2T's):

    p = registry.problem("parsing_english_ptb8k")   # one vocab, data_dir/vocab.endefr.8192
    hp = p.get_hparams(model_hparams)               # model_hparams.data_dir holds the vocab
    hp.loss_multiplier, hp.target_space_id          # 2.0, SpaceID.PARSE_TOK (15)
    # parsing_english_ptb16k: data_dir/wsj_source.vocab.512 and wsj_target.vocab.16384

T2T's TIMIT problems here used audio modalities t2t does not have; t2t leaves them out.
"""
import os

import tensorflow as tf

from t2t.core import errors
from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.layers.modality_type import ModalityType
from t2t.problems import problem
from t2t.problems import spaces


def _subword_encoder(problem_name, data_dir, filename):
    """The SubwordTextEncoder of data_dir/filename, or a one-line error naming the fix."""
    if not data_dir:
        raise errors.UserError("problem %s reads its vocabulary %s from the data directory: "
                               "pass --data_dir (hparams.data_dir)" % (problem_name, filename))
    path = os.path.join(data_dir, filename)
    if not tf.io.gfile.exists(path):
        raise errors.UserError("vocabulary %s of problem %s is missing; %s generates no data, "
                               "copy the vocabulary (and its TFRecords) into %s"
                               % (path, problem_name, problem_name, data_dir))
    return text_encoder.SubwordTextEncoder(path)


def _symbol_to_symbol_hparams(hp, encoders):
    hp.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.SYMBOL}
    hp.vocab_size = {"inputs": encoders["inputs"].vocab_size,
                     "targets": encoders["targets"].vocab_size}
    hp.input_space_id = spaces.SpaceID.EN_TOK
    hp.target_space_id = spaces.SpaceID.PARSE_TOK


@registry.register_problem
class ParsingEnglishPtb8k(problem.Problem):
    """Sentences -> linearized Penn Treebank parses, one 8k subword vocab for both sides.

    No data generation (as in T2T): data_dir holds `vocab.endefr.8192` and the TFRecords
    `parsing_english_ptb8k-{train,dev}-*`. Batches count 256x longer sequences and the loss
    is doubled (T2T's batch_size_multiplier and loss_multiplier).
    """

    @property
    def target_vocab_size(self):
        return 2 ** 13  # 8192

    def feature_encoders(self, data_dir):
        encoder = _subword_encoder(self.name, data_dir,
                                   "vocab.endefr.%d" % self.target_vocab_size)
        return {"inputs": encoder, "targets": encoder}

    def hparams(self, defaults, model_hparams):
        del model_hparams
        _symbol_to_symbol_hparams(defaults, self.get_feature_encoders())
        defaults.batch_size_multiplier = 256
        defaults.loss_multiplier = 2.0


@registry.register_problem
class ParsingEnglishPtb16k(problem.Problem):
    """Sentences -> linearized parses: a 512-subword source and a 16k-subword target vocab.

    No data generation (as in T2T): data_dir holds `wsj_source.vocab.512`,
    `wsj_target.vocab.16384` and the TFRecords `parsing_english_ptb16k-{train,dev}-*`.
    """

    @property
    def vocab_prefix(self):
        return "wsj"

    @property
    def inputs_target_vocab_size(self):
        return 2 ** 9  # 512

    @property
    def targets_target_vocab_size(self):
        return 2 ** 14  # 16384

    def feature_encoders(self, data_dir):
        return {
            "inputs": _subword_encoder(self.name, data_dir, "%s_source.vocab.%d" % (
                self.vocab_prefix, self.inputs_target_vocab_size)),
            "targets": _subword_encoder(self.name, data_dir, "%s_target.vocab.%d" % (
                self.vocab_prefix, self.targets_target_vocab_size)),
        }

    def hparams(self, defaults, model_hparams):
        del model_hparams
        _symbol_to_symbol_hparams(defaults, self.get_feature_encoders())


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
