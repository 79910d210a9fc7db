"""The library side of `t2t-datagen`: choose problems, generate their data, summarise.

    names = resolve_problem_names("algorithmic_reverse_*", exclude_problems="decimal")
    # ['algorithmic_reverse_binary40', 'algorithmic_reverse_binary40_test',
    #  'algorithmic_reverse_nlplike32k', 'algorithmic_reverse_nlplike8k']
    summaries = generate_problems(names[:1], "/data", "/tmp/t2t_datagen", max_cases=1000)
    # I algorithmic_reverse_binary40: 11 files, 2,000 examples, vocab 4, 0.4 s
    # I datagen done: 1 problems, 11 files, 2,000 examples, 0.4 s

Nothing here reads absl flag values; `t2t/bin/t2t_datagen.py` passes them in.

Determinism: every generation job (a problem, or one task of a `multiprocess_generate`
problem) reseeds Python's `random`, numpy and TensorFlow with `derive_seed(random_seed,
problem name, task id)` right before it runs, in whichever process runs it. The files
therefore do not depend on how many processes there are or in which order jobs run.

`max_cases` (0 = no limit) caps the examples of every `generator_utils.generate_files` call
the problem makes, i.e. per split for the usual problems (see `max_cases_limit`).
"""
import collections
import contextlib
import dataclasses
import fnmatch
import hashlib
import multiprocessing
import os
import re
import signal
import tempfile
import time
from typing import Iterable, List, Optional

from absl import flags, logging

from t2t.core import errors, registry, usr_dir
from t2t.core.progress import Progress
from t2t.core import random_seed as random_seed_lib
from t2t.data import generator_utils
from t2t.problems import preprocessing

DEFAULT_RANDOM_SEED = 429459
DEFAULT_NUM_CONCURRENT_PROCESSES = 10

# Final data file names: "<name>-train-00003-of-00010" (not "-unshuffled", not temporaries).
_FINAL_DATA_FILE_SUFFIX = r"-(train|dev|test)-\d{5}-of-\d{5}"


# ----------------------------------------------------------------------------
# Choosing problems
# ----------------------------------------------------------------------------
def _split_list(text) -> List[str]:
    """"a, b,,c" -> ["a", "b", "c"]."""
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def _is_pattern(item) -> bool:
    return any(char in item for char in "*?[")


def _check_problem_name(name):
    """Raise UnknownNameError (with the closest names) unless `name` resolves."""
    try:
        spec = registry.parse_problem_name(name)
    except ValueError as error:
        raise errors.UserError("--problem: %s; give each suffix at most once" % error) from None
    if spec.base_name not in registry.Registries.problems:
        # registry.problem builds the message (closest names, the _rev/_copy origin).
        registry.problem(name)


def resolve_problem_names(problem, exclude_problems="") -> List[str]:
    """The registered problem names selected by a --problem value, in order, without repeats.

    `problem` is a name (`_rev` / `_copy` suffixes allowed), a `prefix*` wildcard (any
    fnmatch pattern), or a comma list of those. `exclude_problems` is a comma list; as in
    T2T, a problem is dropped when its name contains any of its items.

        resolve_problem_names("algorithmic_reverse_binary40,algorithmic_identity_binary40_rev")
        # ['algorithmic_reverse_binary40', 'algorithmic_identity_binary40_rev']
        resolve_problem_names("algorithmic_revers_binary40")
        # UnknownNameError: algorithmic_revers_binary40 never registered with registry problems;
        #   closest registered names: algorithmic_reverse_binary40, ...

    Raises:
      UserError: nothing given, a pattern matching no problem, or everything excluded.
      registry.UnknownNameError: a plain name that is not registered.
    """
    items = _split_list(problem)
    if not items:
        raise errors.UserError(
            "--problem is required: give a registered name, a comma list or a prefix* "
            "wildcard (--registry_help lists the %d registered problems)" %
            len(registry.list_problems()))
    selected = []
    for item in items:
        if _is_pattern(item):
            matches = [name for name in registry.list_problems()
                       if fnmatch.fnmatchcase(name, item)]
            if not matches:
                stem = item.split("*")[0].split("?")[0].split("[")[0]
                close = registry.closest_names(stem, registry.list_problems())
                raise errors.UserError(
                    "--problem=%s matches no registered problem%s" %
                    (item, ("; problems with similar names: %s" % ", ".join(close))
                     if close else "; see --registry_help"))
            selected.extend(matches)
        else:
            _check_problem_name(item)
            selected.append(item)
    selected = list(dict.fromkeys(selected))
    excludes = _split_list(exclude_problems)
    kept = [name for name in selected if not any(exclude in name for exclude in excludes)]
    if not kept:
        raise errors.UserError(
            "--exclude_problems=%s excludes every problem selected by --problem=%s; "
            "narrow --exclude_problems" % (exclude_problems, problem))
    return kept


