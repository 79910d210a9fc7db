"""What a path holds (a training folder, a checkpoint, a SavedModel, a CTranslate2 model),
and the hparams and encoders that decode it.

    source = find_model(os.path.expanduser("~/t2t_train/m30k"))
    source.kind, source.checkpoint_path    # "checkpoint", ".../model.ckpt-500"
    hparams = model_hparams_for(source)    # problem attached, vocabularies from the folder

A training folder written by this t2t holds `t2t_model.json` and copies of its vocabulary
files (`model.decoding_assets`); one written before that names its data_dir in `job.json`
(or `flags.txt`), which must then still hold the vocabulary, or `data_dir=` is given.

This module is the one reader of a model folder's files (t2t_model.json, job.json,
flags.txt, hparams.json) for t2t.load, t2t-decoder and t2t-exporter:

    record = read_model_folder("/train/m30k")      # never raises for a folder without them
    record.assets.problem, record.saved_flags.get("model"), record.hparams_path
"""
import dataclasses
import os
from typing import FrozenSet, Mapping, Optional

import tensorflow as tf

from t2t.core import errors
from t2t.core import usr_dir
from t2t.model import decoding_assets
from t2t.serving import export
from t2t.training import runner
from t2t.training import trainer_lib

KINDS = ("checkpoint", "saved_model", "ctranslate2")


@dataclasses.dataclass(frozen=True)
class ModelFolder:
    """What a folder records about the model it holds (`read_model_folder`).

    `assets`: its t2t_model.json, else the names job.json or flags.txt give (None when it
    names no model); `recorded_data_dir`: the data_dir the run recorded ("" if none);
    `saved_flags`: flags.txt as {name: value}, `saved_switches` its booleans ("--name",
    "--noname"); `hparams_path`: its hparams.json ("" if none).
    """
    folder: str
    assets: Optional[decoding_assets.DecodingAssets] = None
    recorded_data_dir: str = ""
    saved_flags: Mapping[str, str] = dataclasses.field(default_factory=dict)
    saved_switches: FrozenSet[str] = frozenset()
    hparams_path: str = ""


@dataclasses.dataclass(frozen=True)
class ModelSource:
    """A model found on disk (`find_model`).

    `folder` holds `assets` (t2t_model.json, vocabularies) when there are any; `kind` is
    one of KINDS; `checkpoint_path` is the checkpoint prefix of a "checkpoint" source and
    `model_path` the SavedModel or CTranslate2 folder of the others; `data_dir` is where the
    vocabularies are read; `record` is everything the folder records (`ModelFolder`).
    """
    kind: str
    record: ModelFolder
    data_dir: str
    checkpoint_path: str = ""
    model_path: str = ""

    @property
    def folder(self):
        return self.record.folder

    @property
    def assets(self) -> decoding_assets.DecodingAssets:
        return self.record.assets

    @property
    def saved_flags(self):
        return self.record.saved_flags

    @property
    def hparams_path(self):
        return self.record.hparams_path


def _is_saved_model(path):
    return any(os.path.exists(os.path.join(path, name))
               for name in ("saved_model.pb", "saved_model.pbtxt"))


def _is_ctranslate2(path):
    return all(os.path.exists(os.path.join(path, name)) for name in ("model.bin", "config.json"))


def _newest_saved_model(export_dir):
    """The newest `<export_dir>/<timestamp>` SavedModel (t2t-exporter's layout), or None."""
    stamps = [name for name in os.listdir(export_dir) if name.isdigit() and
              _is_saved_model(os.path.join(export_dir, name))]
    return os.path.join(export_dir, max(stamps, key=int)) if stamps else None


def read_model_folder(folder) -> ModelFolder:
    """The `ModelFolder` of `folder`: t2t_model.json, else job.json or flags.txt (runs made
    before t2t_model.json), and hparams.json. A folder that records nothing gives a
    ModelFolder whose `assets` is None."""
    folder = os.fspath(folder)
    lines = trainer_lib.read_saved_flag_lines(folder)
    saved = trainer_lib.read_saved_flags(folder) if lines else {}
    hparams_path = os.path.join(folder, trainer_lib.HPARAMS_FILENAME)
    record = dict(folder=folder, saved_flags=saved,
                  saved_switches=frozenset(line for line in lines if "=" not in line),
                  hparams_path=hparams_path if tf.io.gfile.exists(hparams_path) else "")
    assets = decoding_assets.read_decoding_assets(folder)
    job = runner.TrainingJob.load(folder)
    if assets is not None:
        return ModelFolder(assets=assets, recorded_data_dir=(job.data_dir or "") if job
                           else "", **record)
    if job is not None and job.problem_name:
        return ModelFolder(assets=decoding_assets.DecodingAssets(
            model=job.model_name, hparams_set=job.hparams_set, problem=job.problem_name,
            hparams_overrides=job.hparams_overrides), recorded_data_dir=job.data_dir or "",
            **record)
    if all(saved.get(name) for name in ("model", "hparams_set", "problem")):
        return ModelFolder(assets=decoding_assets.DecodingAssets(
            model=saved["model"], hparams_set=saved["hparams_set"], problem=saved["problem"],
            hparams_overrides=saved.get("hparams", ""),
            t2t_usr_dir=saved.get("t2t_usr_dir", "")),
            recorded_data_dir=saved.get("data_dir") or "", **record)
    return ModelFolder(**record)


_WHAT_TO_GIVE = ("give a t2t-trainer --output_dir, a checkpoint, a SavedModel or a "
                 "CTranslate2 export")


