"""Which modules register t2t's built-in problems, models, hparams sets and optimizers.

The registry imports them by name on the first look-up of their kind, the same way
`usr_dir` imports a user's folder, so `registry.problem("translate_ende_wmt8k")` works
without importing every dataset module first, and `core` stays free of imports of the
packages above it.

    builtins.load("problems")          # imports every module in BUILTIN_MODULES["problems"]
    builtins.import_modules(["t2t.models.lstm"])

**A new module that registers something goes in the table below.** A module whose
optional third-party dependency is missing is skipped with a warning instead of breaking
every other registration; a missing t2t module is a bug and raises.
"""
import importlib
import logging
from typing import Dict, Iterable, Tuple

BUILTIN_MODULES: Dict[str, Tuple[str, ...]] = {
    "problems": (
        "t2t.problems.algorithmic",
        "t2t.problems.algorithmic_math",
        "t2t.problems.algorithmic_math_deepmind",
        "t2t.problems.algorithmic_math_two_variables",
        "t2t.problems.babi_qa",
        "t2t.problems.cipher",
        "t2t.problems.cnn_dailymail",
        "t2t.problems.cola",
        "t2t.problems.conll_ner",
        "t2t.problems.desc2code",
        "t2t.problems.dialog_cornell",
        "t2t.problems.dialog_dailydialog",
        "t2t.problems.dialog_opensubtitles",
        "t2t.problems.dialog_personachat",
        "t2t.problems.enwik8",
        "t2t.problems.function_docstring",
        "t2t.problems.ice_parsing",
        "t2t.problems.imdb",
        "t2t.problems.lambada",
        "t2t.problems.lm1b",
        "t2t.problems.lm1b_imdb",
        "t2t.problems.lm1b_mnli",
        "t2t.problems.masked_lm",
        "t2t.problems.mrpc",
        "t2t.problems.multinli",
        "t2t.problems.paraphrase_ms_coco",
        "t2t.problems.pointer_generator_word",
        "t2t.problems.program_search",
        "t2t.problems.problem_hparams",
        "t2t.problems.ptb",
        "t2t.problems.qnli",
        "t2t.problems.quora_qpairs",
        "t2t.problems.rte",
        "t2t.problems.scitail",
        "t2t.problems.squad",
        "t2t.problems.sst_binary",
        "t2t.problems.stanford_nli",
        "t2t.problems.style_transfer",
        "t2t.problems.subject_verb_agreement",
        "t2t.problems.text_problems_tmpdir",
        "t2t.problems.transduction_problems",
        "t2t.problems.translate_encs",
        "t2t.problems.translate_encs_cubbitt",
        "t2t.problems.translate_ende",
        "t2t.problems.translate_enes",
        "t2t.problems.translate_enet",
        "t2t.problems.translate_enfr",
        "t2t.problems.translate_enid",
        "t2t.problems.translate_enmk",
        "t2t.problems.translate_enro",
        "t2t.problems.translate_entn",
        "t2t.problems.translate_envi",
        "t2t.problems.translate_enzh",
        "t2t.problems.translate_multi30k",
        "t2t.problems.tydiqa",
        "t2t.problems.wiki",
        "t2t.problems.wiki_lm",
        "t2t.problems.wiki_multi_problems",
        "t2t.problems.wiki_revision",
        "t2t.problems.wikitext103",
        "t2t.problems.wnli",
        "t2t.problems.wsj_parsing",
        "t2t.problems.yelp_full",
        "t2t.problems.yelp_polarity",
    ),
    "models": (
        "t2t.layers.common_hparams",
        "t2t.models.basic",
        "t2t.models.bytenet",
        "t2t.models.distillation",
        "t2t.models.evolved_transformer",
        "t2t.models.lstm",
        "t2t.models.neural_gpu",
        "t2t.models.research.attention_lm",
        "t2t.models.research.attention_lm_moe",
        "t2t.models.research.neural_stack",
        "t2t.models.research.residual_shuffle_exchange",
        "t2t.models.research.shuffle_network",
        "t2t.models.research.similarity_transformer",
        "t2t.models.research.transformer_aux",
        "t2t.models.research.universal_transformer",
        "t2t.models.slicenet",
        "t2t.models.text_cnn",
        "t2t.models.transformer",
        "t2t.models.transformer_encoder_mlm",
        "t2t.models.transformer_hparams",
        "t2t.models.transformer_multi30k",
        "t2t.models.transformer_span",
    ),
    "optimizers": (
        "t2t.optim.optimize",
    ),
}
# hparams sets and ranged hparams are registered beside their models.
KIND_TO_TABLE = {"problems": "problems", "models": "models", "hparams": "models",
                 "ranged_hparams": "models", "optimizers": "optimizers"}

_logger = logging.getLogger(__name__)
_loaded = set()


def import_modules(modules: Iterable[str]) -> None:
    """Import each module; skip (with a warning) one whose third-party dependency is missing."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as error:
            missing = getattr(error, "name", "") or ""
            if missing.startswith("t2t"):
                raise
            _logger.warning("skipped %s: %s", module, error)


def load(kind: str) -> None:
    """Import the built-in registrations of `kind` ("problems", "hparams", ...) once."""
    table = KIND_TO_TABLE.get(kind)
    if table is None or table in _loaded:
        return
    _loaded.add(table)
    import_modules(BUILTIN_MODULES[table])
