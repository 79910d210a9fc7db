"""Caching tasks offline: the library of `t2t-cache-tasks` (seqio's `cache_tasks_main`).

Runs each selected Task's preprocessors up to its `CacheDatasetPlaceholder` on Apache Beam
and writes seqio's cache format in `<output_cache_dir>/<task dir>/`:

    train.tfrecord-00000-of-00064 ... train.tfrecord-00063-of-00064   (tf.Examples)
    info.train.json    {"features": {"targets": {"dtype": "int32", "shape": [null]}},
                        "num_shards": 64, "seqio_version": "0.0.20"}
    stats.train.json   {"examples": 1000, "targets_max_tokens": 87, "targets_tokens": 52311}
    COMPLETED          written last, once every split is on disk

so that `task.get_dataset(..., use_cached=True)` (t2t's or seqio's) reads it:

    results = cache_tasks(["my_task.*"], "/data/cache", pipeline_options=[
        "--direct_num_workers=2", "--direct_running_mode=multi_processing"])
    # results[0] == CacheResult(task="my_task", status="cached", examples=1000, ...)

Differences from seqio: the files are the same for a fixed `base_seed` whatever the number
of workers (see `beam_utils`); one Beam pipeline runs per task, so each task's COMPLETED
appears as soon as it is done and a failure loses only that task; a task folder without
COMPLETED (an interrupted run) is cleared of its partial files and written again.
"""
import contextlib
import dataclasses
import io
import os
import re
import time
from typing import Callable, List, Optional, Sequence

import tensorflow as tf
from absl import logging

from t2t.core.errors import UserError
from t2t.core import registry
from t2t.seqio import beam_utils  # noqa: F401  (imports Beam without its GCP notice)
from t2t.seqio import checks, dataset_providers, utils
import t2t.seqio.tfds_loader as tfds_loader

DEFAULT_PIPELINE_OPTIONS = ("--runner=DirectRunner",)


@dataclasses.dataclass(frozen=True)
class CacheResult:
    """What happened to one task: status is "cached", "skipped" (already cached) or
    "not_cacheable" (no CacheDatasetPlaceholder, or no splits)."""
    task: str
    status: str
    output_dir: str = ""
    examples: int = 0
    tokens: int = 0
    seconds: float = 0.0
    splits: tuple = ()


def select_tasks(task_regexes: Optional[Sequence[str]],
                 excluded_regexes: Optional[Sequence[str]] = None) -> List[str]:
    """Names of registered tasks matching a regex of `task_regexes` (whole name; all when
    empty) and none of `excluded_regexes`, sorted. UserError when none is left.

        select_tasks(["wmt_.*"], ["wmt_de_en"])   # ["wmt_en_de", "wmt_en_fr"]
    """
    names = sorted(dataset_providers.TaskRegistry.names())
    patterns = []
    for flag, regexes in (("--tasks", task_regexes), ("--excluded_tasks", excluded_regexes)):
        for regex in regexes or ():
            try:
                patterns.append((flag, regex, re.compile(regex)))
            except re.error as e:
                raise UserError(f"{flag}: {regex!r} is not a regular expression ({e})") from e
    included = [p for f, _, p in patterns if f == "--tasks"]
    excluded = [p for f, _, p in patterns if f == "--excluded_tasks"]
    selected = [n for n in names
                if (not included or any(p.fullmatch(n) for p in included))
                and not any(p.fullmatch(n) for p in excluded)]
    if selected:
        return selected
    if not names:
        raise UserError("no tasks are registered; import the module that adds them with "
                        "--module_import=my.tasks (or --t2t_usr_dir)")
    wanted = ",".join(task_regexes or [".*"])
    close = registry.closest_names(wanted, names)
    hint = ("closest registered tasks: %s" % ", ".join(close)) if close else (
        "registered tasks: %s" % ", ".join(names[:10]) + (" ..." if len(names) > 10 else ""))
    why = " after --excluded_tasks" if excluded_regexes else ""
    raise UserError(f"--tasks={wanted} matches no registered task{why}; {hint}")


def parse_pipeline_options(options: Optional[Sequence[str]]):
    """Beam PipelineOptions of `options` ("--runner=DirectRunner", ...), checked: an unknown
    option, a bad value or an unknown runner is a UserError naming it."""
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.runners import runner as beam_runner
    options = list(options or DEFAULT_PIPELINE_OPTIONS)
    for option in options:
        if not option.startswith("--"):
            raise UserError(f"--pipeline_options: {option!r} is not an option; give "
                            "comma-separated --name=value items, e.g. "
                            "--pipeline_options=--runner=DirectRunner,--direct_num_workers=2")
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            parsed = PipelineOptions(options)
            everything = parsed.get_all_options(retain_unknown_options=True)
            known = parsed.get_all_options()
    except SystemExit as e:  # argparse: a bad value
        lines = [l for l in err.getvalue().splitlines() if "error:" in l]
        message = lines[-1].split("error:", 1)[1].strip() if lines else "invalid"
        raise UserError(f"--pipeline_options: {message}") from e
    unknown = sorted(set(everything) - set(known))
    if unknown:
        close = registry.closest_names(unknown[0], list(known))
        raise UserError("--pipeline_options: unknown Beam option --%s%s" % (
            unknown[0], ("; did you mean --%s?" % close[0]) if close else ""))
    runner = everything.get("runner")
    if runner:
        try:
            beam_runner.create_runner(runner)
        except (ValueError, ImportError) as e:
            raise UserError(f"--pipeline_options: runner {runner!r}: {e}") from e
    return parsed


