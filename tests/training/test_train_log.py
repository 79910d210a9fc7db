"""train_log.TrainingLog: step lines and the summary, step by step or several steps a call."""
import re

from t2t.training import train_log


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