# ----------------------------------------------------------------------------
# Seeds and the max_cases limit
# ----------------------------------------------------------------------------
def derive_seed(random_seed, problem_name, task_id=-1) -> int:
    """A 31-bit seed for one job, from (random_seed, base problem name, task id).

    `x_rev` / `x_copy` write the data files of `x`, so they share its seed.

        derive_seed(429459, "algorithmic_reverse_binary40")        # same int on every run
        derive_seed(429459, "algorithmic_reverse_binary40_rev")    # the same int
    """
    base_name = registry.parse_problem_name(problem_name).base_name
    key = "%d:%s:%d" % (random_seed, base_name, -1 if task_id is None or task_id < 0
                        else task_id)
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:4], "big") & 0x7FFFFFFF


@contextlib.contextmanager
def max_cases_limit(max_cases):
    """Within the block, `generator_utils.generate_files` writes at most `max_cases` examples.

    0 or None means no limit. A call that passes its own smaller `max_cases` keeps it.
    (T2T's datagen silently ignored --max_cases for every registered problem.)
    """
    with generator_utils.max_cases_scope(max_cases):
        yield


# ----------------------------------------------------------------------------
# Jobs: one problem, or one task of a multiprocess_generate problem
# ----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Job:
    problem_name: str
    data_dir: str
    tmp_dir: str
    seed: Optional[int]
    task_id: int
    max_cases: int
    usr_dir: str
    verbosity: int
    datatypes_to_clean: Optional[tuple] = None


def _init_worker():
    """Pool worker set-up: leave Ctrl-C to the parent; log like the parent does."""
    # The parent terminates the pool and exits 130, instead of every worker printing
    # its own KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # absl installs its log handler in app.run, which only the parent ran; without it INFO
    # lines are dropped, and before flag parsing absl prefixes a warning about exactly that.
    flags.FLAGS.mark_as_parsed()
    logging.use_absl_handler()


def _run_job(job: _Job):
    """Generate one job's data; returns (start, end) wall-clock times. Runs in any process."""
    logging.set_verbosity(job.verbosity)
    usr_dir.import_usr_dir(job.usr_dir)  # a no-op if already imported (or none given)
    problem = registry.problem(job.problem_name)
    if job.datatypes_to_clean is not None:
        problem.datatypes_to_clean_override = list(job.datatypes_to_clean)
    logging.info("datagen: generating %s%s into %s (seed %s)", job.problem_name,
                 "" if job.task_id < 0 else " task %d" % job.task_id, job.data_dir, job.seed)
    start = time.time()
    if job.seed is not None:
        random_seed_lib.set_random_seed(job.seed)
    with max_cases_limit(job.max_cases):
        problem.generate_data(job.data_dir, job.tmp_dir, job.task_id)
    return start, time.time()


