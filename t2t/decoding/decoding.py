"""Decoding with a trained model: the dev set, a text file, a terminal, or scoring pairs.

Everything takes its settings as arguments (T2T's version read absl FLAGS):

    decode_hp = decode_hparams("beam_size=1,alpha=0.0")
    estimator = trainer_lib.create_estimator("transformer", hparams, run_config,
                                             decode_hparams=decode_hp)
    decode_from_file(estimator, "src.txt", hparams, decode_hp, model_name="transformer",
                     hparams_set="transformer_tiny")
    # writes src.txt.transformer.transformer_tiny.<problem>.beam1.alpha0.0.decodes: one
    # decode per line of src.txt, in src.txt's order (decoded longest input first)
    decode_from_dataset(estimator, "algorithmic_reverse_binary40", hparams, decode_hp,
                        decode_to_file="out")
    # writes out.<model>.<hp>.<problem>.beam1.alpha0.0.{decodes,targets,inputs}
    score_file("pairs.txt", "transformer", hparams, "/train/model.ckpt-1000")
    # one loss per "input<TAB>target" line: [0.125, 2.5, ...]
    decode_dev_sample(estimator, hparams, decode_hp, num_examples=3)
    # DevDecodeSummary(inputs=[3 strings], decodes=[...], references=[...],
    #                  sequence_accuracy=0.97, num_decoded=100)
"""
import collections
import contextlib
import os
import re
import string
import sys

import numpy as np
import tensorflow as tf
from absl import logging

from t2t.core import atomic_files
from t2t.core import errors
from t2t.core import registry
from t2t.core.hparam import HParams
from t2t.core.modes import ModeKeys
from t2t.core.progress import Progress
from t2t.decoding import batch_input
from t2t.decoding import input_checks
from t2t.decoding.input_checks import _input_vocab_size, check_inputs, encode_input
from t2t.encoders import text_encoder
from t2t.model import model_hparams

_PREDICT = ModeKeys.PREDICT

# Default decode batch size for decode_from_file (T2T's).
DEFAULT_FILE_BATCH_SIZE = 32

DecodeHookArgs = collections.namedtuple(
    "DecodeHookArgs",
    ["estimator", "problem", "output_dirs", "hparams", "decode_hparams", "predictions"])

DevDecodeSummary = collections.namedtuple(
    "DevDecodeSummary",
    ["inputs", "decodes", "references", "sequence_accuracy", "num_decoded"])


def decode_hparams(overrides=""):
    """Hyperparameters for decoding, with T2T 1.15.7's names and defaults.

        hp = decode_hparams("beam_size=1,return_beams=true")
        hp.beam_size, hp.alpha, hp.extra_length, hp.batch_size   # 1, 0.6, 100, 0

    A `delimiter` given with a backslash escape ("delimiter=\\t") is unescaped.
    """
    hp = HParams(
        save_images=False,
        log_results=True,
        extra_length=100,  # Ids decoded beyond the input length.
        min_length_ratio=0.0,
        batch_size=0,  # 0: the model's batching (dataset) or 32 (file).
        beam_size=4,
        alpha=0.6,  # Length penalty exponent.
        # When a beam search ends: "max_length" (T2T's exact bound) or "current_length"
        # (the peers' sooner stop); see t2t.search.beam_search.
        stopping_bound="max_length",
        eos_penalty=0.0,
        block_size=0,
        guess_and_check_top_k=0,
        guess_and_check_epsilon=-1,
        insertion_parallel=False,
        return_beams=False,  # All beams, tab-separated in files.
        write_beam_scores=False,
        max_input_size=-1,  # Truncate inputs to this many ids (EOS included); -1: no limit.
        identity_output=False,
        num_samples=-1,  # Examples to decode from the dataset; -1: all.
        delimiter="\n",
        decode_to_file="",
        decode_reference="",
        decode_in_memory=False,
        decode_timeout_mins=240,
        summaries_log_dir="decode",
        shards=1,  # Decode shard `shard_id` of `shards` (1 = no sharding).
        shard_id=0,
        shards_start_offset=0,
        shard_google_format=False,
        num_decodes=1,  # Passes over the dataset.
        force_decode_length=False,
        display_decoded_images=False,
        multiproblem_task_id=-1,
        frames_per_second=10,
        skip_eos_postprocess=False,
        border_percent=2,
        max_display_outputs=10,
        max_display_decodes=5,
        vgg_ckpt_path="",
        mlperf_decode_step=0.0,
        mlperf_threshold=25.0,
        mlperf_success=False,
        export_extra_infer_outputs="",
        # Span problems (TyDi QA): best start/end positions paired per window, longest span.
        candidate_beam=30,
        max_answer_length=100,
    )
    hp.parse(overrides)
    if "\\" in hp.delimiter:
        hp.delimiter = hp.delimiter.encode("utf-8").decode("unicode_escape")
    return hp


