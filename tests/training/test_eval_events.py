"""eval_events.training_ended: when an evaluator of a run is done."""
from t2t.training import eval_events


def test_training_ended_at_train_steps_or_after_an_early_stop(tmp_path):
    model_dir = str(tmp_path)
    assert not eval_events.training_ended(model_dir, 100, None)
    assert not eval_events.training_ended(model_dir, 100, 40)
    assert eval_events.training_ended(model_dir, 100, 100)
    assert eval_events.training_ended(model_dir, 100, 120)

    eval_events.write_early_stop(model_dir, step=40, train_steps=100)
    assert not eval_events.training_ended(model_dir, 100, None)
    assert not eval_events.training_ended(model_dir, 100, 30)
    assert eval_events.training_ended(model_dir, 100, 40)
    # The record of a run with another train_steps is an earlier run's.
    assert not eval_events.training_ended(model_dir, 200, 40)

    eval_events.clear_early_stop(model_dir)
    assert not eval_events.training_ended(model_dir, 100, 40)