def _run_jobs(jobs: List[_Job], num_concurrent_processes, mp_start_method):
    """Run jobs in this process (one job or one process) or in a process pool."""
    processes = min(max(1, num_concurrent_processes), len(jobs))
    if processes <= 1:
        return [_run_job(job) for job in jobs]
    logging.info("datagen: running %d jobs in %d processes", len(jobs), processes)
    # "spawn": TensorFlow is not fork-safe once initialised, and a fresh process also
    # proves the job needs nothing but its arguments (and the usr dir it re-imports).
    context = multiprocessing.get_context(mp_start_method)
    with context.Pool(processes, initializer=_init_worker) as pool:
        return pool.map(_run_job, jobs, chunksize=1)


# ----------------------------------------------------------------------------
# Summaries
# ----------------------------------------------------------------------------
@dataclasses.dataclass
class GenerationSummary:
    """What one problem's generation left in data_dir."""
    problem: str
    files: int
    examples: int
    vocab_size: Optional[int]
    seconds: float

    def line(self) -> str:
        """"algorithmic_reverse_binary40: 11 files, 110,000 examples, vocab 4, 3.2 s"."""
        vocab = "vocab %s" % ("{:,}".format(self.vocab_size) if self.vocab_size else "-")
        return "%s: %d files, %s examples, %s, %.1f s" % (
            self.problem, self.files, "{:,}".format(self.examples), vocab, self.seconds)


def count_tfrecords(path) -> int:
    """Number of records in a TFRecord file, by walking the length headers (no decoding).

    Each record is: uint64 length, uint32 CRC of the length, data, uint32 CRC of the data.
    """
    import tensorflow as tf  # tf.io.gfile: data_dir may be remote (gs://...)

    count = 0
    size = tf.io.gfile.stat(path).length
    with tf.io.gfile.GFile(path, "rb") as handle:
        position = 0
        while position < size:
            header = handle.read(8)
            if len(header) < 8:
                raise ValueError("%s: truncated TFRecord header at byte %d" % (path, position))
            length = int.from_bytes(header, "little")
            position += 8 + 4 + length + 4
            if position > size:
                raise ValueError("%s: truncated TFRecord at byte %d" % (path, position))
            handle.seek(position)
            count += 1
    return count


def final_data_files(problem, data_dir) -> List[str]:
    """The problem's finished data files in data_dir (no unshuffled or temporary files)."""
    import tensorflow as tf

    if not tf.io.gfile.isdir(data_dir):
        return []
    final_name = re.compile(re.escape(problem.dataset_filename()) + _FINAL_DATA_FILE_SUFFIX)
    return sorted(os.path.join(data_dir, name) for name in tf.io.gfile.listdir(data_dir)
                  if final_name.fullmatch(name))


def _vocab_size(problem, data_dir) -> Optional[int]:
    try:
        hparams = problem.get_hparams(_model_hparams_with_data_dir(data_dir))
        return hparams.vocab_size.get("targets")
    except Exception as error:  # pylint: disable=broad-except
        # The summary must never turn a finished generation into a failure.
        logging.warning("datagen: no vocab size for %s (%s: %s)", problem.name,
                        type(error).__name__, error)
        return None


def _model_hparams_with_data_dir(data_dir):

    hparams = preprocessing.default_model_hparams()
    hparams.data_dir = data_dir
    return hparams


def summarize_problem(name, data_dir, seconds) -> GenerationSummary:
    problem = registry.problem(name)
    files = final_data_files(problem, data_dir)
    examples = sum(count_tfrecords(path) for path in files)
    return GenerationSummary(name, len(files), examples, _vocab_size(problem, data_dir), seconds)