# ---------------------------------------------------------------------------- helpers
def _save_until_eos(ids, skip=False):
    """Ids (any shape, flattened) up to, not including, the first EOS or PAD:
    [5, 6, 1, 0] -> [5, 6]; a beam [4, 5, 0, 5] -> [4, 5].

    A PAD ends a decode too (T2T cut at EOS only): targets never hold one before EOS, so a
    beam that emits it (small vocabularies, lower beams) or is padded without EOS has ended.
    """
    ids = np.asarray(ids).flatten()
    if skip:
        return ids
    ends = np.flatnonzero((ids == text_encoder.EOS_ID) | (ids == text_encoder.PAD_ID))
    return ids[:ends[0]] if ends.size else ids


def _problem_name(problem):
    """The registered name of `problem`, with its _rev / _copy suffixes."""
    return registry.get_problem_name(problem.name, problem.was_reversed, problem.was_copy)


def _vocabularies(hparams):
    """(inputs vocab, targets vocab); language models encode their prompt with the targets'."""
    vocabulary = hparams.problem_hparams.vocabulary
    has_input = "inputs" in vocabulary
    return vocabulary["inputs" if has_input else "targets"], vocabulary["targets"], has_input


def _checkpoint_or_error(estimator, checkpoint_path):
    """The checkpoint to decode with; a UserError when there is none."""
    path = checkpoint_path or tf.train.latest_checkpoint(estimator.model_dir)
    if not path:
        raise errors.UserError(
            "no checkpoint in %s to decode with; train a model there first (t2t-trainer "
            "--output_dir=%s) or pass --checkpoint_path" % (estimator.model_dir,
                                                           estimator.model_dir))
    return path


def latest_checkpoint_step(ckpt_dir):
    """The global step of the newest checkpoint in `ckpt_dir`, or None."""
    path = tf.train.latest_checkpoint(ckpt_dir)
    if not path:
        return None
    return int(path.rsplit("-", 1)[-1])


def _add_shard_to_filename(filename, decode_hp):
    """With decode_hp.shards > 1: "f" -> "f003" (or "f-00003-of-00008", Google format)."""
    if decode_hp.shards > 1:
        shard_id = decode_hp.shard_id + decode_hp.shards_start_offset
        if decode_hp.shard_google_format:
            return filename + "-{0:05d}-of-{1:05d}".format(shard_id, decode_hp.shards)
        return filename + ("%.3d" % shard_id)
    return filename


def _decode_filename(base_filename, problem_name, decode_hp, model_name=None,
                     hparams_set=None):
    """T2T's name of a decodes file: "<base>.<model>.<hp>.<problem>.beam<B>.alpha<A>.decodes".

        _decode_filename("dev.en", "translate_ende_wmt8k", decode_hparams(), "transformer",
                         "transformer_base")
        # "dev.en.transformer.transformer_base.translate_ende_wmt8k.beam4.alpha0.6.decodes"

    A name that already ends that way is kept (after adding the shard number).
    """
    base_filename = _add_shard_to_filename(base_filename, decode_hp)
    suffix = "beam{beam}.alpha{alpha}.decodes".format(beam=decode_hp.beam_size,
                                                      alpha=decode_hp.alpha)
    if suffix in base_filename:
        return base_filename
    if not model_name or not hparams_set:
        raise ValueError("naming the decodes file %s.<model>.<hparams_set>... needs "
                         "model_name and hparams_set; pass them (the t2t-decoder flags "
                         "--model and --hparams_set)" % base_filename)
    return "{base}.{model}.{hp}.{problem}.{suffix}".format(
        base=base_filename, model=model_name, hp=hparams_set, problem=problem_name,
        suffix=suffix)


decode_filename = _decode_filename  # the public name, for the other engines' file decoding