def _no_model(path, detail):
    return errors.UserError(
        "%s holds no t2t model (%s); give a t2t-trainer --output_dir, a checkpoint such as "
        "<output_dir>/model.ckpt-1000, a t2t-exporter SavedModel or a CTranslate2 export"
        % (path, detail))


def _resolve_checkpoint(folder, checkpoint):
    """The checkpoint prefix to load: `checkpoint` (a prefix, a name in `folder` or a step)
    or the folder's latest."""
    if checkpoint is None:
        path = tf.train.latest_checkpoint(folder)
        if path and os.path.dirname(os.path.abspath(path)) != folder:
            # A folder moved or copied after a Saver wrote absolute paths: its own file.
            moved = os.path.join(folder, os.path.basename(path))
            path = moved if tf.io.gfile.exists(moved + ".index") else path
        if not path:
            steps = sorted(int(p[:-len(".index")].rsplit("-", 1)[1]) for p in tf.io.gfile.glob(
                os.path.join(folder, "model.ckpt-*.index")))
            if not steps:
                raise _no_model(folder, "no checkpoint yet: train there first")
            path = os.path.join(folder, "model.ckpt-%d" % steps[-1])
        return path
    checkpoint = str(checkpoint)
    candidates = [os.path.expanduser(checkpoint), os.path.join(folder, checkpoint),
                  os.path.join(folder, "model.ckpt-%s" % checkpoint)]
    for candidate in candidates:
        if tf.io.gfile.exists(candidate + ".index"):
            return candidate
    available = sorted(os.path.basename(p)[:-len(".index")] for p in
                       tf.io.gfile.glob(os.path.join(folder, "model.ckpt-*.index")))
    raise errors.UserError("checkpoint %r is not in %s; its checkpoints: %s" % (
        checkpoint, folder, ", ".join(available) or "none"))


def _vocabulary_dir(folder, assets, recorded_data_dir, data_dir):
    """Where the problem's vocabularies are read: `data_dir` if given, else the folder
    (which holds copies), else the data_dir the run recorded."""
    if data_dir:
        return os.path.expanduser(data_dir)
    if assets.vocabulary_files and decoding_assets.has_vocabularies(folder, assets):
        return folder
    if recorded_data_dir and os.path.isdir(recorded_data_dir):
        return recorded_data_dir
    return folder


def find_model(path, checkpoint=None, data_dir=None) -> ModelSource:
    """The model at `path`: a training folder (its latest checkpoint, or `checkpoint`: a
    name such as "model.ckpt-300", a step number or a prefix), a checkpoint prefix, a
    SavedModel (or t2t-exporter's folder of timestamped ones: the newest) or a CTranslate2
    model folder. UserError (one line) when it holds none of these."""
    path = os.path.abspath(os.path.expanduser(os.fspath(path)))
    if not os.path.exists(path) and tf.io.gfile.exists(path + ".index"):
        folder, checkpoint = os.path.dirname(path), path  # a checkpoint prefix
    elif os.path.isfile(path):
        raise errors.UserError("%s is a file, not a folder; %s" % (path, _WHAT_TO_GIVE))
    elif not os.path.isdir(path):
        raise errors.UserError("%s does not exist; %s" % (path, _WHAT_TO_GIVE))
    else:
        folder = path
    if os.path.isdir(folder) and not _is_saved_model(folder) and not _is_ctranslate2(folder):
        newest = _newest_saved_model(folder)
        if newest and not tf.train.latest_checkpoint(folder):
            folder = newest
    for kind, test in (("saved_model", _is_saved_model), ("ctranslate2", _is_ctranslate2)):
        if test(folder):
            # A SavedModel keeps t2t's files in assets.extra, a CTranslate2 model beside its own.
            assets_folder = export.assets_dir(folder) if kind == "saved_model" else folder
            assets = decoding_assets.read_decoding_assets(assets_folder)
            if assets is None:
                raise _no_model(folder, "a %s without t2t_model.json: export it with this "
                                "t2t's t2t-exporter" % kind.replace("_", " "))
            hparams_path = os.path.join(assets_folder, trainer_lib.HPARAMS_FILENAME)
            record = ModelFolder(folder=assets_folder, assets=assets, hparams_path=(
                hparams_path if os.path.exists(hparams_path) else ""))
            return ModelSource(kind=kind, record=record,
                               data_dir=_vocabulary_dir(assets_folder, assets, None, data_dir),
                               model_path=folder)
    record = read_model_folder(folder)
    if record.assets is None:
        raise _no_model(folder, "no t2t_model.json, job.json or flags.txt")
    return ModelSource(kind="checkpoint", record=record,
                       data_dir=_vocabulary_dir(folder, record.assets,
                                                record.recorded_data_dir, data_dir),
                       checkpoint_path=_resolve_checkpoint(folder, checkpoint))


def import_user_code(source: ModelSource, t2t_usr_dir: Optional[str] = None):
    """Import the folder of registrations the model was trained with (or `t2t_usr_dir`)."""
    folder = t2t_usr_dir or source.assets.t2t_usr_dir
    if folder:
        usr_dir.import_usr_dir(folder)


def model_hparams_for(source: ModelSource):
    """The model's hparams: its saved hparams.json (or the registered set and overrides),
    the problem attached with its vocabularies read from `source.data_dir`."""
    assets = source.assets
    return trainer_lib.create_hparams(
        assets.hparams_set, "" if source.hparams_path else assets.hparams_overrides,
        data_dir=source.data_dir, problem_name=assets.problem,
        hparams_path=source.hparams_path or None)
