"""TaskProblem: a SeqIO task as a model's Problem: hparams from the task's vocabularies,
converter features renamed to t2t's, and packed rows that give every example the loss it
gets unpacked (as tests/model/test_packed_equivalence.py checks for T2T packed problems)."""
import collections

import numpy as np
import pytest
import tensorflow as tf

from t2t import seqio
from t2t.core import errors
from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.models import transformer
from t2t.seqio_training import task_problem
from t2t.seqio_training.task_problem import TaskProblem

from seqio_training_testing import BYTES, add_copy_tsv_task, write_copy_tsv
from t2t_model_testing import EVAL, session

TRAIN = ModeKeys.TRAIN
PREDICT = ModeKeys.PREDICT
_v1 = tf.compat.v1


@pytest.fixture
def copy_task(tmp_path):
    return add_copy_tsv_task("copy_tsv", write_copy_tsv(tmp_path, {"train": 40,
                                                                   "validation": 8}))


def test_parse_feature_lengths():
    assert task_problem.parse_feature_lengths("inputs=256, targets=128") == \
        {"inputs": 256, "targets": 128}
    for bad in ("inputs", "inputs=0", "inputs=x", "=3", ""):
        with pytest.raises(errors.UserError, match="task_feature_lengths"):
            task_problem.parse_feature_lengths(bad)


def test_hparams_and_encoders_come_from_the_task(copy_task):
    problem = TaskProblem("copy_tsv", {"inputs": 8, "targets": 8})
    assert problem.name == "copy_tsv" and problem.has_inputs
    hp = problem.get_hparams()
    assert hp.vocab_size["inputs"] == hp.vocab_size["targets"] == BYTES.vocab_size == 259
    assert hp.modality["inputs"] == hp.modality["targets"] == "symbol"
    assert hp.modality["inputs_segmentation"] == "identity"  # packed by default
    encoder = problem.feature_info["targets"].encoder
    assert encoder.decode(encoder.encode("abc") + [1, 0]) == "abc"
    assert problem.data_files("/nowhere") == []
    unpacked = TaskProblem("copy_tsv", {"inputs": 8, "targets": 8}, pack=False)
    assert "inputs_segmentation" not in unpacked.get_hparams().modality


def test_converter_choice_and_errors(copy_task):
    assert TaskProblem("copy_tsv", {"inputs": 8, "targets": 8}).converter_kind == "encdec"
    prefix = TaskProblem("copy_tsv", {"inputs": 8, "targets": 8}, decoder_only=True)
    assert prefix.converter_kind == "prefix_lm" and not prefix.has_inputs
    assert "inputs" not in prefix.get_hparams().modality
    with pytest.raises(errors.UserError, match="no length for targets"):
        TaskProblem("copy_tsv", {"inputs": 8})
    with pytest.raises(errors.UserError, match="closest registered names: copy_tsv"):
        TaskProblem("copy_tsvv", {"inputs": 8, "targets": 8})


def test_unknown_task_from_python_says_what_to_import_once():
    # docs/seqio.md's "Evaluate a checkpoint in Python" without its task module imported: one
    # hint that fits Python and the programs, not a flag name and the same advice twice.
    with pytest.raises(errors.UserError) as caught:
        task_problem.get_provider("copy_words")
    message = str(caught.value)
    assert message.startswith("No Task or Mixture found with name 'copy_words'"), message
    assert message.count("import the module") == 1, message
    assert "--module_import or --t2t_usr_dir" in message, message