def log_decode_results(inputs, outputs, problem_name, prediction_idx, inputs_vocab,
                       targets_vocab, targets=None, save_images=False, output_dir=None,
                       identity_output=False, log_results=True, skip_eos_postprocess=False):
    """Decode one prediction's ids to strings (cut at EOS) and log them.

    Returns (decoded_inputs or None, decoded_outputs, decoded_targets or None):

        log_decode_results([6, 9, 1, 0], [9, 6, 1], "p", 0, TextEncoder(), TextEncoder(),
                           targets=[9, 6, 1])
        # ("4 7", "7 4", "7 4")
    """
    del problem_name, prediction_idx, save_images, output_dir  # images are not supported
    decoded_inputs = None
    if inputs is not None and inputs_vocab:
        if identity_output:
            decoded_inputs = " ".join(map(str, np.asarray(inputs).flatten()))
        else:
            decoded_inputs = inputs_vocab.decode(
                _save_until_eos(inputs, skip_eos_postprocess).tolist())
        if log_results:
            logging.info("Inference results INPUT: %s", decoded_inputs)
    decoded_targets = None
    if identity_output:
        decoded_outputs = " ".join(map(str, np.asarray(outputs).flatten()))
        if targets is not None:
            decoded_targets = " ".join(map(str, np.asarray(targets).flatten()))
    else:
        decoded_outputs = targets_vocab.decode(
            _save_until_eos(outputs, skip_eos_postprocess).tolist())
        if targets is not None:
            decoded_targets = targets_vocab.decode(
                _save_until_eos(targets, skip_eos_postprocess).tolist())
    if log_results:
        logging.info("Inference results OUTPUT: %s", decoded_outputs)
        if decoded_targets is not None:
            logging.info("Inference results TARGET: %s", decoded_targets)
    return decoded_inputs, decoded_outputs, decoded_targets


def _split_beams(prediction, beam_size):
    """([beam outputs], [beam scores or None]) of one prediction with return_beams."""
    outputs = np.split(np.asarray(prediction["outputs"]), beam_size, axis=0)
    scores = [None] * beam_size
    if "scores" in prediction:
        scores = np.split(np.asarray(prediction["scores"]).reshape(-1), beam_size, axis=0)
        scores = [float(s[0]) for s in scores]
    return outputs, scores


def _num_output_tokens(outputs):
    return int(_save_until_eos(outputs).size) + 1  # EOS (or the cut) counts as a step


# ---------------------------------------------------------------------------- dataset
def _dataset_input_fn(problem, hparams, decode_hp, dataset_split=None):
    """The PREDICT input_fn over the problem's dev (or `dataset_split`) examples."""
    if decode_hp.batch_size:
        # A set batch size means that many examples per batch.
        hparams.batch_size = decode_hp.batch_size
        hparams.use_fixed_batch_size = True
    dataset_kwargs = {
        "shard": decode_hp.shard_id if decode_hp.shards > 1 else None,
        "dataset_split": dataset_split,
        "max_records": decode_hp.num_samples,
    }
    return problem.make_estimator_input_fn(
        _PREDICT, hparams, data_dir=hparams.get("data_dir"), dataset_kwargs=dataset_kwargs)


def decode_from_dataset(estimator, problem_name, hparams, decode_hp, decode_to_file=None,
                        dataset_split=None, checkpoint_path=None, model_name=None,
                        hparams_set=None):
    """Decode the problem's dev examples (or `dataset_split`); optionally write them out.

    With decode_to_file "out", writes "out.<model>.<hp>.<problem>.beam<B>.alpha<A>.decodes"
    and the matching ".targets" and ".inputs" files, one example per line (beams
    tab-separated with return_beams). Runs `decode_hp.num_decodes` passes, each in
    `<model_dir>/decode_%05d` unless decode_in_memory, then the problem's decode hooks.

    Returns the list of raw prediction dicts of every pass with decode_in_memory (or
    log_results=False), else [].
    """
    logging.info("Performing local inference from dataset for %s.", problem_name)
    problem = model_hparams.attached_problem(hparams, "decode_from_dataset")
    checkpoint_path = _checkpoint_or_error(estimator, checkpoint_path)
    # A problem with its own decoding (e.g. TyDi QA's span predictions) does it all.
    custom_decode = getattr(problem, "decode_from_dataset", None)
    if custom_decode is not None:
        return custom_decode(estimator, hparams, decode_hp, decode_to_file=decode_to_file,
                             dataset_split=dataset_split, checkpoint_path=checkpoint_path)
    output_dir = os.path.join(estimator.model_dir, "decode")
    tf.io.gfile.makedirs(output_dir)
    infer_input_fn = _dataset_input_fn(problem, hparams, decode_hp, dataset_split)
    predictions, output_dirs = [], []
    for decode_id in range(decode_hp.num_decodes):
        logging.info("Decoding %d", decode_id)
        if not decode_hp.decode_in_memory:
            output_dir = os.path.join(estimator.model_dir, "decode_%05d" % decode_id)
            tf.io.gfile.makedirs(output_dir)
            output_dirs.append(output_dir)
        result = decode_once(estimator, problem_name, hparams, infer_input_fn, decode_hp,
                             decode_to_file, output_dir, log_results=decode_hp.log_results,
                             checkpoint_path=checkpoint_path, model_name=model_name,
                             hparams_set=hparams_set)
        if decode_hp.decode_in_memory:
            output_dirs = [output_dir]
            predictions.append(result)
    run_postdecode_hooks(DecodeHookArgs(
        estimator=estimator, problem=problem, output_dirs=output_dirs,
        hparams=hparams, decode_hparams=decode_hp, predictions=predictions), dataset_split)
    return predictions


