"""TrainingLog: the step lines and the summary line both backends log, step by step or
several steps a call."""
import re
import time

from t2t.training import train_log


def test_summary_times_the_steps_not_what_runs_after_them(monkeypatch):
    # The Estimator backend ends its log in a hook's end(), after the final checkpoint's
    # evaluation (train_and_evaluate's listener): that evaluation is no training time.
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    lines = []
    log = train_log.TrainingLog(every_n_steps=10, description="train m", log_fn=lines.append)
    for step in range(1, 21):
        clock[0] += 0.5
        log.after_step(step, tokens=100, loss=1.0)
    clock[0] += 140.0  # the final evaluation
    summary = log.end()
    assert summary["seconds"] == 10.0
    assert summary["steps_per_sec"] == 2.0 and summary["tokens_per_sec"] == 200.0
    assert lines[-1].startswith("train m done: 20 steps, 2,000 tokens")
    assert "2.0 steps/s" in lines[-1] and lines[-1].endswith(", 10.0 s"), lines[-1]


def test_summary_without_steps():
    lines = []
    summary = train_log.TrainingLog(description="train m", log_fn=lines.append).end()
    assert summary["steps"] == 0 and "train m done: 0 steps" in lines[-1]


def _run(calls):
    """The lines a TrainingLog (a line every 4 steps) writes for `calls` and its summary."""
    lines = []
    log = train_log.TrainingLog(4, "train t", log_fn=lambda fmt, *args: lines.append(
        fmt % args if args else fmt))
    step = 0
    for steps, losses in calls:
        step += steps
        log.after_step(step, tokens=10 * steps, examples=2 * steps,
                       loss=sum(losses) / len(losses), steps=steps, last_loss=losses[-1])
    return [re.sub(r", [\d.]+ steps/s.*", "", line) for line in lines if "step " in line], \
        log.end()


def test_several_steps_a_call_log_what_one_step_a_call_logs():
    losses = [4.0, 3.0, 2.5, 2.0, 1.8, 1.6, 1.4, 1.2]
    one_by_one, summary_one = _run([(1, [loss]) for loss in losses])
    in_calls, summary_calls = _run([(3, losses[0:3]), (1, losses[3:4]), (4, losses[4:8])])

    assert one_by_one == in_calls == [
        "train t: step 4, loss 2.8750 (mean of 4 steps)",
        "train t: step 8, loss 1.5000 (mean of 4 steps)"]
    for summary in (summary_one, summary_calls):
        assert summary["steps"] == 8 and summary["final_step"] == 8
        assert summary["tokens"] == 80 and summary["examples"] == 16
        assert summary["final_loss"] == 1.2          # the last step's, not a call's mean