# ----------------------------------------------------------------------------
# Generation
# ----------------------------------------------------------------------------
def _prepare_dir(path, what="folder"):
    """Expand `~`, make local paths absolute (workers may run elsewhere), create the folder.

    A folder that cannot be created (a path under a file, no permission) is a UserError
    naming it: `data_dir /x/file/d cannot be created (...); give a folder you can write to`.
    """
    import tensorflow as tf

    path = os.path.expanduser(path)
    if "://" not in path:
        path = os.path.abspath(path)
    try:
        tf.io.gfile.makedirs(path)
    except (tf.errors.OpError, OSError) as error:
        reason = getattr(error, "message", None) or str(error)
        raise errors.UserError("%s %s cannot be created (%s); give a folder you can write to"
                               % (what, path, reason.splitlines()[0])) from None
    if "://" not in path and not os.access(path, os.W_OK | os.X_OK):
        raise errors.UserError("%s %s is not writable; give a folder you can write to" %
                               (what, path))
    return path


def _check_datatypes_to_clean(problem_names, datatypes_to_clean):
    """The kinds as a tuple; UserError for unknown kinds or problems that are not
    translation problems."""
    from t2t.problems import translate
    kinds = tuple(_split_list(datatypes_to_clean) if isinstance(datatypes_to_clean, str)
                  else datatypes_to_clean)
    unknown = [kind for kind in kinds if kind not in translate.DATATYPES]
    if unknown:
        raise errors.UserError("--datatypes_to_clean: unknown kind(s) %s; use a comma list "
                               "of %s" % (", ".join(unknown), ", ".join(translate.DATATYPES)))
    others = [name for name in problem_names
              if not isinstance(registry.problem(name), translate.TranslateProblem)]
    if others:
        raise errors.UserError("--datatypes_to_clean applies to translation problems only; "
                               "%s %s not one" % (", ".join(others),
                                                  "is" if len(others) == 1 else "are"))
    return kinds


def _task_range(problem, task_id_start, task_id_end):
    if task_id_start == -1 and task_id_end == -1:
        return range(problem.num_generate_tasks)
    if task_id_start < 0 or task_id_end < 0:
        raise errors.UserError("give both --task_id_start and --task_id_end (got %d and %d)" %
                               (task_id_start, task_id_end))
    if not 0 <= task_id_start < task_id_end <= problem.num_generate_tasks:
        raise errors.UserError(
            "--task_id_start=%d --task_id_end=%d: problem %s has tasks 0..%d; give "
            "0 <= start < end <= %d" % (task_id_start, task_id_end, problem.name,
                                        problem.num_generate_tasks - 1,
                                        problem.num_generate_tasks))
    return range(task_id_start, task_id_end)


