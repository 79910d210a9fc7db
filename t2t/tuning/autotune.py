"""A hyperparameter study on Optuna: each trial a normal t2t-trainer run, pruned early.

    spec = StudySpec(output_dir="/runs/search", ranges="transformer_base_range",
                     objective="metrics-translate_ende_wmt8k/targets/neg_log_perplexity",
                     maximize=True, max_trials=20, parallel_trials=2)
    results = run_study(spec, trainer_command)   # trainer_command(trial_dir, hparams) -> argv
    print(results_table(results))
    # trial  state     objective  step  hparams
    # 0      COMPLETE  -1.8312    2000  initializer_gain=1.21,learning_rate=0.54,...
    # 1      PRUNED    -2.9021    1000  initializer_gain=0.63,learning_rate=2.7,...
    # best: trial 0, ... -1.8312: initializer_gain=1.21,learning_rate=0.54,...

How a trial runs: Optuna's TPE sampler draws the hparams from the ranges; the trainer runs
as a subprocess with `--output_dir=<output_dir>/trial_<n> --hparams=<base>,<drawn>` (its log
in `trial_<n>/train.log`, its hparams.json beside its checkpoints). After every evaluation
the objective (a tag of the eval events in `trial_<n>/eval`) is reported to Optuna, and the
median pruner stops a trial whose value is worse than the median of the earlier trials at
the same step. The trial's value is its last evaluation.

Where the study lives: an Optuna storage, by default SQLite at `<output_dir>/autotune.db`,
or any RDB URL (`postgresql://user:pw@host/db`): machines that run the same command with
the same storage and a shared output_dir join one study. Trials keep a heartbeat; a trial
whose process died (kill -9, a lost machine) is retried when the study next starts a trial,
in the same trial folder, so it resumes from its last checkpoint. Finished trials are kept.
"""
import dataclasses
import glob
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from typing import Callable, List, Optional

from absl import logging

from t2t.core import errors
from t2t.tuning import search_space

DEFAULT_STORAGE_FILENAME = "autotune.db"
HEARTBEAT_SECONDS = 2
GRACE_SECONDS = 8
MAX_RETRIES = 2


class TrialFailedError(RuntimeError):
    """A trial's training run failed (not a pruning): the study goes on without it."""


@dataclasses.dataclass(frozen=True)
class StudySpec:
    """What to search and how.

    output_dir: holds trial_<n> folders (and the default SQLite storage).
    ranges: a registered RangedHParams name. objective: an eval tag ("loss",
    "metrics-<problem>/targets/accuracy"; "metrics-<problem>/accuracy" is also found).
    base_hparams: overrides every trial starts from (they fix those names).
    storage: an Optuna RDB URL; "" = sqlite:///<output_dir>/autotune.db.
    """
    output_dir: str
    ranges: str
    objective: str
    maximize: bool = True
    max_trials: int = 10
    parallel_trials: int = 1
    storage: str = ""
    study_name: str = "t2t-autotune"
    base_hparams: str = ""
    seed: Optional[int] = None
    poll_seconds: float = 1.0


@dataclasses.dataclass(frozen=True)
class TrialResult:
    number: int
    state: str
    value: Optional[float]
    step: Optional[int]
    hparams: str
    retry_of: Optional[int] = None
    error: Optional[str] = None


def import_optuna():
    """Optuna, or a UserError saying how to install it."""
    try:
        import optuna
    except ImportError:
        raise errors.UserError("--hparams_range needs Optuna; install t2t's tune extra: "
                               "pip install 't2t-toolkit[tune]'") from None
    return optuna


def storage_url(spec):
    if spec.storage:
        return spec.storage
    return "sqlite:///" + os.path.join(os.path.abspath(spec.output_dir), DEFAULT_STORAGE_FILENAME)


# ---------------------------------------------------------------------------- eval events
def _tag_matches(tag, objective):
    if tag == objective:
        return True
    # "metrics-<problem>/accuracy" names "metrics-<problem>/targets/accuracy" too.
    head, _, metric = objective.rpartition("/")
    return bool(head) and tag == "%s/targets/%s" % (head, metric)


