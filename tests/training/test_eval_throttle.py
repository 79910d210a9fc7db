"""An evaluation skipped for --eval_throttle_seconds is said once (INFO), naming the flag and
when the next can run, on the native backend and under an Estimator; later skips at --v=1."""
import logging as std_logging
import os
import time

import pytest
from absl import logging

from t2t.core import backend_choice
from t2t.training import eval_events, eval_throttle, run_config, trainer_lib
from t2t.training.native import experiment as native_experiment

PROBLEM = "algorithmic_reverse_binary40_test"
TINY = "hidden_size=16,filter_size=32,num_hidden_layers=1,num_heads=2,batch_size=128"


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def _skip_lines(caplog):
    return [(record.levelno, record.getMessage()) for record in caplog.records
            if record.getMessage().startswith("Evaluation skipped")]


@pytest.fixture
def absl_debug(caplog):
    previous = logging.get_verbosity()
    logging.set_verbosity(logging.DEBUG)
    with caplog.at_level(std_logging.DEBUG, logger="absl"):
        yield caplog
    logging.set_verbosity(previous)


def test_the_first_skip_is_info_and_names_the_flag_and_the_time(absl_debug):
    clock = FakeClock()
    noon = time.mktime((2026, 1, 2, 12, 0, 0, 0, 0, -1))   # the wall clock's "now"
    throttle = eval_throttle.EvalThrottle(600, clock=clock, wall_clock=lambda: noon)
    assert throttle.due()
    throttle.record_evaluation()
    clock.now += 35
    assert not throttle.due()
    throttle.skipped(2000)
    clock.now += 100
    throttle.skipped(3000)
    clock.now += 465
    assert throttle.due()
    assert _skip_lines(absl_debug) == [
        (std_logging.INFO,
         "Evaluation skipped at step 2000: --eval_throttle_seconds=600 allows one every 600 s "
         "and the last was 35 s ago; the next runs at the first checkpoint saved after "
         "12:09:25, or when training ends (later skips are logged at --v=1)"),
        (std_logging.DEBUG,
         "Evaluation skipped at step 3000: --eval_throttle_seconds=600 allows one every 600 s "
         "and the last was 135 s ago; the next runs at the first checkpoint saved after "
         "12:07:45, or when training ends")]


def test_no_throttle_evaluates_every_checkpoint():
    throttle = eval_throttle.EvalThrottle(0, clock=FakeClock())
    throttle.record_evaluation()
    assert throttle.due()


def _specs(model_dir, data_dir):
    """8 steps, a checkpoint every 2, evaluations at most hourly: evaluated at step 2 and at
    the end (8); the checkpoints of steps 4 and 6 are skipped."""
    hparams = trainer_lib.create_hparams("transformer_tiny", TINY, data_dir=data_dir,
                                         problem_name=PROBLEM)
    run_spec = run_config.RunConfigSpec(model_dir=model_dir, save_checkpoints_steps=2,
                                        keep_checkpoint_max=10, random_seed=1)
    spec = trainer_lib.ExperimentSpec("transformer", PROBLEM, data_dir, train_steps=8,
                                      eval_steps=1, schedule="continuous_train_and_eval",
                                      eval_throttle_seconds=3600)
    return run_spec, hparams, spec


def _assert_skips_said_once(model_dir, caplog):
    assert sorted(eval_events.read_eval_metrics(os.path.join(model_dir, "eval"))) == [2, 8]
    lines = _skip_lines(caplog)
    assert [(level, message.split(":")[0]) for level, message in lines] == [
        (std_logging.INFO, "Evaluation skipped at step 4"),
        (std_logging.DEBUG, "Evaluation skipped at step 6")]
    assert "--eval_throttle_seconds=3600" in lines[0][1]


def test_native_backend_says_so(data_dir, tmp_path, absl_debug):
    model_dir = str(tmp_path / "native")
    native_experiment.native_experiment(
        *_specs(model_dir, data_dir)).continuous_train_and_eval()
    _assert_skips_said_once(model_dir, absl_debug)


@pytest.mark.skipif(not backend_choice.estimator_available(),
                    reason="this TensorFlow has no tf.estimator")
def test_estimator_backend_says_so(data_dir, tmp_path, absl_debug):
    model_dir = str(tmp_path / "estimator")
    run_spec, hparams, spec = _specs(model_dir, data_dir)
    trainer_lib.experiment_from_spec(run_config.run_config_from_spec(run_spec), hparams,
                                     spec).continuous_train_and_eval()
    _assert_skips_said_once(model_dir, absl_debug)
