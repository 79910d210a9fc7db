"""Decoder-only decoding of a task without inputs (LM converter): the split's examples are
generated from an empty prompt, lines of a file are prompts that the model continues, and
target lines are scored; a tiny model trained briefly on cyclic letter sequences."""
import numpy as np
import pytest
import tensorflow as tf

from t2t import seqio
from t2t.core import errors
from t2t.seqio_training import inference, training
from t2t.training.run_config import RunConfigSpec

from seqio_training_testing import BYTES

HPARAMS = ("hidden_size=32,filter_size=64,num_hidden_layers=1,num_heads=2,batch_size=512,"
           "learning_rate_warmup_steps=50,learning_rate_constant=0.5,"
           "layer_prepostprocess_dropout=0.0,attention_dropout=0.0,relu_dropout=0.0")
STEPS = 150


def cycles(n, seed):
    """"cdabcd", "abca", ...: the letters a-d in a cycle from a random one."""
    rng = np.random.RandomState(seed)
    return ["".join("abcd"[(start + k) % 4] for k in range(rng.randint(3, 8)))
            for start in rng.randint(4, size=n)]


@pytest.fixture
def lm_run(tmp_path):
    def source_fn(split, shuffle_files, seed=None):
        del shuffle_files, seed
        return tf.data.Dataset.from_tensor_slices(
            {"targets": cycles(800 if split == "train" else 3, {"train": 0}.get(split, 1))})

    seqio.TaskRegistry.add(
        "cycles", seqio.FunctionDataSource(source_fn, splits=["train", "validation"]),
        preprocessors=[seqio.preprocessors.tokenize, seqio.preprocessors.append_eos],
        output_features={"targets": seqio.Feature(BYTES)},
        postprocess_fn=lambda text, example=None, is_target=False: text.upper(),
        metric_fns=[seqio.metrics.exact_match])
    spec = training.TaskTrainingSpec("cycles", {"targets": 10}, decoder_only=True, seed=1)
    hparams = training.task_hparams("transformer_tiny", HPARAMS, spec)
    model_dir = str(tmp_path / "model")
    run_config = RunConfigSpec("transformer", model_dir=model_dir,
                               random_seed=1)
    training.create_task_experiment(run_config, hparams, "transformer", spec,
                                    train_steps=STEPS, schedule="train").train()
    return hparams, model_dir, tmp_path


def test_lm_task_decodes_from_empty_and_file_prompts_and_scores(lm_run):
    hparams, model_dir, tmp_path = lm_run
    problem = hparams.problem
    assert problem.converter_kind == "lm"
    checkpoint = tf.train.latest_checkpoint(model_dir)
    estimator = inference.create_estimator("transformer", hparams, model_dir)

    # The split: no prompt, so greedy decoding gives one output for every example.
    split = inference.decode_task(estimator, problem, "cycles", "validation",
                                  str(tmp_path / "split.txt"), checkpoint)
    assert len(split) == 3 and len(set(split)) == 1
    assert (tmp_path / "split.txt.targets").read_text().count("\n") == 3

    # File lines are prompts (no EOS); the outputs are their continuations, post-processed.
    outputs = inference.decode_lines(estimator, problem, "cycles", ["abc", "da", "bcdab"],
                                     str(tmp_path / "lines.txt"), checkpoint)
    assert (tmp_path / "lines.txt").read_text().splitlines() == outputs
    print("continuations:", outputs)
    assert outputs[0].startswith("D") and outputs[1].startswith("B"), outputs

    # Target lines (no tab) are scored: the cycle is likelier than its reverse.
    pairs = tmp_path / "targets.txt"
    pairs.write_text("abcda\nadcba\n")
    losses = inference.score_file("transformer", hparams, "cycles", str(pairs), checkpoint)
    assert len(losses) == 2 and 0 <= losses[0] < losses[1], losses
    pairs.write_text("abc\n" + "abcd" * 3 + "\n")
    with pytest.raises(errors.UserError, match="line 2: the target has 13 ids with EOS, "
                                               "more than the task's targets length 10"):
        inference.score_file("transformer", hparams, "cycles", str(pairs), checkpoint)