def check_output_dir(path: str) -> None:
    """Create `path` and check a file can be written there; UserError otherwise."""
    if not path:
        raise UserError("give --output_cache_dir, the folder the caches are written to")
    try:
        tf.io.gfile.makedirs(path)
        probe = os.path.join(path, ".t2t-write-check")
        with tf.io.gfile.GFile(probe, "w") as f:
            f.write("")
        tf.io.gfile.remove(probe)
    except (tf.errors.OpError, OSError) as e:
        raise UserError(f"--output_cache_dir={path} is not a folder t2t can write to "
                        f"({type(e).__name__}); give a writable folder") from e


def num_output_shards(num_source_shards: int, min_shards: int, max_shards: int) -> int:
    """seqio's rule: at least `min_shards` (if > 0), at most `max_shards` (if > 0).

    >>> num_output_shards(3, 64, 0), num_output_shards(3, 64, 8), num_output_shards(100, 0, 0)
    (64, 8, 100)
    """
    n = max(num_source_shards, min_shards) if min_shards > 0 else num_source_shards
    return min(n, max_shards) if max_shards > 0 else n


def clear_partial_cache(output_dir: str, splits: Sequence[str]) -> None:
    """Remove what an interrupted run left in a task folder without COMPLETED: temporary
    files and the splits' shards, info and stats (never anything else)."""
    if not tf.io.gfile.isdir(output_dir):
        return
    from t2t.seqio import beam_utils
    owned = list(beam_utils.TEMP_FILE_PATTERNS)
    for split in splits:
        owned += [os.path.basename(utils.get_cached_tfrecord_prefix(output_dir, split)) + "-*",
                  os.path.basename(utils.get_cached_info_path(output_dir, split)),
                  os.path.basename(utils.get_cached_stats_path(output_dir, split))]
    for pattern in owned:
        for path in tf.io.gfile.glob(os.path.join(output_dir, pattern)):
            if not tf.io.gfile.isdir(path):
                tf.io.gfile.remove(path)


def add_task_to_pipeline(pipeline, task, output_dir: str, *, base_seed: Optional[int] = None,
                         min_shards: int = 64, max_shards: int = 0,
                         modules_to_import: Sequence[str] = (),
                         setup_fn: Callable[[], None] = lambda: None,
                         enable_char_counts: bool = False,
                         tfds_data_dir: Optional[str] = None,
                         completed_file_contents: str = ""):
    """Add the steps that cache `task`'s splits into `output_dir` to a Beam pipeline;
    COMPLETED is written by the last step, after every split's files."""
    import apache_beam as beam

    from t2t.seqio import beam_utils
    seed = beam_utils.task_preprocessors_seed(task.name, base_seed)
    features = beam_utils.TaskOutputFeatures(task.name, modules_to_import, setup_fn)
    done = []
    for split in task.splits:
        label = f"{task.name}_{split}"
        preprocess = beam_utils.PreprocessTask(
            task, split, preprocessors_seed=seed, setup_fn=setup_fn,
            modules_to_import=modules_to_import, add_provenance=True,
            tfds_data_dir=tfds_data_dir)
        num_shards = num_output_shards(len(preprocess.shards), min_shards, max_shards)
        examples = pipeline | f"{label}_preprocess" >> preprocess
        done.append(examples | f"{label}_write_tfrecord" >> beam_utils.WriteExampleTfRecord(
            utils.get_cached_tfrecord_prefix(output_dir, split), num_shards=num_shards,
            seed=seed))
        done.append(examples
                    | f"{label}_info" >> beam_utils.GetInfo(num_shards)
                    | f"{label}_write_info" >> beam_utils.WriteJson(
                        utils.get_cached_info_path(output_dir, split)))
        done.append(examples
                    | f"{label}_stats" >> beam_utils.GetStats(
                        features, enable_char_counts=enable_char_counts)
                    | f"{label}_write_stats" >> beam_utils.WriteJson(
                        utils.get_cached_stats_path(output_dir, split)))
    expected = len(done)
    completed = os.path.join(output_dir, "COMPLETED")

    def write_completed(count):
        if count != expected:
            raise RuntimeError(f"{task.name}: {count} of {expected} cache files written; "
                               "not writing COMPLETED")
        beam_utils.write_file_atomically(completed, completed_file_contents.encode())
        return completed

    return (done
            | f"{task.name}_flatten_done" >> beam.Flatten()
            | f"{task.name}_count_done" >> beam.combiners.Count.Globally()
            | f"{task.name}_write_completed" >> beam.Map(write_completed))