def decode_once(estimator, problem_name, hparams, infer_input_fn, decode_hp, decode_to_file,
                output_dir, log_results=True, checkpoint_path=None, model_name=None,
                hparams_set=None):
    """One pass of `decode_from_dataset`; returns the predictions when not logging them."""
    del output_dir  # Only image problems wrote there.
    predictions = estimator.predict(infer_input_fn, checkpoint_path=checkpoint_path)
    if not log_results:
        return list(predictions)
    decode_to_file = decode_to_file or decode_hp.decode_to_file
    inputs_vocab, targets_vocab, _ = _vocabularies(hparams)
    progress = Progress("decode %s" % problem_name, unit="examples")
    kept = []
    with contextlib.ExitStack() as stack:
        files = None
        if decode_to_file:
            stem = _decode_filename(decode_to_file, problem_name, decode_hp, model_name,
                                    hparams_set)[:-len(".decodes")]
            # Each file appears complete or not at all.
            files = [stack.enter_context(atomic_files.atomic_write(stem + ext, "w"))
                     for ext in (".decodes", ".targets", ".inputs")]
        for index, prediction in enumerate(predictions):
            if decode_hp.return_beams:
                beams, scores = _split_beams(prediction, decode_hp.beam_size)
            else:
                beams, scores = [prediction["outputs"]], [None]
            decoded = [log_decode_results(
                prediction.get("inputs"), beam, problem_name, index, inputs_vocab,
                targets_vocab, targets=prediction.get("targets"),
                identity_output=decode_hp.identity_output, log_results=log_results,
                skip_eos_postprocess=decode_hp.skip_eos_postprocess) for beam in beams]
            progress.update(1, tokens=_num_output_tokens(beams[0]))
            if decode_hp.decode_in_memory:
                kept.append(prediction)
            d_input, _, d_target = decoded[0]
            # Rows that are all padding (T2T's eval padding) are not written.
            is_padding = bool(d_input) and re.match("^({})+$".format(text_encoder.PAD),
                                                    d_input)
            if files and not is_padding:
                outputs = []
                for (_, d_output, _), score in zip(decoded, scores):
                    if decode_hp.write_beam_scores and score is not None:
                        d_output = "%s\t%.2f" % (d_output, score)
                    outputs.append(d_output)
                files[0].write("\t".join(outputs) + decode_hp.delimiter)
                files[1].write(str(d_target) + decode_hp.delimiter)
                files[2].write(str(d_input) + decode_hp.delimiter)
            if 0 <= decode_hp.num_samples <= index + 1:
                break
    if decode_to_file:
        logging.info("Wrote %s.{decodes,targets,inputs}", stem)
    progress.done()
    return kept


