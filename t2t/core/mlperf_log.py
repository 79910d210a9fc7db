"""MLPerf v0.5 compliance lines for the Transformer, as T2T's `utils/mlperf_log.py`.

Quiet unless the model's hparams ask (`mlperf_mode=True`): `transformer_print` is a no-op
for other hparams, so calls can stay in model code.

    transformer_print(key=RUN_START, hparams=hparams)              # no-op: mlperf_mode off
    hparams.mlperf_mode = True
    transformer_print(key=OPT_LR, value=0.2, hparams=hparams)
    # :::MLPv0.5.0 transformer 1733050000.123456789 (my_model.py:42) opt_learning_rate: 0.2

Lines go to the `mlperf_compliance` logger (INFO for the run/train/eval tags MLPerf
reads from stdout, DEBUG for the rest) and, when COMPLIANCE_FILE is set, to that file.
"""
import json
import logging
import os
import re
import sys
import time
import uuid

TRANSFORMER = "transformer"
ROOT_DIR_TRANSFORMER = None  # a prefix trimmed off the call sites' file names

# Run, input, optimizer, train, eval and model tags of the Transformer benchmark.
RUN_START, RUN_STOP, RUN_FINAL = "run_start", "run_stop", "run_final"
RUN_SET_RANDOM_SEED = "run_set_random_seed"
PREPROC_NUM_TRAIN_EXAMPLES = "preproc_num_train_examples"
PREPROC_NUM_EVAL_EXAMPLES = "preproc_num_eval_examples"
PREPROC_TOKENIZE_TRAINING = "preproc_tokenize_training"
PREPROC_TOKENIZE_EVAL = "preproc_tokenize_eval"
PREPROC_VOCAB_SIZE = "preproc_vocab_size"
INPUT_BATCH_SIZE, INPUT_MAX_LENGTH, INPUT_ORDER = (
    "input_batch_size", "input_max_length", "input_order")
OPT_NAME, OPT_LR = "opt_name", "opt_learning_rate"
OPT_LR_WARMUP_STEPS = "opt_learning_rate_warmup_steps"
OPT_HP_ADAM_BETA1, OPT_HP_ADAM_BETA2, OPT_HP_ADAM_EPSILON = (
    "opt_hp_Adam_beta1", "opt_hp_Adam_beta2", "opt_hp_Adam_epsilon")
TRAIN_LOOP, TRAIN_EPOCH = "train_loop", "train_epoch"
EVAL_START, EVAL_SIZE, EVAL_TARGET, EVAL_ACCURACY, EVAL_STOP = (
    "eval_start", "eval_size", "eval_target", "eval_accuracy", "eval_stop")
MODEL_HP_INITIALIZER_GAIN = "model_hp_initializer_gain"
MODEL_HP_VOCAB_SIZE = "model_hp_vocab_size"
MODEL_HP_NUM_HIDDEN_LAYERS = "model_hp_hidden_layers"
MODEL_HP_EMBEDDING_SHARED_WEIGHTS = "model_hp_embedding_shared_weights"
MODEL_HP_ATTENTION_DENSE = "model_hp_attention_dense"
MODEL_HP_ATTENTION_DROPOUT = "model_hp_attention_dropout"
MODEL_HP_FFN_OUTPUT_DENSE = "model_hp_ffn_output_dense"
MODEL_HP_FFN_FILTER_DENSE = "model_hp_ffn_filter_dense"
MODEL_HP_RELU_DROPOUT = "model_hp_relu_dropout"
MODEL_HP_LAYER_POSTPROCESS_DROPOUT = "model_hp_layer_postprocess_dropout"
MODEL_HP_NORM = "model_hp_norm"
MODEL_HP_SEQ_BEAM_SEARCH = "model_hp_sequence_beam_search"
# Values T2T's code logs with them.
ADAM, RELU, TRUNCATED_NORMAL = "adam", "relu", "truncated_normal"

TRANSFORMER_TAG_SET = frozenset(value for name, value in dict(globals()).items()
                                if name.isupper() and name.startswith(
                                    ("RUN_", "PREPROC_", "INPUT_", "OPT_", "TRAIN_",
                                     "EVAL_", "MODEL_HP_")))
STDOUT_TAG_SET = frozenset([RUN_START, RUN_STOP, RUN_FINAL, TRAIN_LOOP, TRAIN_EPOCH,
                            EVAL_START, EVAL_SIZE, EVAL_TARGET, EVAL_ACCURACY, EVAL_STOP])

LOGGER = logging.getLogger("mlperf_compliance")
_file_handler = []


def get_mode(hparams):
    """Whether `hparams` ask for MLPerf lines (`mlperf_mode`)."""
    return "mlperf_mode" in hparams and bool(hparams.mlperf_mode)


def get_caller(stack_index=2, root_dir=None):
    """"file.py:line" of the frame `stack_index` up the stack (0: get_caller's own),
    `root_dir/` trimmed; the outermost frame when the stack is not that deep."""
    frame = sys._getframe(0)  # pylint: disable=protected-access
    for _ in range(stack_index):
        frame = frame.f_back or frame
    filename = frame.f_code.co_filename
    if root_dir is not None:
        filename = re.sub("^" + re.escape(root_dir) + "/", "", filename)
    return "%s:%d" % (filename, frame.f_lineno)


def _log(tag, message):
    log_file = os.environ.get("COMPLIANCE_FILE")
    if log_file and not _file_handler:
        handler = logging.FileHandler(log_file)
        handler.setLevel(logging.DEBUG)
        LOGGER.addHandler(handler)
        LOGGER.setLevel(logging.DEBUG)
        _file_handler.append(handler)
    LOGGER.log(logging.INFO if tag in STDOUT_TAG_SET else logging.DEBUG, message)


def transformer_print(key, value=None, stack_offset=2, deferred=False, hparams=None):
    """Log one compliance line `key: value` when `hparams.mlperf_mode`; else nothing.

    `deferred=True` (no value yet) logs a fresh id as the value and returns it, to log
    with the value later. A key outside the Transformer's tags is a ValueError.
    """
    if not hparams or not get_mode(hparams):
        return None
    if key not in TRANSFORMER_TAG_SET:
        raise ValueError("Invalid key for MLPerf print: %s" % key)
    if value is not None and deferred:
        raise ValueError("deferred is set to True, but a value was provided")
    deferred_id = str(uuid.uuid4()) if deferred else None
    if deferred:
        value = "DEFERRED: %s" % deferred_id
    tag = key if value is None else "%s: %s" % (key, json.dumps(value))
    callsite = get_caller(1 + stack_offset, root_dir=ROOT_DIR_TRANSFORMER)
    _log(key, ":::MLPv0.5.0 %s %.9f (%s) %s" % (TRANSFORMER, time.time(), callsite, tag))
    return deferred_id