def read_objective(run_dir, objective):
    """{step: value} of `objective` in `<run_dir>/eval` events (partial files tolerated).

        read_objective("/runs/search/trial_0", "loss")   # {20: 1.93, 40: 1.41}
    """
    import tensorflow as tf

    values = {}
    for path in sorted(glob.glob(os.path.join(run_dir, "eval", "events.out.tfevents.*"))):
        try:
            for event in tf.compat.v1.train.summary_iterator(path):
                for value in event.summary.value:
                    if _tag_matches(value.tag, objective):
                        number = value.simple_value
                        if value.HasField("tensor"):
                            number = float(tf.make_ndarray(value.tensor))
                        values[int(event.step)] = float(number)
        except tf.errors.DataLossError:
            continue  # the evaluator is writing it right now; the rest is read next time
    return values


def eval_tags(run_dir):
    """The loss and metric tags of `<run_dir>/eval` events (what an objective may name)."""
    import tensorflow as tf

    tags = set()
    for path in glob.glob(os.path.join(run_dir, "eval", "events.out.tfevents.*")):
        try:
            for event in tf.compat.v1.train.summary_iterator(path):
                tags.update(value.tag for value in event.summary.value)
        except tf.errors.DataLossError:
            pass
    # What an objective can be: the loss and the problem's metrics.
    return sorted(tag for tag in tags if tag == "loss" or tag.startswith("metrics-"))


# ---------------------------------------------------------------------------- trial process
def _die_with_parent():
    """In the child: get SIGKILL when the study process dies (Linux), so kill -9 of the
    study leaves no orphan trainer writing into a trial folder."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _stop(process, timeout=30):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _tail(path, lines=5):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return " | ".join(line.strip() for line in f.read().splitlines()[-lines:])
    except OSError:
        return ""


# ---------------------------------------------------------------------------- the study
def _retry_of(trial):
    return trial.user_attrs.get("retry_of")


def _root(trial):
    retry_of = _retry_of(trial)
    return trial.number if retry_of is None else retry_of


def _enqueue_retry(study, trial):
    """Run `trial`'s hparams again (in its folder), at most MAX_RETRIES times per trial."""
    root = _root(trial)
    retries = [t for t in study.get_trials(deepcopy=False) if _retry_of(t) == root]
    if len(retries) >= MAX_RETRIES:
        logging.warning("autotune: trial %d stopped %d times; not retrying it again", root,
                        len(retries) + 1)
        return
    logging.info("autotune: trial %d was interrupted; it will run again in trial_%d",
                 trial.number, root)
    study.enqueue_trial(dict(trial.params), user_attrs={"retry_of": root},
                        skip_if_exists=False)


def _retry_interrupted(study):
    """Enqueue the trials a Ctrl-C interrupted (not yet retried) when the study restarts."""
    trials = study.get_trials(deepcopy=False)
    retried = {_retry_of(t) for t in trials if _retry_of(t) is not None}
    for trial in trials:
        if trial.state.name == "FAIL" and trial.user_attrs.get("interrupted") and \
                _root(trial) not in retried:
            _enqueue_retry(study, trial)
            retried.add(_root(trial))


def _wait_out_stale_trials(optuna, study):
    """Trials left RUNNING by a dead process are failed (and retried) once their heartbeat
    is older than the grace period; live trials of other machines keep beating."""
    running = study.get_trials(deepcopy=False,
                               states=(optuna.trial.TrialState.RUNNING,))
    if not running:
        return
    logging.info("autotune: %d trial(s) marked running; waiting %d s to tell live from dead",
                 len(running), GRACE_SECONDS + HEARTBEAT_SECONDS)
    # Optuna never counts a trial with no heartbeat as stale, and a process killed between
    # creating a trial and its first beat leaves exactly that. One beat recorded here makes
    # such a trial stale after the wait; a live trial's own beats keep it fresh.
    for trial in running:
        study._storage.record_heartbeat(trial._trial_id)
    time.sleep(GRACE_SECONDS + HEARTBEAT_SECONDS)
    optuna.storages.fail_stale_trials(study)


def _finished(optuna, study):
    states = optuna.trial.TrialState
    return [t for t in study.get_trials(deepcopy=False)
            if t.state in (states.COMPLETE, states.PRUNED)]