def decode_dev_sample(estimator, hparams, decode_hp, num_examples=5, checkpoint_path=None,
                      dataset_split=None):
    """Decode the dev set: the first `num_examples` as strings, and the sequence accuracy.

    The sequence accuracy is over every decoded example (decode_hp.num_samples, -1 = all):
    the share whose output ids up to EOS equal the target ids up to EOS.

        summary = decode_dev_sample(estimator, hparams, decode_hparams("beam_size=1"), 3)
        summary.inputs[0], summary.decodes[0], summary.references[0]  # "1 0 1", "1 0 1", ...
        summary.sequence_accuracy                                     # 0.97
    """
    problem = model_hparams.attached_problem(hparams, "decode_dev_sample")
    checkpoint_path = _checkpoint_or_error(estimator, checkpoint_path)
    inputs_vocab, targets_vocab, has_input = _vocabularies(hparams)
    input_fn = _dataset_input_fn(problem, hparams, decode_hp, dataset_split)
    inputs, decodes, references = [], [], []
    correct = num_decoded = 0
    progress = Progress("decode %s dev" % _problem_name(problem))
    for prediction in estimator.predict(input_fn, checkpoint_path=checkpoint_path):
        progress.update(1)
        outputs = prediction["outputs"]
        if outputs.ndim > 1:  # return_beams: the best beam
            outputs = outputs[0]
        targets = prediction.get("targets")
        if targets is None:
            raise ValueError("decode_dev_sample needs the dev targets; problem %s gave none"
                             % _problem_name(problem))
        output_ids, target_ids = _save_until_eos(outputs), _save_until_eos(targets)
        correct += int(np.array_equal(output_ids, target_ids))
        num_decoded += 1
        if len(decodes) < num_examples:
            input_ids = _save_until_eos(prediction["inputs"]) if has_input else []
            inputs.append(inputs_vocab.decode(list(input_ids)) if has_input else "")
            decodes.append(targets_vocab.decode(output_ids.tolist()))
            references.append(targets_vocab.decode(target_ids.tolist()))
        if 0 <= decode_hp.num_samples <= num_decoded:
            break
    if not num_decoded:
        raise errors.UserError("the dev set of %s is empty; generate data with t2t-datagen"
                               % _problem_name(problem))
    progress.done(correct=correct)
    return DevDecodeSummary(inputs, decodes, references, correct / num_decoded, num_decoded)


# ---------------------------------------------------------------------------- file
def _read_records(filename, delimiter="\n"):
    """The stripped records of a file, in order; the delimiter ending the last is dropped.
    Text that is not UTF-8 is a UserError naming its line (`input_checks.read_text_lines`)."""
    records = input_checks.read_text(filename).split(delimiter)
    inputs = [record.strip() for record in records]
    if inputs and not inputs[-1]:
        inputs.pop()  # The delimiter ending the last record.
    return inputs


def _get_sorted_inputs(filename, delimiter="\n"):
    """(inputs sorted by word count, longest first; {original index: sorted index}).

        # file "a b\\nc d e\\nf\\n" -> (["c d e", "a b", "f"], {0: 1, 1: 0, 2: 2})
    """
    logging.info("Getting sorted inputs")
    inputs = _read_records(filename, delimiter)
    # Longest first: an out-of-memory error shows up on the first batch. The sort is
    # stable, so equal lengths keep their order.
    order = sorted(range(len(inputs)), key=lambda i: -len(inputs[i].split()))
    sorted_keys = {index: position for position, index in enumerate(order)}
    return [inputs[i] for i in order], sorted_keys


def _get_language_modeling_inputs(filename, delimiter="\n", repeat=1,
                                  append_space_to_final_punctionation=True):
    """Prompts for a model without inputs, in file order (repeated `repeat` times)."""
    inputs = input_checks.read_text(filename).split(delimiter)
    if not inputs[-1]:
        inputs.pop()
    inputs *= repeat
    if append_space_to_final_punctionation:
        inputs = [s + " " if s and s[-1] in string.punctuation else s for s in inputs]
    return inputs


def _decode_batch_input_fn(num_decode_batches, sorted_inputs, vocabulary, batch_size,
                           max_input_size, task_id=-1, has_input=True):
    """Yield {"inputs": int32 [batch, length]} batches of encoded, 0-padded inputs.

    Each input is encoded, cut to max_input_size - 1 ids when max_input_size > 0, and
    ends with EOS (or the task id), except prompts of models without inputs.
    """
    sorted_ids = [vocabulary.encode(inputs) for inputs in sorted_inputs]
    sorted_ids, _ = input_checks.cut_long_inputs(sorted_ids, max_input_size)
    return _batches_of_ids(num_decode_batches, sorted_ids, batch_size, task_id, has_input)


def _batches_of_ids(num_decode_batches, sorted_ids, batch_size, task_id=-1, has_input=True):
    """Yield {"inputs": int32 [batch, length]}: the id lists, each with EOS (or the task id)
    appended except prompts of models without inputs, 0-padded."""
    for b in range(num_decode_batches):
        batch_inputs = []
        for ids in sorted_ids[b * batch_size:(b + 1) * batch_size]:
            input_ids = list(ids)
            if has_input or task_id > -1:
                input_ids.append(text_encoder.EOS_ID if task_id < 0 else task_id)
            batch_inputs.append(input_ids)
        batch_length = max(len(ids) for ids in batch_inputs)
        batch = np.zeros([len(batch_inputs), batch_length], dtype=np.int32)
        for row, ids in enumerate(batch_inputs):
            batch[row, :len(ids)] = ids
        yield {"inputs": batch}


