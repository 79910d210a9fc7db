"""TrainingLog: the step lines and the summary line both backends log."""
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
