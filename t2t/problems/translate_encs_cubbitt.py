"""English -> Czech with block back-translation, CUBBITT (T2T 1.15.7's `translate_encs_cubbitt`).

    t2t-datagen --problem=translate_encs_cubbitt --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

Needs back-translated (synthetic) data in --tmp_dir: `cs_mono_en.txt{0,1,2}` with
`cs_mono_cs.txt{0,1,2}`, each about as large as the WMT training data (translate Czech
monolingual text yourself, or take CzEng 2.0's "csmono" part, which comes with synthetic
English). The training shard holds, for each file pair, its synthetic pairs and then the
WMT en-cs pairs, unshuffled; average checkpoints (t2t-avg-all) for the best results. The
vocabulary is translate_encs_wmt32k's.
"""
from t2t.core import registry
from t2t.problems import translate
from t2t.problems import translate_encs


@registry.register_problem
class TranslateEncsCubbitt(translate.BlockBacktranslation, translate_encs.TranslateEncsWmt32k):
    """CUBBITT (CUni Block-Backtranslation-Improved Transformer Translation), English -> Czech."""

    @property
    def use_vocab_from_other_problem(self):
        return translate_encs.TranslateEncsWmt32k()

    @property
    def backtranslate_data_filenames(self):
        return [("cs_mono_en.txt%d" % i, "cs_mono_cs.txt%d" % i) for i in [0, 1, 2]]