def test_train_rows_are_packed_with_t2t_feature_names(copy_task):
    problem = TaskProblem("copy_tsv", {"inputs": 12, "targets": 12}, seed=1)
    hp = registry.hparams("transformer_tiny")
    hp.batch_size = 48  # tokens: 4 rows of 12
    batch = next(iter(problem.input_fn(TRAIN, hp)))
    assert sorted(batch) == ["input_space_id", "inputs", "inputs_position",
                             "inputs_segmentation", "target_space_id", "targets",
                             "targets_position", "targets_segmentation"]
    assert batch["inputs"].shape == (4, 12, 1, 1) and batch["targets"].dtype == tf.int32
    seg = batch["targets_segmentation"].numpy()
    assert seg.max() > 1  # several examples per row
    # Each segment of the targets copies the same segment of the inputs.
    ins, tgts = batch["inputs"].numpy()[..., 0, 0], batch["targets"].numpy()[..., 0, 0]
    in_seg = batch["inputs_segmentation"].numpy()
    for row in range(4):
        for s in range(1, seg[row].max() + 1):
            assert tgts[row][seg[row] == s].tolist() == ins[row][in_seg[row] == s].tolist()
    eval_batch = next(iter(problem.input_fn(EVAL, hp)))
    assert "targets_segmentation" not in eval_batch


def test_prefix_lm_features_mask_the_prefix(copy_task):
    problem = TaskProblem("copy_tsv", {"inputs": 6, "targets": 6}, decoder_only=True,
                          pack=False)
    hp = registry.hparams("transformer_tiny")
    hp.batch_size, hp.use_fixed_batch_size = 2, True
    batch = next(iter(problem.input_fn(EVAL, hp)))
    assert sorted(k for k in batch if "space" not in k) == ["targets", "targets_mask"]
    targets = batch["targets"].numpy()[0, :, 0, 0]
    mask = batch["targets_mask"].numpy()[0]
    ex = next(seqio.get_mixture_or_task("copy_tsv").get_dataset(
        {"inputs": 6, "targets": 6}, split="validation", shuffle=False).as_numpy_iterator())
    n_in, n_tg = len(ex["inputs"]), len(ex["targets"])
    assert targets[:n_in + n_tg].tolist() == ex["inputs"].tolist() + ex["targets"].tolist()
    assert mask.tolist()[:n_in + n_tg + 1] == [0] * n_in + [1] * n_tg + [0]


def token_nll(logits, targets):
    logits = logits[:, :, 0, 0, :].astype(np.float64)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    return -np.take_along_axis(log_probs, targets[:, :, 0, :], axis=-1)[..., 0]


def test_packed_rows_give_each_example_its_unpacked_loss(copy_task):
    """Packed task rows through the Transformer (EVAL: no dropout): per-example losses
    equal those of the same examples padded one per row."""
    lengths = {"inputs": 16, "targets": 16}
    packed_problem = TaskProblem("copy_tsv", lengths, pack=True)
    unpacked_problem = TaskProblem("copy_tsv", lengths, pack=False)
    packed = next(iter(packed_problem.dataset(TRAIN, shuffle_files=False).batch(3)))
    num_examples = int(packed["targets_segmentation"].numpy().max(axis=1).sum())
    unpacked = next(iter(unpacked_problem.dataset(EVAL, dataset_split="train")
                         .batch(num_examples)))
    packed = {k: v.numpy() for k, v in packed.items()}
    unpacked = {k: v.numpy() for k, v in unpacked.items()}
    for feats in (packed, unpacked):
        feats["inputs"] = feats["inputs"][:, :, None, None]
        feats["targets"] = feats["targets"][:, :, None, None]

    with tf.Graph().as_default():
        _v1.set_random_seed(3)
        hp = registry.hparams("transformer_test")
        hp.hidden_size, hp.filter_size, hp.num_heads, hp.num_hidden_layers = 16, 32, 2, 2
        model = transformer.Transformer(hp, EVAL, packed_problem.get_hparams(hp))
        outputs = [model({k: tf.constant(v) for k, v in f.items()})[0]
                   for f in (packed, unpacked)]
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            packed_logits, unpacked_logits = sess.run(outputs)

    def losses_by_example(nll, feats, segmentation=None):
        found = collections.defaultdict(list)
        targets = feats["targets"][:, :, 0, 0]
        for row in range(targets.shape[0]):
            if segmentation is None:
                spans = [targets[row] > 0]
            else:
                spans = [segmentation[row] == s for s in range(1, segmentation[row].max() + 1)]
            for span in spans:
                found[tuple(targets[row][span])].append(nll[row][span].mean())
        return found

    packed_losses = losses_by_example(token_nll(packed_logits, packed["targets"]), packed,
                                      packed["targets_segmentation"])
    unpacked_losses = losses_by_example(token_nll(unpacked_logits, unpacked["targets"]),
                                        unpacked)
    assert sum(len(v) for v in packed_losses.values()) == num_examples >= 6
    assert set(packed_losses) == set(unpacked_losses)
    for key in packed_losses:
        np.testing.assert_allclose(sorted(packed_losses[key]), sorted(unpacked_losses[key]),
                                   atol=1e-5, rtol=0)