def generate_problems(problem_names: Iterable[str], data_dir, tmp_dir,
                      random_seed=DEFAULT_RANDOM_SEED, task_id=-1, max_cases=0,
                      task_id_start=-1, task_id_end=-1,
                      num_concurrent_processes=DEFAULT_NUM_CONCURRENT_PROCESSES,
                      num_shards=0, t2t_usr_dir="", mp_start_method="spawn",
                      datatypes_to_clean=None) -> List[GenerationSummary]:
    """Generate data for each problem; jobs run in up to `num_concurrent_processes` processes.

    Args:
      problem_names: registered names (see `resolve_problem_names`).
      data_dir: where data files go; empty: the system temp folder, with a warning (T2T).
      tmp_dir: where downloads and scratch files go.
      random_seed: base of every job's seed (`derive_seed`); None leaves the RNGs alone.
      task_id: >= 0 runs only that task of each problem (distributed generation).
      max_cases: 0 for no limit, else the cap per `generate_files` call.
      task_id_start, task_id_end: the task range of `multiprocess_generate` problems
        (default: all `num_generate_tasks`).
      num_concurrent_processes: how many jobs run at once; 1 runs all in this process.
      num_shards: T2T's legacy flag; any non-zero value is an error for registered problems.
      t2t_usr_dir: the user's folder, re-imported by worker processes.
      mp_start_method: multiprocessing start method for the worker pool.
      datatypes_to_clean: for translation problems, the kinds of training corpora ("txt",
        "tsv", "tmx") to filter with cleaner_en_xx instead of the problem's own choice
        (None: the problem's; [] cleans nothing).

    Returns:
      One `GenerationSummary` per problem, in order; the summary lines are also logged.
    """
    problem_names = list(problem_names)
    if num_shards:
        raise errors.UserError(
            "--num_shards=%d applies only to T2T's legacy generators; registered problems "
            "(%s) set their own shard counts, so drop --num_shards" %
            (num_shards, ", ".join(problem_names)))
    if max_cases is None or max_cases < 0:
        raise errors.UserError("--max_cases=%s: give 0 (no limit) or a positive count" %
                               max_cases)
    if not data_dir:
        data_dir = tempfile.gettempdir()
        logging.warning("It is strongly recommended to specify --data_dir. "
                        "Data will be written to default data_dir=%s.", data_dir)
    data_dir, tmp_dir = _prepare_dir(data_dir, "data_dir"), _prepare_dir(tmp_dir, "tmp_dir")
    verbosity = logging.get_verbosity()
    # Only for the closing summary line; the jobs log their own progress.
    total = Progress("datagen", unit="problems", every_seconds=float("inf"))

    jobs, prepare_seconds = [], collections.defaultdict(float)
    if datatypes_to_clean is not None:
        datatypes_to_clean = _check_datatypes_to_clean(problem_names, datatypes_to_clean)
    for name in problem_names:
        problem = registry.problem(name)
        if task_id is not None and task_id >= 0:
            task_ids = [task_id]
        elif problem.multiprocess_generate:
            task_ids = list(_task_range(problem, task_id_start, task_id_end))
            started = time.monotonic()
            logging.info("datagen: preparing %s for %d tasks", name, len(task_ids))
            if random_seed is not None:
                random_seed_lib.set_random_seed(derive_seed(random_seed, name, -1))
            problem.prepare_to_generate(data_dir, tmp_dir)
            prepare_seconds[name] += time.monotonic() - started
        else:
            task_ids = [-1]
        for job_task_id in task_ids:
            seed = None if random_seed is None else derive_seed(random_seed, name, job_task_id)
            jobs.append(_Job(name, data_dir, tmp_dir, seed, job_task_id, max_cases,
                             t2t_usr_dir or "", verbosity, datatypes_to_clean))

    times = _run_jobs(jobs, num_concurrent_processes, mp_start_method)

    spans = collections.defaultdict(list)
    for job, span in zip(jobs, times):
        spans[job.problem_name].append(span)
    summaries = []
    for name in problem_names:
        starts, ends = zip(*spans[name])
        seconds = max(ends) - min(starts) + prepare_seconds[name]
        summary = summarize_problem(name, data_dir, seconds)
        logging.info("%s", summary.line())
        summaries.append(summary)
    total.update(len(summaries))
    total.done(files=sum(s.files for s in summaries),
               examples=sum(s.examples for s in summaries))
    return summaries


def generate_problem(name, data_dir, tmp_dir, random_seed=DEFAULT_RANDOM_SEED, task_id=-1,
                     max_cases=0, task_id_start=-1, task_id_end=-1,
                     num_concurrent_processes=DEFAULT_NUM_CONCURRENT_PROCESSES, num_shards=0,
                     t2t_usr_dir="", mp_start_method="spawn") -> GenerationSummary:
    """Generate one problem's data (its tasks in parallel if `multiprocess_generate`).

        generate_problem("algorithmic_reverse_binary40", "/data", "/tmp/t2t", max_cases=100)
        # GenerationSummary(problem='algorithmic_reverse_binary40', files=11,
        #                   examples=200, vocab_size=4, seconds=0.1)
    """
    _check_problem_name(name)
    return generate_problems([name], data_dir, tmp_dir, random_seed=random_seed,
                             task_id=task_id, max_cases=max_cases,
                             task_id_start=task_id_start, task_id_end=task_id_end,
                             num_concurrent_processes=num_concurrent_processes,
                             num_shards=num_shards, t2t_usr_dir=t2t_usr_dir,
                             mp_start_method=mp_start_method)[0]