def create_study(spec):
    """The Optuna study of `spec` (created, or loaded when it exists)."""
    optuna = import_optuna()
    # Optuna would log each failed trial with a traceback; run_study says it in one line.
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    url = storage_url(spec)
    if url.startswith("sqlite:///"):
        os.makedirs(spec.output_dir, exist_ok=True)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    try:
        storage = optuna.storages.RDBStorage(
            url, heartbeat_interval=HEARTBEAT_SECONDS, grace_period=GRACE_SECONDS,
            failed_trial_callback=_enqueue_retry,
            engine_kwargs={"connect_args": {"timeout": 60}} if url.startswith("sqlite") else None)
    except (ImportError, ValueError) as error:
        raise errors.UserError("--autotune_storage=%s: %s; give an SQLAlchemy URL such as "
                               "sqlite:///path/study.db or postgresql://user:pw@host/db (with "
                               "its driver installed)" % (url, errors_line(error))) from None
    sampler = optuna.samplers.TPESampler(seed=spec.seed)
    # The median of earlier trials at the same step decides; the first trials (and the
    # first evaluation of each) are never pruned.
    pruner = optuna.pruners.MedianPruner(
        n_startup_trials=max(1, min(5, spec.max_trials // 3)), n_warmup_steps=0)
    return optuna.create_study(
        storage=storage, sampler=sampler, pruner=pruner, study_name=spec.study_name,
        direction="maximize" if spec.maximize else "minimize", load_if_exists=True)


def errors_line(error):
    return " ".join(str(error).split())


def run_study(spec: StudySpec, trainer_command: Callable[[str, str], List[str]],
              rhp=None, out=None) -> List[TrialResult]:
    """Run trials until `spec.max_trials` have completed or been pruned; returns all trials.

    Args:
      spec: the study.
      trainer_command: (trial_dir, hparams string) -> the argv of one training run.
      rhp: the filled RangedHParams (default: `spec.ranges` from the registry, with the
        names of `spec.base_hparams` fixed).
      out: where progress lines go (default: the log).
    """
    optuna = import_optuna()
    if rhp is None:
        rhp = search_space.ranged_hparams_by_name(spec.ranges)
    fixed = re.findall(r"(?:^|,)\s*([A-Za-z_]\w*)\s*=", spec.base_hparams or "")
    for name in fixed:  # --hparams fix a name: it is not searched
        rhp.remove(name)
    if not search_space.parameters(rhp):
        raise errors.UserError("--hparams_range=%s leaves nothing to search (--hparams fixes "
                               "every name in it)" % spec.ranges)
    say = out or (lambda line: logging.info("%s", line))
    study = create_study(spec)
    _wait_out_stale_trials(optuna, study)
    _retry_interrupted(study)
    lock = threading.Lock()
    stop = threading.Event()

    def objective(trial):
        values = search_space.suggest(trial, rhp)
        drawn = search_space.hparams_string(values)
        hparams = ",".join(part for part in (spec.base_hparams.strip(","), drawn) if part)
        root = _root(trial)
        trial_dir = os.path.join(spec.output_dir, "trial_%d" % root)
        trial.set_user_attr("hparams", drawn)
        trial.set_user_attr("trial_dir", trial_dir)
        os.makedirs(trial_dir, exist_ok=True)
        log_path = os.path.join(trial_dir, "train.log")
        say("trial %d%s: %s" % (trial.number, "" if root == trial.number else
                                " (retry of trial %d)" % root, drawn))
        reported = {}
        with open(log_path, "a") as log:
            process = subprocess.Popen(trainer_command(trial_dir, hparams), stdout=log,
                                       stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
            try:
                while True:
                    code = process.poll()
                    for step, value in sorted(read_objective(trial_dir,
                                                             spec.objective).items()):
                        if step in reported:
                            continue
                        reported[step] = value
                        trial.report(value, step)
                        say("trial %d: step %d, %s %.4f" % (trial.number, step,
                                                           spec.objective, value))
                        if trial.should_prune():
                            say("trial %d: pruned at step %d" % (trial.number, step))
                            _stop(process)
                            trial.set_user_attr("step", step)
                            raise optuna.TrialPruned()
                    if code is not None:
                        break
                    if stop.is_set():
                        _stop(process)
                        raise KeyboardInterrupt
                    time.sleep(spec.poll_seconds)
            except KeyboardInterrupt:
                trial.set_user_attr("interrupted", True)
                stop.set()
                raise
            finally:
                _stop(process)
        def fail(message):
            trial.set_user_attr("error", message)
            say(message)
            raise TrialFailedError(message)

        if code != 0:
            fail("trial %d: t2t-trainer exited with code %d (%s); its log is %s" % (
                trial.number, code, _tail(log_path), log_path))
        if not reported:
            tags = eval_tags(trial_dir)
            fail("trial %d: no evaluation of %s in %s/eval; %s" % (
                trial.number, spec.objective, trial_dir,
                ("give --autotune_objective one of " + ", ".join(tags)) if tags else
                "training ended before its first evaluation (lower --local_eval_frequency)"))
        step = max(reported)
        trial.set_user_attr("step", step)
        value = reported[step]
        if math.isnan(value):
            fail("trial %d: %s is NaN at step %d" % (trial.number, spec.objective, step))
        with lock:
            say("trial %d finished: %s %.4f at step %d" % (trial.number, spec.objective,
                                                           value, step))
        return value

    def enough(study_, unused_trial):
        if len(_finished(optuna, study_)) >= spec.max_trials:
            study_.stop()

    # Rounds of exactly the trials still missing, so parallel jobs never start more than
    # max_trials; failed or retried trials leave some missing for the next round. A round
    # that finishes nothing (every trial fails) ends the study.
    while True:
        remaining = spec.max_trials - len(_finished(optuna, study))
        if remaining <= 0:
            break
        before = len(_finished(optuna, study))
        try:
            study.optimize(objective, n_trials=remaining, n_jobs=max(1, spec.parallel_trials),
                           catch=(TrialFailedError,), callbacks=[enough],
                           gc_after_trial=False)
        except ValueError as error:
            # Optuna's RDB storage can hand one enqueued (retried) trial to two parallel
            # jobs; the second then fails to record a trial the first finished. The study
            # is intact: count again and run what is still missing.
            if not str(error).startswith("Cannot tell a "):
                raise
            logging.warning("autotune: %s (a retried trial ran twice); continuing", error)
        if len(_finished(optuna, study)) == before:
            break
    return trial_results(study)


def trial_results(study) -> List[TrialResult]:
    results = []
    for trial in study.get_trials(deepcopy=False):
        value = trial.value if trial.value is not None else (
            trial.intermediate_values[max(trial.intermediate_values)]
            if trial.intermediate_values else None)
        results.append(TrialResult(trial.number, trial.state.name, value,
                                   trial.user_attrs.get("step"),
                                   trial.user_attrs.get("hparams", ""), _retry_of(trial),
                                   trial.user_attrs.get("error")))
    return results


def best_result(results, maximize=True):
    """The COMPLETE trial with the best value, or None."""
    complete = [r for r in results if r.state == "COMPLETE" and r.value is not None]
    if not complete:
        return None
    return (max if maximize else min)(complete, key=lambda r: r.value)


def results_table(results, objective, maximize=True):
    """The trials as a text table, then the best hparams string."""
    lines = ["%-6s %-9s %-10s %-7s %s" % ("trial", "state", "objective", "step", "hparams")]
    for r in results:
        name = str(r.number) if r.retry_of is None else "%d(%d)" % (r.number, r.retry_of)
        value = "-" if r.value is None else "%.4f" % r.value
        step = "-" if r.step is None else str(r.step)
        lines.append("%-6s %-9s %-10s %-7s %s" % (name, r.state, value, step, r.hparams))
    best = best_result(results, maximize)
    if best is None:
        lines.append("best: none (no trial completed)")
    else:
        lines.append("best: trial %d, %s %.4f: %s" % (best.number, objective, best.value,
                                                      best.hparams))
    return "\n".join(lines)


def python_trainer_command(flag_args):
    """`trainer_command` running `python -m t2t.bin.t2t_trainer <flag_args>` per trial."""

    def command(trial_dir, hparams):
        return [sys.executable, "-m", "t2t.bin.t2t_trainer"] + list(flag_args) + [
            "--output_dir=" + trial_dir, "--hparams=" + hparams]

    return command
