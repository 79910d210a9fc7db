"""Icelandic sentences to flattened parse trees (T2T 1.15.7's `ice_parsing`).

    t2t-datagen --problem=parsing_icelandic16k --data_dir=~/t2t_data --tmp_dir=~/ice

Nothing is downloaded: put into --tmp_dir, as T2T,

    parsing_train.pairs, parsing_dev.pairs   UTF-8, one "sentence<TAB>parse tree" a line, e.g.
        Hún fór heim .\t(S (NP-SBJ fn_nf_et ) (VP sfg3eþ ) (ADVP-DIR heim ) . )

and each line becomes `{"inputs": "Hún fór heim .", "targets": "(S (NP-SBJ ..."}`, encoded by
two subword vocabularies built from the training file's columns: `ice_source.tokens.vocab.16384`
(sentences) and `ice_target.tokens.vocab.256` (trees), both in --data_dir. Ten training shards
and one dev shard, as T2T. A missing file is a one-line error naming it.
"""
import os

import tensorflow as tf

from t2t.core import errors
from t2t.core import registry
from t2t.data import generator_utils
from t2t.encoders import text_encoder
from t2t.layers.modality_type import ModalityType
from t2t.problems import problem
from t2t.problems import spaces
from t2t.problems import text2text


def _pairs_path(tmp_dir, train):
    """tmp_dir/parsing_{train,dev}.pairs, or a UserError naming it when it is missing."""
    path = os.path.join(tmp_dir, "parsing_%s.pairs" % ("train" if train else "dev"))
    if not tf.io.gfile.exists(path):
        raise errors.UserError("ice_parsing: %s is missing; put one 'sentence<TAB>parse tree' "
                               "line per example there (or pass the folder that holds it as "
                               "--tmp_dir)" % path)
    return path


def tabbed_parsing_token_generator(data_dir, tmp_dir, train, prefix,
                                   source_vocab_size, target_vocab_size):
    """Encoded {"inputs", "targets"} of parsing_{train,dev}.pairs, with EOS on each side.

    The vocabularies `<prefix>_source.tokens.vocab.<n>` and `<prefix>_target.tokens.vocab.<m>`
    are loaded from data_dir, or built from that file's two columns (T2T: the train call
    comes first, so both are built from the training file) and stored there:

        tabbed_parsing_token_generator("/d", "/tmp", True, "ice", 2**14, 2**8)
        # -> iterator of {"inputs": [ids..., 1], "targets": [ids..., 1]}
    """
    path = _pairs_path(tmp_dir, train)
    filename = os.path.basename(path)
    source_vocab = generator_utils.get_or_generate_tabbed_vocab(
        data_dir, tmp_dir, filename, 0,
        "%s_source.tokens.vocab.%d" % (prefix, source_vocab_size), source_vocab_size)
    target_vocab = generator_utils.get_or_generate_tabbed_vocab(
        data_dir, tmp_dir, filename, 1,
        "%s_target.tokens.vocab.%d" % (prefix, target_vocab_size), target_vocab_size)
    return text2text.text2text_generate_encoded(
        text2text.text2text_txt_tab_iterator(path), source_vocab, target_vocab)


def tabbed_parsing_character_generator(tmp_dir, train):
    """Byte-encoded (ids byte + 2) {"inputs", "targets"} of parsing_{train,dev}.pairs.

        tabbed_parsing_character_generator("/tmp", False)
        # "ab\\t(S)" -> {"inputs": [99, 100, 1], "targets": [42, 85, 43, 1]}
    """
    return text2text.text2text_generate_encoded(
        text2text.text2text_txt_tab_iterator(_pairs_path(tmp_dir, train)),
        text_encoder.ByteTextEncoder())


@registry.register_problem
class ParsingIcelandic16k(problem.Problem):
    """Problem spec for parsing tokenized Icelandic text to constituency trees."""

    @property
    def source_vocab_size(self):
        return 2**14  # 16384

    @property
    def targeted_vocab_size(self):
        return 2**8  # 256

    @property
    def input_space_id(self):
        return spaces.SpaceID.ICE_TOK

    @property
    def target_space_id(self):
        return spaces.SpaceID.ICE_PARSE_TOK

    @property
    def num_shards(self):
        return 10

    def _vocab_paths(self, data_dir):
        return (os.path.join(data_dir, "ice_source.tokens.vocab.%d" % self.source_vocab_size),
                os.path.join(data_dir, "ice_target.tokens.vocab.%d" % self.targeted_vocab_size))

    def feature_encoders(self, data_dir):
        if not data_dir:
            raise errors.UserError("%s: its subword vocabularies live in --data_dir; pass "
                                   "--data_dir (where t2t-datagen wrote them)" % self.name)
        encoders = {}
        for feature, path in zip(("inputs", "targets"), self._vocab_paths(data_dir)):
            if not tf.io.gfile.exists(path):
                raise errors.UserError("%s: vocabulary %s is missing; run t2t-datagen "
                                       "--problem=%s with this --data_dir first"
                                       % (self.name, path, self.name))
            encoders[feature] = text_encoder.SubwordTextEncoder(path)
        return encoders

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        del task_id
        # Both files first: a missing dev file fails before anything is written.
        for train in (True, False):
            _pairs_path(tmp_dir, train)
        sizes = (self.source_vocab_size, self.targeted_vocab_size)
        generator_utils.generate_dataset_and_shuffle(
            tabbed_parsing_token_generator(data_dir, tmp_dir, True, "ice", *sizes),
            self.training_filepaths(data_dir, self.num_shards, shuffled=False),
            tabbed_parsing_token_generator(data_dir, tmp_dir, False, "ice", *sizes),
            self.dev_filepaths(data_dir, 1, shuffled=False))

    def hparams(self, defaults, unused_model_hparams):
        p = defaults
        p.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.SYMBOL}
        # T2T gave the targets 256 (the *requested* size); a built subword vocabulary is only
        # near it, so ids could reach past the softmax. Both sides use the real sizes.
        p.vocab_size = {"inputs": self._encoders["inputs"].vocab_size,
                        "targets": self._encoders["targets"].vocab_size}
        p.input_space_id = self.input_space_id
        p.target_space_id = self.target_space_id
        p.loss_multiplier = 2.5  # Rough estimate of avg number of tokens per word