def test_lm_task_without_inputs_trains_decoder_only(tmp_path):
    """A task with targets only: LM converter, packed targets with segments, and a
    decoder-only Transformer takes the features and gives a finite loss."""
    def source_fn(split, shuffle_files, seed=None):
        del split, shuffle_files, seed
        return tf.data.Dataset.from_tensor_slices({"targets": ["abc", "de", "f", "ghij"] * 4})

    seqio.TaskRegistry.add("lm_task", seqio.FunctionDataSource(source_fn, splits=["train"]),
                           preprocessors=[seqio.preprocessors.tokenize,
                                          seqio.preprocessors.append_eos],
                           output_features={"targets": seqio.Feature(BYTES)})
    problem = TaskProblem("lm_task", {"targets": 16})
    assert problem.converter_kind == "lm" and not problem.has_inputs
    hp = registry.hparams("transformer_test")
    hp.batch_size = 32
    batch = next(iter(problem.input_fn(TRAIN, hp)))
    assert sorted(k for k in batch if "space" not in k) == [
        "targets", "targets_position", "targets_segmentation"]
    assert batch["targets_segmentation"].numpy().max() >= 2
    with tf.Graph().as_default():
        model = transformer.Transformer(hp, EVAL, problem.get_hparams(hp))
        _, losses = model({k: tf.constant(v.numpy()) for k, v in batch.items()})
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            loss = sess.run(losses["training"])
    assert np.isfinite(loss) and loss > 0


def test_decoder_only_predict_batches_continue_prompts_of_one_length(copy_task):
    """PREDICT rows of a PrefixLM task: the inputs (with EOS) are the prompt, one prompt
    length per batch, the rest of the row is what a decode is compared with."""
    problem = TaskProblem("copy_tsv", {"inputs": 6, "targets": 6}, decoder_only=True)
    hp = registry.hparams("transformer_tiny")
    hp.batch_size, hp.use_fixed_batch_size = 3, True
    examples = list(seqio.get_mixture_or_task("copy_tsv").get_dataset(
        {"inputs": 6, "targets": 6}, split="validation", shuffle=False).as_numpy_iterator())
    seen = []
    for batch in problem.input_fn(PREDICT, hp):
        prompts = batch["inputs"].numpy()[:, :, 0, 0]
        assert prompts.shape[0] <= 3 and (prompts[:, -1] == 1).all() and (prompts > 0).all()
        assert int(batch["decode_length"].numpy()) == 6 and "targets" not in batch
        for prompt, rest in zip(prompts, batch["infer_targets"].numpy()[:, :, 0, 0]):
            seen.append((prompt.tolist(), rest[:list(rest).index(1) + 1].tolist()))
    assert sorted(seen) == sorted((e["inputs"].tolist(), e["targets"].tolist())
                                  for e in examples)

    row = {"decoder_target_tokens": tf.constant([7, 8, 1, 3, 1, 0]),
           "decoder_causal_attention": tf.constant([1, 1, 1, 1, 0, 0])}
    assert task_problem.prompt_of(row, "prefix_lm").numpy().tolist() == [7, 8, 1]
    assert task_problem.prompt_of(row, "lm").numpy().tolist() == []