def make_input_fn_from_generator(gen):
    """An Estimator input_fn over the dicts of numpy arrays `gen` yields.

    The first element fixes the feature names, dtypes and ranks (every dimension may
    vary); the generator is read lazily, one element per model run.
    """
    first = next(gen)
    signature = {name: tf.TensorSpec([None] * np.ndim(value), tf.as_dtype(
        np.asarray(value).dtype)) for name, value in first.items()}

    def chained():
        yield first
        yield from gen

    def input_fn():
        # No read-ahead (tf.data's injected prefetch would read the next typed line
        # before the decode of this one is shown).
        options = tf.data.Options()
        options.autotune.enabled = False
        options.experimental_optimization.inject_prefetch = False
        return tf.data.Dataset.from_generator(
            chained, output_signature=signature).with_options(options)

    return input_fn


def _decode_input_tensor_to_features_dict(feature_map, hparams, decode_hp):
    """{"inputs": [B, L]} -> model features: inputs [B, L, 1] and the problem's space ids."""
    del decode_hp
    p_hparams = hparams.problem_hparams
    x = tf.expand_dims(tf.cast(feature_map["inputs"], tf.int32), axis=2)
    features = {
        "inputs": x,
        "input_space_id": tf.constant(p_hparams.input_space_id),
        "target_space_id": tf.constant(p_hparams.target_space_id),
    }
    if hparams.get("prepend_mode", "none") != "none":
        shape = tf.shape(x)
        partial_targets = tf.reshape(x, [shape[0], shape[1]])
        features["partial_targets"] = tf.pad(partial_targets, [[0, 0], [0, 1]])
    return features


def decode_from_file(estimator, filename, hparams, decode_hp, decode_to_file=None,
                     checkpoint_path=None, model_name=None, hparams_set=None):
    """Decode every line of `filename` and write one decode per line, in the file's order.

    Lines are decoded in batches of decode_hp.batch_size (default 32), longest first, and
    written back in their original order to `decode_to_file` (plus a shard number with
    several shards) or, without it, to "<filename>.<model>.<hp>.<problem>.beam<B>.alpha<A>
    .decodes". With return_beams a line holds every beam, tab-separated (with its score
    when write_beam_scores). Logs progress and a summary (sentences, tokens, tokens/s).

    Returns the decodes (strings) in the file's order.
    """
    if not decode_hp.batch_size:
        decode_hp.batch_size = DEFAULT_FILE_BATCH_SIZE
        logging.info("decode_hp.batch_size not specified; default=%d", decode_hp.batch_size)
    problem = model_hparams.attached_problem(hparams, "decode_from_file")
    checkpoint_path = _checkpoint_or_error(estimator, checkpoint_path)
    inputs_vocab, targets_vocab, has_input = _vocabularies(hparams)
    problem_name = _problem_name(problem)
    filename = _add_shard_to_filename(filename, decode_hp)
    if not tf.io.gfile.exists(filename):
        raise errors.UserError("--decode_from_file %s does not exist; give a text file with "
                               "one input per line" % filename)
    logging.info("Performing decoding from file (%s).", filename)
    # Every line is checked before the model runs: a bad token is one line naming its line.
    check_inputs(_read_records(filename, decode_hp.delimiter), inputs_vocab,
                 _input_vocab_size(hparams, "inputs" if has_input else "targets"), filename,
                 decode_hp.delimiter)
    if has_input:
        sorted_inputs, sorted_keys = _get_sorted_inputs(filename, decode_hp.delimiter)
    else:
        sorted_inputs = _get_language_modeling_inputs(filename, decode_hp.delimiter,
                                                      repeat=decode_hp.num_decodes)
        sorted_keys = {i: i for i in range(len(sorted_inputs))}
    if not sorted_inputs:
        raise errors.UserError("%s has no lines to decode" % filename)
    num_sentences = len(sorted_inputs)
    num_decode_batches = (num_sentences - 1) // decode_hp.batch_size + 1
    # Inputs longer than the model was trained on: a warning with their count and the cut.
    sorted_ids, _ = input_checks.limit_input_lengths(
        [inputs_vocab.encode(text) for text in sorted_inputs], hparams, decode_hp, filename)

    def input_fn_of(batches):
        make_dataset = batch_input.make_input_fn_from_batches(batches)
        return lambda: make_dataset().map(lambda batch: _decode_input_tensor_to_features_dict(
            batch, hparams, decode_hp))

    def results():
        batches = _batches_of_ids(num_decode_batches, sorted_ids, decode_hp.batch_size,
                                  task_id=decode_hp.multiproblem_task_id, has_input=has_input)
        for chunk in batch_input.chunks_of_batches(batches):
            yield from estimator.predict(input_fn_of(chunk), checkpoint_path=checkpoint_path)

    progress = Progress("decode %s" % os.path.basename(filename), unit="sentences",
                        total=num_sentences)
    decodes = []
    for result in results():
        if decode_hp.return_beams:
            beams, scores = _split_beams(result, decode_hp.beam_size)
        else:
            beams, scores = [result["outputs"]], [None]
        beam_decodes = []
        for beam, score in zip(beams, scores):
            _, decoded, _ = log_decode_results(
                result.get("inputs"), beam, problem_name, None, inputs_vocab, targets_vocab,
                log_results=decode_hp.log_results,
                skip_eos_postprocess=decode_hp.skip_eos_postprocess)
            if decode_hp.write_beam_scores and score is not None:
                decoded = "%s\t%.2f" % (decoded, score)
            beam_decodes.append(decoded)
        decodes.append("\t".join(beam_decodes))
        progress.update(1, tokens=_num_output_tokens(beams[0]))
        if len(decodes) == num_sentences:
            break
    seconds = max(progress.seconds, 1e-9)
    progress.done(**{"sentences/s": len(decodes) / seconds,
                     "tokens/s": progress.extra.get("tokens", 0) / seconds})

    if decode_to_file:
        decode_filename = _add_shard_to_filename(decode_to_file, decode_hp)
    else:
        decode_filename = _decode_filename(filename, problem_name, decode_hp, model_name,
                                           hparams_set)
    in_order = [decodes[sorted_keys[index]] for index in range(num_sentences)]
    logging.info("Writing decodes into %s", decode_filename)
    with atomic_files.atomic_write(decode_filename, "w") as outfile:
        for decoded in in_order:
            outfile.write("%s%s" % (decoded, decode_hp.delimiter))
    output_dir = os.path.join(estimator.model_dir, "decode")
    tf.io.gfile.makedirs(output_dir)
    run_postdecode_hooks(DecodeHookArgs(
        estimator=estimator, problem=problem, output_dirs=[output_dir],
        hparams=hparams, decode_hparams=decode_hp, predictions=[]), None)
    return in_order


