"""Word-level data for a pointer-generator Transformer: copyable source OOVs (T2T 1.15.7's
`pointer_generator_word`).

    t2t-datagen --problem=text2text_copyable_tokens --tmp_dir=~/my_text --data_dir=~/t2t_data

reads, as `text2text_tmpdir_tokens` does, `{inputs,targets}.{train,eval}.txt` (one
sentence a line) and the word list `vocab.txt` from --tmp_dir, and writes besides `inputs`
and `targets` (OOV words as `<UNK>`) the features `inputs_extend` and `targets_extend`, where
the i-th distinct out-of-vocabulary word of the source has the temporary id
`vocab_size + i`, so the decoder can copy it; a target OOV that is not in the source stays
`<UNK>`. With the vocabulary PAD, EOS, `<UNK>`, `the`, `cat` (sizes 5):

    inputs  "the zebra saw a zebra"  -> inputs        [3, 2, 2, 2, 2, 1]
                                        inputs_extend [3, 5, 6, 7, 5, 1]
    targets "a zebra cat dog"        -> targets       [2, 2, 4, 2, 1]
                                        targets_extend [7, 5, 4, 2, 1]
"""
import os

import tensorflow as tf

from t2t.core import errors
from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)
from t2t.problems import text_problems_tmpdir


@registry.register_problem
class Text2textCopyableTokens(text_problems_tmpdir.Text2textTmpdirTokens):
    """Allows training a variant of Text2textTmpdirTokens that supports copying.

    Handling the case where the input contains OOV tokens. Store a temporary vocab
    ID for source OOV, so that the decoder can directly copy from the input.
    Uses TokenTextEncoderOov as the vocab encoder.
    """

    def get_or_create_vocab(self, data_dir, tmp_dir, force_get=False):
        """The TokenTextEncoderOov of data_dir's word list (written by generate_samples)."""
        del tmp_dir, force_get
        vocab_path = self._vocab_path(data_dir)
        if not tf.io.gfile.exists(vocab_path):
            raise errors.UserError(
                "token vocabulary %s of problem %s is missing; run t2t-datagen --problem=%s "
                "with vocab.txt in --tmp_dir first" % (vocab_path, self.name, self.name))
        return TokenTextEncoderOov(vocab_path, replace_oov=self.oov_token)

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        generator = self.generate_samples(data_dir, tmp_dir, dataset_split)
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        return self.text2text_generate_encoded_oovs(generator, encoder,
                                                    has_inputs=self.has_inputs)

    def text2text_generate_encoded_oovs(self, sample_generator, vocab, targets_vocab=None,
                                        has_inputs=True):
        """Each sample with `inputs`, `inputs_extend`, `targets`, `targets_extend` ids + EOS."""
        targets_vocab = targets_vocab or vocab
        for sample in sample_generator:
            source_oovs = {}
            if has_inputs:
                sample["inputs"], sample["inputs_extend"], source_oovs, _ = vocab.encode(
                    sample["inputs"])
                sample["inputs"].append(text_encoder.EOS_ID)
                sample["inputs_extend"].append(text_encoder.EOS_ID)
            # The target encoder needs the source OOV tokens.
            sample["targets"], sample["targets_extend"] = targets_vocab.encode_target(
                sample["targets"], source_oovs)
            sample["targets"].append(text_encoder.EOS_ID)
            sample["targets_extend"].append(text_encoder.EOS_ID)
            yield sample

    def example_reading_spec(self):
        data_fields = {name: tf.io.VarLenFeature(tf.int64)
                       for name in ("inputs", "inputs_extend", "targets", "targets_extend")}
        return data_fields, None


class TokenTextEncoderOov(text_encoder.TokenTextEncoder):
    """Encoder based on a user-supplied vocabulary (file or list).

    This encoder extends over TokenTextEncoder by additionally assigning distinct
    temporary IDs to OOV tokens appearing in the source sequence. This facilitates
    decoding with the pointer-generator mechanism using word-based tokenization.

    NOTE: TokenTextEncoderOov does not conform to the TextEncoder API; it changes
    the signature of encode and decode.

        enc = TokenTextEncoderOov(None, vocab_list=["<pad>", "<EOS>", "<UNK>", "the"],
                                  replace_oov="<UNK>")
        enc.encode("the gnu")       # ([3, 2], [3, 4], {"gnu": 0}, ["gnu"])
        enc.decode_oov([3, 4], ["gnu"])  # "the gnu"
    """

    def _unk_id(self):
        if self._replace_oov not in self._token_to_id:
            raise ValueError("TokenTextEncoderOov: replace_oov %r is not in the vocabulary; "
                             "pass a token of it" % (self._replace_oov,))
        return self._token_to_id[self._replace_oov]

    def encode(self, s):
        """(ids, ids_extend, oovs, source_oov_id_to_token) of a space-separated string.

        `ids` has the OOV token for each unknown word; `ids_extend` has `vocab_size + n` for
        the n-th distinct unknown word (e.g. 50000, 50001, 50002 for a 50k vocabulary and 3
        OOVs). `oovs` maps each unknown word to its n, `source_oov_id_to_token` lists them
        in that order.
        """
        ids, ids_extend, oovs = [], [], {}
        for token in s.strip().split():
            if token in self._token_to_id:
                ids.append(self._token_to_id[token])
                ids_extend.append(self._token_to_id[token])
            else:
                oov_num = oovs.setdefault(token, len(oovs))
                ids_extend.append(self.vocab_size + oov_num)
                ids.append(self._unk_id())
        source_oov_id_to_token = sorted(oovs, key=oovs.get)
        if self._reverse:
            return ids[::-1], ids_extend[::-1], oovs, source_oov_id_to_token
        return ids, ids_extend, oovs, source_oov_id_to_token

    def encode_target(self, target, source_oovs):
        """(ids, ids_extend) of a target string: a target OOV that is a source OOV gets its
        temporary id in `ids_extend`; any other OOV is the OOV token in both."""
        ids, ids_extend = [], []
        for token in target.strip().split():
            if token in self._token_to_id:
                ids.append(self._token_to_id[token])
                ids_extend.append(self._token_to_id[token])
            else:
                ids.append(self._unk_id())
                ids_extend.append(self.vocab_size + source_oovs[token] if token in source_oovs
                                  else self._unk_id())
        if self._reverse:
            return ids[::-1], ids_extend[::-1]
        return ids, ids_extend

    def decode_oov(self, ids, source_oov):
        return " ".join(self.decode_list_oov(ids, source_oov))

    def decode_list_oov(self, ids, source_oov_id_to_token):
        """The tokens of `ids`, a temporary id `vocab_size + n` being the n-th source OOV."""
        seq = reversed(ids) if self._reverse else ids
        tokens = []
        for cur_id in seq:
            if cur_id in self._id_to_token:
                tokens.append(self._id_to_token[cur_id])
            elif 0 <= cur_id - self.vocab_size < len(source_oov_id_to_token):
                tokens.append(source_oov_id_to_token[cur_id - self.vocab_size])
            else:
                raise ValueError("TokenTextEncoderOov: id %d is neither in the vocabulary (%d) "
                                 "nor one of the %d source OOVs" % (
                                     cur_id, self.vocab_size, len(source_oov_id_to_token)))
        return tokens
