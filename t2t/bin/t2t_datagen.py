"""t2t-datagen: write the training and dev data of registered problems into --data_dir.

    t2t-datagen --problem=algorithmic_reverse_binary40 --data_dir=~/t2t_data
    # writes algorithmic_reverse_binary40-train-0000{0..9}-of-00010 and
    #        algorithmic_reverse_binary40-dev-00000-of-00001, then logs
    # I ... algorithmic_reverse_binary40: 11 files, 110,000 examples, vocab 4, 3.2 s
    # I ... datagen done: 1 problems, 11 files, 110,000 examples, 3.2 s

    t2t-datagen --problem='algorithmic_*' --exclude_problems=nlplike --only_list
    t2t-datagen --problem=my_problem --t2t_usr_dir=~/my_t2t

Also runnable as `python -m t2t.bin.t2t_datagen`. Flags are T2T 1.15.7's; this file only
parses them and calls `t2t.datagen.datagen`.
"""
from absl import flags, logging

from t2t.bin import cli
from t2t.core import registry
from t2t.datagen import datagen

FLAGS = flags.FLAGS

flags.DEFINE_string("problem", "", "The problem(s) to generate data for: a registered name "
                    "(_rev/_copy suffixes allowed), a prefix* wildcard, or a comma list.")
flags.DEFINE_string("data_dir", "", "Data directory (default: the system temp folder, with a "
                    "warning).")
flags.DEFINE_string("tmp_dir", "/tmp/t2t_datagen", "Temporary storage directory (downloads, "
                    "extracted corpora).")
flags.DEFINE_string("exclude_problems", "", "Comma-separated list; problems whose name contains "
                    "any item are skipped.")
flags.DEFINE_integer("num_shards", 0, "Legacy generators only; an error for registered "
                     "problems, which set their own shard counts.")
flags.DEFINE_integer("max_cases", 0, "Maximum number of examples written per generate_files "
                     "call, i.e. per split (0 = unbounded).")
flags.DEFINE_bool("only_list", False, "Only list the problems that would be generated.")
flags.DEFINE_integer("task_id", -1, "Generate only this task (distributed data generation).")
flags.DEFINE_integer("task_id_start", -1, "First task of a multiprocess_generate problem.")
flags.DEFINE_integer("task_id_end", -1, "End (exclusive) of the tasks of a "
                     "multiprocess_generate problem.")
flags.DEFINE_integer("num_concurrent_processes", datagen.DEFAULT_NUM_CONCURRENT_PROCESSES,
                     "How many problems, or tasks of multiprocess_generate problems, run in "
                     "parallel.")
flags.DEFINE_list("datatypes_to_clean", None, "Translation problems: the kinds of training "
                  "corpora (txt, tsv, tmx) to filter with cleaner_en_xx, instead of the "
                  "problem's own datatypes_to_clean.")
cli.define_common_flags(random_seed_default=datagen.DEFAULT_RANDOM_SEED)


def main(argv):
    cli.reject_extra_args(argv, "t2t-datagen")
    logging.set_verbosity(logging.INFO)
    cli.apply_common_flags(FLAGS.t2t_usr_dir, FLAGS.registry_help)

    problem_names = datagen.resolve_problem_names(FLAGS.problem, FLAGS.exclude_problems)
    if not FLAGS.only_list:
        cli.check_writable_dir("--data_dir", FLAGS.data_dir)
        cli.check_writable_dir("--tmp_dir", FLAGS.tmp_dir)
    listing = registry.display_list_by_prefix(problem_names, starting_spaces=4)
    if FLAGS.only_list:
        print("Problems that would be generated:\n%s" % listing)
        return 0

    logging.info("Generating problems:\n%s", listing)
    datagen.generate_problems(
        problem_names, FLAGS.data_dir, FLAGS.tmp_dir, random_seed=FLAGS.random_seed,
        task_id=FLAGS.task_id, max_cases=FLAGS.max_cases, task_id_start=FLAGS.task_id_start,
        task_id_end=FLAGS.task_id_end, num_concurrent_processes=FLAGS.num_concurrent_processes,
        num_shards=FLAGS.num_shards, t2t_usr_dir=FLAGS.t2t_usr_dir,
        datatypes_to_clean=FLAGS.datatypes_to_clean)
    return 0


def console_main():
    """Entry point of the `t2t-datagen` console script."""
    cli.run_main(main, "t2t-datagen", doc=__doc__)


if __name__ == "__main__":
    console_main()