# ---------------------------------------------------------------------------- interactive
_INTERACTIVE_HELP = (
    "INTERACTIVE MODE  num_samples=%d  decode_length=%d\n"
    "  ns=<num_samples>    (changes number of samples, default: 1)\n"
    "  dl=<decode_length>  (changes decode length, default: %d)\n"
    "  <%s>  (decode)\n"
    "  q                   (quit)")


def report_to_stderr(message):
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def typed_lines(read_line=input):
    """(number, line) for each line read after a ">" prompt, numbered from 1, until the end
    of input or "q"."""
    number = 0
    while True:
        try:
            line = read_line(">")
        except EOFError:
            return
        number += 1
        if line == "q":
            return
        yield number, line


def _typed_bytes(line):
    """The bytes a terminal sent for `line` (stdin decodes bytes that are not UTF-8 to lone
    surrogates, "\\udce9" for 0xe9)."""
    try:
        return line.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # A surrogate that stands for no byte.
        return line.encode("utf-8", "surrogatepass")


def _interactive_input_fn(hparams, decode_hp, read_line=input, say=print,
                          report=report_to_stderr):
    """Yield {"inputs": int32 [num_samples, L, 1, 1], "decode_length": int32} per line read.

    Commands: "q" quits, "ns=<n>" sets the number of samples, "dl=<n>" the decode length
    (ids beyond the input length; honoured by the Transformer's fast decoder, as in T2T).
    The help banner is shown once (`say`); each line is then read after a ">" prompt. A
    line the model cannot take (a token outside the vocabulary, not a number) is reported
    through `report` with its number, and the session goes on.
    """
    num_samples = decode_hp.num_samples if decode_hp.num_samples > 0 else 1
    decode_length = decode_hp.extra_length
    inputs_vocab, _, has_input = _vocabularies(hparams)
    vocab_size = _input_vocab_size(hparams, "inputs" if has_input else "targets")
    say(_INTERACTIVE_HELP % (num_samples, decode_length, decode_hp.extra_length,
                             "source_string" if has_input else "target_prefix"))
    for number, line in typed_lines(read_line):
        try:
            # A terminal's stdin hands on bytes that are not UTF-8 as lone surrogates.
            line = input_checks.text_of(_typed_bytes(line), "line %d" % number,
                                        fix="type UTF-8 text")
        except errors.UserError as error:
            report("error: %s (q quits)" % error)
            continue
        if line[:3] in ("ns=", "dl="):
            try:
                value = int(line[3:])
            except ValueError:
                logging.error("%s needs an integer, got %r", line[:3], line[3:])
                continue
            if line.startswith("ns="):
                num_samples = max(1, value)
            else:
                decode_length = max(0, value)
            say("num_samples=%d  decode_length=%d" % (num_samples, decode_length))
            continue
        if line.startswith("it="):
            if line[3:] != "text":
                logging.error("only text input is supported (it=text)")
            continue
        try:
            input_ids = encode_input(inputs_vocab, line, vocab_size)
        except ValueError as error:
            report("error: line %d %r: %s; type another line (q quits)" % (number, line, error))
            continue
        # A line longer than the model was trained on: the warning (or max_input_size's cut).
        (input_ids,), _ = input_checks.limit_input_lengths([input_ids], hparams, decode_hp,
                                                           "line %d" % number)
        if has_input:
            input_ids.append(text_encoder.EOS_ID)
        ids = np.array(input_ids, dtype=np.int32).reshape([1, -1, 1, 1])
        yield {"inputs": np.tile(ids, [num_samples, 1, 1, 1]),
               "decode_length": np.array(decode_length, dtype=np.int32)}


