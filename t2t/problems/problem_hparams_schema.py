"""The problem hparams schema: the one a Problem's `get_hparams` fills, and its _rev/_copy variants.

    hp = default_problem_hparams()
    hp.modality, hp.vocab_size, hp.input_space_id     # {}, {}, 0
    add_encoder_hparams(hp, {"targets": encoder})     # the vocabularies, was_reversed, was_copy
    reverse_problem_hparams(hp)                        # what `<name>_rev` problems see
"""
from t2t.core.hparam import HParams
from t2t.problems.spaces import SpaceID


def _swap_by_feature_name(mapping):
    """Swap values of "targets*" and the matching "inputs*" keys (T2T's convention)."""
    swapped = {}
    for name, value in mapping.items():
        partner = name.replace("target", "input")
        if "target" in name and partner in mapping:
            swapped[name] = mapping[partner]
            swapped[partner] = value
        elif name not in swapped:
            swapped[name] = value
    return swapped


def reverse_problem_hparams(p_hparams):
    """Swap input/target modalities, vocab sizes, vocabularies and space ids."""
    p = p_hparams
    p.modality = _swap_by_feature_name(p.modality)
    p.vocab_size = _swap_by_feature_name(p.vocab_size)
    input_vocabulary = p.vocabulary.pop("inputs", None)
    target_vocabulary = p.vocabulary.pop("targets", None)
    if input_vocabulary is not None:
        p.vocabulary["targets"] = input_vocabulary
    if target_vocabulary is not None:
        p.vocabulary["inputs"] = target_vocabulary
    input_space_id, target_space_id = p.input_space_id, p.target_space_id
    p.target_space_id = SpaceID.GENERIC if input_space_id is None else input_space_id
    p.input_space_id = SpaceID.GENERIC if target_space_id is None else target_space_id
    p.was_reversed = True


def copy_problem_hparams(p_hparams):
    """Give the targets the inputs' modality, vocab size, vocabulary and space id."""
    p = p_hparams
    p.modality["targets"] = p.modality["inputs"]
    p.vocab_size["targets"] = p.vocab_size["inputs"]
    p.vocabulary["targets"] = p.vocabulary["inputs"]
    p.target_space_id = p.input_space_id
    p.was_copy = True


def default_problem_hparams():
    """The problem hparams every Problem starts from: the one schema of problem hparams.

        hp = default_problem_hparams()
        hp.modality, hp.vocab_size, hp.input_space_id     # {}, {}, 0
        add_encoder_hparams(hp, {"targets": encoder})     # what Problem.get_hparams adds last
    """
    return HParams(
        # Ratio of tokens in this tokenization to an "official" one, for
        # comparable per-word perplexities (e.g. 2.0 for characters).
        loss_multiplier=1.0,
        # Allows longer sequences in a batch: multiplies the length used for bucketing.
        batch_size_multiplier=1,
        # Stop autoregressive decoding at EOS when batch_size is 1.
        stop_at_eos=False,
        # {feature name: ModalityType string} and {feature name: vocab size}.
        modality={},
        vocab_size={},
        # Tells the model the input and target spaces (SpaceID constants).
        input_space_id=SpaceID.GENERIC,
        target_space_id=SpaceID.GENERIC)


def add_encoder_hparams(hp, encoders, was_reversed=False, was_copy=False):
    """Add what t2t sets after `Problem.hparams`: the feature encoders ("vocabulary") and
    whether the problem is a _rev or _copy variant."""
    hp.add_hparam("vocabulary", dict(encoders))
    hp.add_hparam("was_reversed", was_reversed)
    hp.add_hparam("was_copy", was_copy)
    return hp


def problem_hparams_to_features(problem_hparams):
    """{"input_space_id": int, "target_space_id": int} from problem hparams (or zeros)."""
    space_ids = {"input_space_id": 0, "target_space_id": 0}
    if problem_hparams:
        for key in space_ids:
            value = problem_hparams.get(key)
            space_ids[key] = 0 if value is None else value
    return space_ids