def _read_totals(output_dir: str, splits: Sequence[str]):
    import json
    examples = tokens = 0
    for split in splits:
        with tf.io.gfile.GFile(utils.get_cached_stats_path(output_dir, split)) as f:
            stats = json.load(f)
        examples += stats.get("examples", 0)
        tokens += sum(v for k, v in stats.items()
                      if k.endswith("_tokens") and not k.endswith("_max_tokens"))
    return examples, tokens


def cache_tasks(tasks: Optional[Sequence[str]], output_cache_dir: str, *,
                excluded_tasks: Optional[Sequence[str]] = None,
                pipeline_options: Optional[Sequence[str]] = None,
                module_import: Sequence[str] = (), usr_dir: str = "",
                min_shards: int = 64, max_shards: int = 0, base_seed: Optional[int] = None,
                overwrite: bool = False, ignore_other_caches: bool = False,
                tasks_additional_cache_dirs: Sequence[str] = (),
                enable_char_counts: bool = False, tfds_data_dir: Optional[str] = None,
                log_fn: Callable[[str], None] = logging.info) -> List[CacheResult]:
    """Cache the tasks matching `tasks` (regexes) into `output_cache_dir`, one Beam
    pipeline per task. Already cached tasks are skipped (unless `overwrite`); `log_fn`
    gets one line per task and a summary line."""
    import functools

    import apache_beam as beam

    from t2t.core import usr_dir as usr_dir_lib
    from t2t.seqio import beam_utils
    setup_fn = (functools.partial(usr_dir_lib.import_usr_dir, usr_dir) if usr_dir
                else lambda: None)
    setup_fn()
    usr_dir_lib.import_user_modules(module_import)
    if tfds_data_dir:
        tfds_loader.set_tfds_data_dir_override(tfds_data_dir)
    if min_shards < 0 or max_shards < 0:
        raise UserError("--min_shards and --max_shards must be >= 0 (0: no bound)")
    options = parse_pipeline_options(pipeline_options)
    names = select_tasks(tasks, excluded_tasks)
    check_output_dir(output_cache_dir)
    utils.add_global_cache_dirs([output_cache_dir] + list(tasks_additional_cache_dirs))

    for name in names:  # every task to write has its files, before any work
        task = dataset_providers.TaskRegistry.get(name)
        done = tf.io.gfile.exists(os.path.join(output_cache_dir, utils.get_task_dir_from_name(
            name), "COMPLETED"))
        if task.supports_caching and (overwrite or not done):
            checks.check_source_files(task, task.splits)

    results = []
    start = time.monotonic()
    for i, name in enumerate(names):
        task = dataset_providers.TaskRegistry.get(name)
        output_dir = os.path.join(output_cache_dir, utils.get_task_dir_from_name(name))
        where = f"[{i + 1}/{len(names)}] {name}"
        if not task.supports_caching or not task.splits:
            why = "no splits" if task.supports_caching else "no CacheDatasetPlaceholder"
            log_fn(f"{where}: skipped, the task cannot be cached ({why})")
            results.append(CacheResult(name, "not_cacheable"))
            continue
        done_here = tf.io.gfile.exists(os.path.join(output_dir, "COMPLETED"))
        cached_at = output_dir if (ignore_other_caches and done_here) else (
            None if ignore_other_caches else task.cache_dir)
        if cached_at and overwrite and os.path.normpath(cached_at) == os.path.normpath(
                output_dir):
            log_fn(f"{where}: --overwrite: removing the cache at {output_dir}")
            tf.io.gfile.remove(os.path.join(output_dir, "COMPLETED"))
            task._cache_dir = None  # the task's memo of where its cache is
            cached_at = None
        if cached_at:
            log_fn(f"{where}: skipped, already cached at {cached_at}")
            results.append(CacheResult(name, "skipped", cached_at))
            continue
        clear_partial_cache(output_dir, task.splits)
        tf.io.gfile.makedirs(output_dir)
        log_fn(f"{where}: caching splits {', '.join(task.splits)} into {output_dir}")
        task_start = time.monotonic()
        with beam.Pipeline(options=options) as pipeline:
            try:
                add_task_to_pipeline(pipeline, task, output_dir, base_seed=base_seed,
                                     min_shards=min_shards, max_shards=max_shards,
                                     modules_to_import=module_import, setup_fn=setup_fn,
                                     enable_char_counts=enable_char_counts,
                                     tfds_data_dir=tfds_data_dir)
            except (FileNotFoundError, tf.errors.NotFoundError) as e:
                raise UserError(f"task '{name}': its source has no data ({e}); check the "
                                "files the task's data source names") from e
        seconds = time.monotonic() - task_start
        examples, tokens = _read_totals(output_dir, task.splits)
        log_fn(f"{where} done: {examples:,} examples, {tokens:,} tokens, {seconds:.1f} s")
        results.append(CacheResult(name, "cached", output_dir, examples, tokens, seconds,
                                   tuple(task.splits)))
    cached = [r for r in results if r.status == "cached"]
    log_fn("cached %d task(s), skipped %d: %s examples, %s tokens, %.1f s" % (
        len(cached), len(results) - len(cached), "{:,}".format(sum(r.examples for r in cached)),
        "{:,}".format(sum(r.tokens for r in cached)), time.monotonic() - start))
    return results