def decode_interactively(estimator, hparams, decode_hp, checkpoint_path=None, read_line=input,
                         write=print, say=print, report=report_to_stderr):
    """Read inputs from the terminal (`read_line`) and `write` each decode.

    With return_beams every beam is written as `"<decode>"\\tScore:<score>`. The help banner
    and the settings after "ns=" / "dl=" go to `say`; lines that cannot be encoded are
    reported (`report`, stderr) and skipped. Returns the number of inputs decoded.
    """
    checkpoint_path = _checkpoint_or_error(estimator, checkpoint_path)
    targets_vocab = hparams.problem_hparams.vocabulary["targets"]
    p_hparams = hparams.problem_hparams
    skip_eos_postprocess = decode_hp.skip_eos_postprocess or "class_label" in (
        p_hparams.modality.get("targets", ""))
    gen = _interactive_input_fn(hparams, decode_hp, read_line, say=say, report=report)
    try:
        make_input_fn = make_input_fn_from_generator(gen)
    except StopIteration:
        return 0  # "q" (or end of input) before the first line.

    def input_fn():
        dataset = make_input_fn()

        def add_space_ids(features):
            features = dict(features)
            features["input_space_id"] = tf.constant(p_hparams.input_space_id)
            features["target_space_id"] = tf.constant(p_hparams.target_space_id)
            return features

        return dataset.map(add_space_ids)

    count = 0
    for result in estimator.predict(input_fn, checkpoint_path=checkpoint_path):
        count += 1
        if decode_hp.return_beams:
            beams, scores = _split_beams(result, decode_hp.beam_size)
            for k, (beam, score) in enumerate(zip(beams, scores)):
                text = targets_vocab.decode(_save_until_eos(beam, skip_eos_postprocess).tolist())
                logging.info("BEAM %d:", k)
                write('"%s"\tScore:%f' % (text, score) if score is not None else '"%s"' % text)
        elif decode_hp.identity_output:
            write(" ".join(map(str, np.asarray(result["outputs"]).flatten())))
        else:
            write(targets_vocab.decode(
                _save_until_eos(result["outputs"], skip_eos_postprocess).tolist()))
    return count


# ---------------------------------------------------------------------------- hooks
def run_postdecode_hooks(decode_hook_args, dataset_split):
    """Run the problem's decode hooks; their summaries go to <output_dir>/../decode[_split]."""
    hooks = decode_hook_args.problem.decode_hooks
    if not hooks:
        return
    global_step = latest_checkpoint_step(decode_hook_args.estimator.model_dir)
    if global_step is None:
        logging.info("Skipping decode hooks because no checkpoint yet available.")
        return
    logging.info("Running decode hooks.")
    parent_dir = os.path.join(decode_hook_args.output_dirs[0], os.pardir)
    child_dir = decode_hook_args.decode_hparams.summaries_log_dir
    if dataset_split is not None:
        child_dir += "_{}".format(dataset_split)
    writer = tf.summary.create_file_writer(os.path.join(parent_dir, child_dir))
    for hook in hooks:
        with tf.Graph().as_default():  # A hook that builds ops gets its own graph.
            summaries = hook(decode_hook_args)
        with writer.as_default():
            for value in summaries or []:
                tf.summary.scalar(value.tag, value.simple_value, step=global_step)
    writer.close()
    logging.info("Decode hooks done.")
