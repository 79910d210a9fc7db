"""Checks a program runs before any work: does every task have the data it will read?

    check_task_data(get_mixture_or_task("my_mix"), ["train", "validation"])
    # UserError: task 'qa', split 'train': no file matches /data/qa/train-*.tsv; check the
    # path in the task's data source, or create the files

    check_task_data(task, ["train"], use_cached=True, fix_args="--module_import=my_tasks")
    # UserError: task 'qa' has no completed cache in /data/seqio_cache (an interrupted
    # t2t-cache-tasks leaves none); write it with: t2t-cache-tasks --module_import=my_tasks
    # --tasks=qa --output_cache_dir=/data/seqio_cache

Without these, a missing file surfaced as a TensorFlow or Beam traceback after a
checkpoint had been written, and a missing cache as a bare AssertionError.
"""
import os
from typing import Iterable, List

import tensorflow as tf

from t2t.core import errors
from t2t.seqio import dataset_providers, sources, utils


def _patterns(source, split) -> List[str]:
    patterns = source._split_to_filepattern[split]  # pylint: disable=protected-access
    return [patterns] if isinstance(patterns, str) else list(patterns)


def check_source_files(task, splits: Iterable[str]):
    """UserError naming the task, split and pattern when a file source's pattern matches no
    file (a plain path that does not exist counts too). Other sources are not checked."""
    source = task.source
    if not isinstance(source, sources.FileDataSource):
        return
    for split in splits:
        if split not in source.splits:
            continue
        for pattern in _patterns(source, split):
            if not tf.io.gfile.glob(pattern):
                raise errors.UserError(
                    "task '%s', split '%s': no file matches %s; check the path in the task's "
                    "data source, or create the files" % (task.name, split, pattern))


def cache_command(task_name, fix_args="") -> str:
    """The t2t-cache-tasks command that writes `task_name`'s cache."""
    cache_dirs = utils.get_global_cache_dirs()
    output = cache_dirs[0] if cache_dirs else "<cache folder>"
    return " ".join(part for part in ("t2t-cache-tasks", fix_args, "--tasks=%s" % task_name,
                                      "--output_cache_dir=%s" % output) if part)


def check_cache(task, splits: Iterable[str], fix_args=""):
    """UserError unless `task` has a completed cache holding each of `splits` (for
    `use_cached`); the message names the task and gives the t2t-cache-tasks command."""
    if not task.supports_caching:
        return  # get_dataset falls back to preprocessing on the fly (with a warning)
    if not task.cache_dir:
        dirs = utils.get_global_cache_dirs()
        where = ("in %s" % ", ".join(dirs)) if dirs else (
            "(no cache folder is set: call seqio.add_global_cache_dirs([folder]) in the task's "
            "module)")
        raise errors.UserError(
            "task '%s' has no completed cache %s (an interrupted t2t-cache-tasks leaves "
            "none); write it with: %s" % (task.name, where, cache_command(task.name, fix_args)))
    for split in splits:
        if split in task.splits and not tf.io.gfile.exists(
                utils.get_cached_info_path(task.cache_dir, split)):
            raise errors.UserError(
                "task '%s': the cache at %s has no split '%s'; write it again with: %s "
                "--overwrite" % (task.name, task.cache_dir, split,
                                 cache_command(task.name, fix_args)))


def check_task_data(provider, splits: Iterable[str], use_cached=False, fix_args=""):
    """Every task of `provider` (a Task or Mixture) has data for each of `splits` it has:
    its cache with `use_cached`, else the files of its data source."""
    splits = list(splits)
    for task in dataset_providers.get_subtasks(provider):
        if use_cached and task.supports_caching:
            check_cache(task, splits, fix_args)
        else:
            check_source_files(task, splits)


def module_args(module_import=(), usr_dir="") -> str:
    """The flags that register the tasks, for the commands in messages."""
    args = ["--module_import=%s" % name for name in module_import or ()]
    if usr_dir:
        args.append("--t2t_usr_dir=%s" % os.path.expanduser(usr_dir))
    return " ".join(args)


def splits_for_schedule(schedule: str, train_split="train", eval_split="validation"):
    """The splits a trainer schedule reads: "train" -> [train]; "continuous_train_and_eval"
    -> [train, validation]; "evaluate" -> [validation]; "run_std_server" -> []."""
    splits = []
    if "train" in schedule:
        splits.append(train_split)
    if "eval" in schedule:
        splits.append(eval_split)
    return splits
