"""What a folder must hold to decode a model without its data: `t2t_model.json` + vocabularies.

A training folder (written by t2t-trainer's chief when a run starts) and every export
(SavedModel, CTranslate2) carry the names of the model, hparams set and problem, the
`--hparams` overrides, the user's `--t2t_usr_dir`, and copies of the vocabulary files the
problem's encoders read, under their own names. `problem.feature_encoders(folder)` then
finds them there, so `t2t.load(folder)` and `t2t-decoder --output_dir=folder` need no
`--data_dir`:

    save_decoding_assets("/train/m30k", hparams, model_name="transformer",
                         hparams_set="transformer_multi30k")
    sorted(os.listdir("/train/m30k"))
    # [..., "t2t_model.json", "vocab.translate_ende_multi30k.8192.subwords"]
    read_decoding_assets("/train/m30k").problem    # "translate_ende_multi30k"
"""
import dataclasses
import json
import os
import shutil
from typing import Mapping, Optional, Tuple

from t2t.core import atomic_files
from t2t.core import errors
from t2t.core import registry
from t2t.model import model_hparams

ASSETS_FILENAME = "t2t_model.json"


@dataclasses.dataclass(frozen=True)
class DecodingAssets:
    """The contents of `t2t_model.json`.

    `vocabulary_files` are base names of files in the same folder; `export` says what else
    the folder holds ("" for a training folder, "saved_model" or "ctranslate2"), and
    `export_settings` how it was written (checkpoint, decode hparams, quantization).
    """
    model: str
    hparams_set: str
    problem: str
    hparams_overrides: str = ""
    t2t_usr_dir: str = ""
    vocabulary_files: Tuple[str, ...] = ()
    export: str = ""
    export_settings: Mapping[str, object] = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        for name in ("model", "hparams_set", "problem"):
            if not getattr(self, name):
                raise ValueError("DecodingAssets needs %s (got %r)" % (name, getattr(self, name)))
        object.__setattr__(self, "vocabulary_files", tuple(self.vocabulary_files))

    def to_json(self):
        return json.dumps(dataclasses.asdict(self), indent=1, sort_keys=True) + "\n"


def vocabulary_files(hparams):
    """The files the attached problem's encoders were read from (sorted, no duplicates).

    Encoders built in code (bytes, class labels) have none; a SubwordTextEncoder or
    TokenTextEncoder loaded from a file has its `filename`.
    """
    p_hparams = model_hparams.attached_problem_hparams(hparams, "saving decoding assets")
    paths = set()
    for encoder in (getattr(p_hparams, "vocabulary", None) or {}).values():
        filename = getattr(encoder, "filename", None)
        if filename:
            paths.add(filename)
    return sorted(paths)


def _copy_if_changed(source, folder):
    """Copy `source` into `folder` under its own name, atomically; skip an identical copy."""
    target = os.path.join(folder, os.path.basename(source))
    if os.path.abspath(source) == os.path.abspath(target):
        return
    if os.path.exists(target) and _same_bytes(source, target):
        return
    with atomic_files.atomic_output_path(target) as tmp:
        shutil.copyfile(source, tmp)


def _same_bytes(a, b):
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def save_decoding_assets(folder, hparams, model_name, hparams_set, hparams_overrides="",
                         t2t_usr_dir="", export="", export_settings=None):
    """Write `<folder>/t2t_model.json` and copy the vocabulary files into `folder`.

    `hparams` must have its problem attached (`add_problem_hparams`). Returns the
    `DecodingAssets` written.
    """
    problem = model_hparams.attached_problem(hparams, "save_decoding_assets")
    names = []
    for path in vocabulary_files(hparams):
        _copy_if_changed(path, folder)
        names.append(os.path.basename(path))
    assets = DecodingAssets(
        model=model_name, hparams_set=hparams_set,
        problem=registry.get_problem_name(problem.name, problem.was_reversed, problem.was_copy),
        hparams_overrides=hparams_overrides or "",
        t2t_usr_dir=os.path.abspath(os.path.expanduser(t2t_usr_dir)) if t2t_usr_dir else "",
        vocabulary_files=names, export=export, export_settings=dict(export_settings or {}))
    with atomic_files.atomic_write(os.path.join(folder, ASSETS_FILENAME), "w") as out:
        out.write(assets.to_json())
    return assets


def read_decoding_assets(folder) -> Optional[DecodingAssets]:
    """The `DecodingAssets` of `folder`, or None when it has no `t2t_model.json`."""
    path = os.path.join(folder, ASSETS_FILENAME)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            values = json.load(handle)
        names = {field.name for field in dataclasses.fields(DecodingAssets)}
        return DecodingAssets(**{k: v for k, v in values.items() if k in names})
    except (ValueError, TypeError) as error:
        raise errors.UserError("%s is not a t2t model description (%s); export or train the "
                               "model again" % (path, error)) from None


def has_vocabularies(folder, assets):
    """True when every vocabulary file `assets` names is in `folder`."""
    return all(os.path.exists(os.path.join(folder, name)) for name in assets.vocabulary_files)
