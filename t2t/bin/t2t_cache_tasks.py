"""t2t-cache-tasks: preprocess SeqIO tasks once, on Apache Beam, into seqio's cache format.

    t2t-cache-tasks --module_import=my.tasks --tasks='my_task.*' --excluded_tasks=my_task_5 \\
        --output_cache_dir=/data/seqio_cache --min_shards=16 --base_seed=1 \\
        --pipeline_options=--direct_num_workers=2,--direct_running_mode=multi_processing
    # [1/2] my_task_a: caching splits train, validation into /data/seqio_cache/my_task_a
    # [1/2] my_task_a done: 52,000 examples, 2,310,455 tokens, 41.2 s
    # ...
    # cached 2 task(s), skipped 0: 104,000 examples, 4,620,910 tokens, 83.0 s

Then `task.get_dataset(..., use_cached=True)` with `seqio.add_global_cache_dirs(
["/data/seqio_cache"])` reads it, in t2t and in seqio. Runs each task's preprocessors up to
its `CacheDatasetPlaceholder`; writes `<task>/<split>.tfrecord-XXXXX-of-YYYYY`,
`info.<split>.json`, `stats.<split>.json` and `COMPLETED` last. A task already cached is
skipped (--overwrite writes it again); an interrupted task (no COMPLETED) is written again.
The same --base_seed gives the same files whatever the runner and number of workers.

Runners (--pipeline_options, comma-separated Beam options): the DirectRunner by default;
--runner=FlinkRunner,--flink_master=host:8081 / --runner=SparkRunner / --runner=DataflowRunner,
--project=...,--region=...,--temp_location=gs://... on a cluster (the workers need t2t and
your task module installed). Flags are seqio's cache_tasks_main's, plus --t2t_usr_dir.
Needs Apache Beam: pip install 't2t-toolkit[beam]'.
"""
import logging as std_logging

from absl import flags, logging

from t2t.bin import cli
from t2t.core import errors

FLAGS = flags.FLAGS
PROGRAM = "t2t-cache-tasks"


_define = cli.define_once  # flags other programs in this process define are kept


cli.define_common_flags()
_define(flags.DEFINE_list, "tasks", None,
        "Regexes matching the task(s) to cache (whole names). All registered if not given.")
_define(flags.DEFINE_list, "excluded_tasks", None, "Regexes matching task(s) to skip.")
_define(flags.DEFINE_string, "output_cache_dir", None,
        "The folder the cached tasks are written to (one sub-folder per task).")
_define(flags.DEFINE_list, "tasks_additional_cache_dirs", [],
        "More folders to look for cached tasks in, after the global caches and "
        "--output_cache_dir.")
_define(flags.DEFINE_multi_string, "module_import", [],
        "Modules to import (repeatable), e.g. the one that adds your Tasks to the TaskRegistry.")
_define(flags.DEFINE_list, "pipeline_options", ["--runner=DirectRunner"],
        "Comma-separated Apache Beam options, e.g. --direct_num_workers=2,"
        "--direct_running_mode=multi_processing or --runner=FlinkRunner,--flink_master=h:8081.")
_define(flags.DEFINE_boolean, "ignore_other_caches", False,
        "Cache into --output_cache_dir even if the task is cached in another folder.")
_define(flags.DEFINE_boolean, "overwrite", False,
        "Cache the task again even if --output_cache_dir holds it already.")
_define(flags.DEFINE_integer, "min_shards", 64,
        "The minimum number of output shards (more shards: better shuffling when reading).")
_define(flags.DEFINE_integer, "max_shards", 0,
        "The maximum number of output shards (0: no maximum).")
_define(flags.DEFINE_string, "tfds_data_dir", None,
        "Folder of the TFDS datasets of TfdsDataSource tasks (overrides the tasks' own).")
_define(flags.DEFINE_integer, "base_seed", None,
        "Base seed of the preprocessors' random ops: the same seed gives the same cache.")
_define(flags.DEFINE_boolean, "enable_char_counts", False,
        "Also count characters (<feature>_chars in stats.<split>.json); detokenizes, slow.")
if "output_format" not in FLAGS:
    flags.DEFINE_enum("output_format", "tfrecord", ["tfrecord", "arrayrecord"],
                      "Output format of the caches; t2t writes tfrecord.")


def main(argv):
    cli.reject_extra_args(argv, PROGRAM)
    cli.apply_common_flags(FLAGS.t2t_usr_dir, FLAGS.registry_help)
    logging.set_verbosity(logging.INFO)
    # Beam's own chatter stays out of the way; t2t's progress lines (absl, through the root
    # logger, whose level absl's verbosity sets) stay, also from the in-process runner.
    std_logging.getLogger("apache_beam").setLevel(std_logging.WARNING)
    if FLAGS.output_format != "tfrecord":
        raise errors.UserError("--output_format=%s: t2t writes tfrecord caches only (seqio's "
                               "ArrayRecord needs the array_record package); use "
                               "--output_format=tfrecord" % FLAGS.output_format)
    if not FLAGS.output_cache_dir:
        raise errors.UserError("give --output_cache_dir, the folder the caches are written to")
    cli.check_writable_dir("--output_cache_dir", FLAGS.output_cache_dir)
    try:
        from t2t.seqio import cache_tasks
    except ImportError as e:
        if "apache_beam" in str(e):
            raise errors.UserError("t2t-cache-tasks needs Apache Beam: "
                                   "pip install 't2t-toolkit[beam]'") from e
        raise

    def say(line):
        print("%s: %s" % (PROGRAM, line), flush=True)

    cache_tasks.cache_tasks(
        FLAGS.tasks, FLAGS.output_cache_dir, excluded_tasks=FLAGS.excluded_tasks,
        pipeline_options=FLAGS.pipeline_options, module_import=FLAGS.module_import,
        usr_dir=FLAGS.t2t_usr_dir, min_shards=FLAGS.min_shards, max_shards=FLAGS.max_shards,
        base_seed=FLAGS.base_seed, overwrite=FLAGS.overwrite,
        ignore_other_caches=FLAGS.ignore_other_caches,
        tasks_additional_cache_dirs=FLAGS.tasks_additional_cache_dirs,
        enable_char_counts=FLAGS.enable_char_counts, tfds_data_dir=FLAGS.tfds_data_dir,
        log_fn=say)
    return 0


def console_main():
    """Entry point of the `t2t-cache-tasks` console script."""
    cli.run_main(main, PROGRAM, doc=__doc__)


if __name__ == "__main__":
    console_main()
