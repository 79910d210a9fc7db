"""Hparams helpers shared by models and trainers: copying, attaching a problem, test problems.

    hp = registry.hparams("transformer_tiny")
    add_problem_hparams(hp, "algorithmic_reverse_binary40")
    hp.problem                          # the Problem instance (an attribute, not an hparam)
    hp.problem_hparams.vocab_size       # {"inputs": 4, "targets": 4}
    hp2 = copy_hparams(hp)              # independent values, same problem objects

    p_hp = test_problem_hparams(input_vocab_size=5, target_vocab_size=7)
    p_hp.modality                       # {"inputs": "symbol", "targets": "symbol"}

As in T2T, `problem` and `problem_hparams` are plain attributes of the HParams: they are
not in `hparams.values()`, so they never reach `hparams.json`.
"""
import copy

from t2t.core import hparam
from t2t.core import registry
from t2t.layers.modality_type import ModalityType
from t2t.problems import problem_hparams_schema

# Attributes carried by reference from one HParams to its copy (T2T's `copy_hparams`).
_SHARED_ATTRIBUTES = ("problem", "problem_hparams")


def copy_hparams(hparams):
    """A copy whose values can change without touching `hparams`.

    Containers (the per-feature `bottom`/`top`/`loss`/`weights_fn`/`name` dicts, lists) are
    copied one level deep so that adding an entry to the copy does not change the original;
    `problem` and `problem_hparams` are shared, as in T2T.

        hp = hparam.HParams(dropout=0.1, weights_fn={})
        hp2 = copy_hparams(hp)
        hp2.weights_fn["targets"] = len
        hp.weights_fn                    # {}
    """
    values = {name: (copy.copy(value) if isinstance(value, (dict, list)) else value)
              for name, value in hparams.values().items()}
    new_hparams = hparam.HParams(**values)
    new_hparams.set_model_structure(hparams.get_model_structure())
    for attr in _SHARED_ATTRIBUTES:
        value = getattr(hparams, attr, None)
        if value is not None:
            set_attribute(new_hparams, attr, value)
    return new_hparams


def set_attribute(hparams, name, value):
    """Attach `value` as a plain attribute (not an hparam), as T2T's `hparams.problem = p`.

    An existing hparam of that name is set instead, so both styles stay readable.
    """
    if name in hparams:
        setattr(hparams, name, value)
    else:
        object.__setattr__(hparams, name, value)


def attached_problem(hparams, needed_by=None):
    """The Problem `add_problem_hparams` attached to `hparams` (T2T's `hparams.problem`).

    T2T's public entry points receive their problem this way (a model_fn's hparams,
    `create_estimator`, `decode_from_file`, ...): each reads it here once and hands it to
    the code below as an argument, so nothing deeper depends on an attribute by name.

        add_problem_hparams(hp, "algorithmic_reverse_binary40")
        attached_problem(hp).name                     # "algorithmic_reverse_binary40"
        attached_problem(HParams(), "decoding")       # ValueError: decoding needs a problem ...
        attached_problem(HParams())                   # None

    Args:
      hparams: model hparams (any object; None has no problem).
      needed_by: what needs the problem, for the error; None returns None when there is none.

    Raises:
      ValueError: `needed_by` is given and no problem is attached.
    """
    problem = getattr(hparams, "problem", None) if hparams is not None else None
    if problem is None and needed_by is not None:
        raise ValueError("%s needs a problem attached to its hparams; call "
                         "t2t_model.add_problem_hparams(hparams, problem_name) first" % needed_by)
    return problem


def attached_problem_hparams(hparams, needed_by=None):
    """The problem's hparams `add_problem_hparams` attached (`hparams.problem_hparams`):
    modality, vocab_size, vocabulary, space ids. As `attached_problem`, read once at an
    entry point (a model, an export) and passed on.

        attached_problem_hparams(hp).vocab_size      # {"inputs": 4, "targets": 4}
    """
    p_hparams = getattr(hparams, "problem_hparams", None) if hparams is not None else None
    if p_hparams is None and needed_by is not None:
        raise ValueError("%s needs a problem attached to its hparams; call "
                         "t2t_model.add_problem_hparams(hparams, problem_name) first" % needed_by)
    return p_hparams


def add_problem_hparams(hparams, problem_name_or_instance):
    """Attach a problem and its hparams to model hparams: `hparams.problem(_hparams)`.

    `problem_name_or_instance` is a registered problem name ("ende_rev" works) or a Problem.

        add_problem_hparams(hp, "algorithmic_identity_binary40")
        hp.problem_hparams.modality["targets"]     # "symbol"
    """
    if isinstance(problem_name_or_instance, str):
        problem = registry.problem(problem_name_or_instance)
    elif hasattr(problem_name_or_instance, "get_hparams"):
        problem = problem_name_or_instance
    else:
        raise ValueError("add_problem_hparams: expected a problem name or a Problem instance, "
                         "got %r" % (problem_name_or_instance,))
    p_hparams = problem.get_hparams(hparams)
    set_attribute(hparams, "problem", problem)
    set_attribute(hparams, "problem_hparams", p_hparams)
    return hparams


def test_problem_hparams(input_vocab_size=None, target_vocab_size=None, model_hparams=None,
                         input_modality=ModalityType.SYMBOL,
                         target_modality=ModalityType.SYMBOL):
    """Problem hparams for testing model bodies without a registered Problem.

    Symbol inputs and targets with the given vocab sizes (no "inputs" at all when
    `input_vocab_size` is None: a decoder-only problem). Other fields have the defaults
    every Problem starts from.

        p_hp = test_problem_hparams(4, 6)
        p_hp.vocab_size            # {"inputs": 4, "targets": 6}
        p_hp.loss_multiplier       # 1.0
    """
    del model_hparams  # Accepted for T2T's signature; these hparams do not depend on it.
    if target_vocab_size is None:
        raise ValueError("test_problem_hparams needs target_vocab_size (an int)")
    modality = {"targets": target_modality}
    vocab_size = {"targets": target_vocab_size}
    if input_vocab_size is not None:
        modality["inputs"] = input_modality
        vocab_size["inputs"] = input_vocab_size
    p_hparams = problem_hparams_schema.default_problem_hparams()
    p_hparams.modality = modality
    p_hparams.vocab_size = vocab_size
    return problem_hparams_schema.add_encoder_hparams(p_hparams, {})
