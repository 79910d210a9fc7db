"""t2t-decoder: decode with a trained model — a file, the dev set, a terminal, or scores.

    t2t-decoder --problem=translate_ende_wmt8k --model=transformer \\
        --hparams_set=transformer_base --data_dir=~/t2t_data --output_dir=~/train \\
        --decode_hparams="beam_size=4,alpha=0.6" --decode_from_file=newstest.en \\
        --decode_to_file=newstest.de
    # newstest.de: one translation per line of newstest.en, in its order; the log ends with
    # "decode newstest.en done: 3,003 sentences, 81,230 tokens, ... tokens/s, 95.0 s"

    t2t-decoder ... (no --decode_from_file)      # the dev set; with --decode_to_file=out:
    # out.<model>.<hparams_set>.<problem>.beam4.alpha0.6.{decodes,targets,inputs}
    t2t-decoder ... --decode_interactive          # type inputs; "q" quits
    t2t-decoder ... --score_file=pairs.tsv --decode_to_file=scores.txt
    # scores.txt: the loss of each "input<TAB>target" line, "%.6f" per line

A SeqIO Task or Mixture the model was trained on (t2t-trainer --mixture_or_task_name):

    t2t-decoder --mixture_or_task_name=copy --module_import=my_project.tasks \\
        --model=transformer --hparams_set=transformer_base --output_dir=~/train \\
        --decode_to_file=copy.decodes
    # copy.decodes: the post-processed prediction of each validation example, in order
    # (copy.decodes.targets: the post-processed targets); a mixture writes one file per
    # task (copy.decodes.<task>); --decode_from_file decodes lines with the task's
    # vocabulary, --decode_interactive typed lines, --score_file scores pairs (as above).
    # --task_feature_lengths and --decoder_only default to the training run's; a
    # decoder-only model continues each example's inputs (a task without inputs: from an
    # empty prompt, or the lines of --decode_from_file).

Flags are T2T 1.15.7's; the trainer's (--problem, --model, --hparams_set, --hparams,
--data_dir, --output_dir, --t2t_usr_dir, ...) come from `t2t.bin.flags`.
`--checkpoint_path` (a checkpoint prefix or a folder) overrides --output_dir's latest one.
"""
import os

import tensorflow as tf
from absl import flags, logging

from t2t.bin import cli
from t2t.bin import flags as t2t_flags
from t2t.core import backend_choice, errors, hparam, registry
from t2t.core import random_seed, usr_dir
from t2t.data import shard_check
from t2t.decoding import decoding
from t2t.decoding import input_checks
from t2t.decoding import predictor
from t2t.core.modes import ModeKeys
from t2t.decoding import scoring
import t2t.inference.loading as loading
from t2t.model import checkpoint_files
from t2t.model import model_hparams
from t2t.training import run_config as run_config_lib
from t2t.training import trainer_lib

FLAGS = flags.FLAGS


_define = cli.define_once  # flags other programs in this process define are kept


def define_decoder_flags():
    """Define the trainer's flags (`t2t.bin.flags`, once) and the decoder's own."""
    t2t_flags.define_trainer_flags()
    _define(flags.DEFINE_integer, "worker_id", 0, "With --decode_shards, the shard to decode.")
    _define(flags.DEFINE_string, "checkpoint_path", None, "A checkpoint (prefix, or a folder "
            "for its latest); overrides --output_dir.")
    _define(flags.DEFINE_bool, "keep_timestamp", False, "Give the decodes file the mtime of "
            "the checkpoint's .index file.")
    _define(flags.DEFINE_bool, "decode_interactive", False, "Decode lines typed in the "
            "terminal.")
    _define(flags.DEFINE_integer, "decode_shards", 1, "Number of decoding replicas.")
    _define(flags.DEFINE_string, "score_file", "", "Score each 'input<TAB>target' line of "
            "this file; needs --decode_to_file.")
    _define(flags.DEFINE_bool, "decode_in_memory", False, "Decode in memory.")
    _define(flags.DEFINE_bool, "disable_grappler_optimizations", False, "Disable Grappler "
            "(works around tensor format errors).")
    if "engine" not in FLAGS:
        flags.DEFINE_enum("engine", "tensorflow", ["tensorflow", "ctranslate2"],
                          "tensorflow: decode with TensorFlow (--backend); ctranslate2: "
                          "decode --decode_from_file or --decode_interactive with CTranslate2 "
                          "(a CTranslate2 export in --output_dir, or the checkpoint converted "
                          "once into <output_dir>/export/; needs the ctranslate2 package).")
    _define(flags.DEFINE_string, "quantization", "float32", "With --engine=ctranslate2 on a "
            "checkpoint, or t2t-exporter --export_format=ctranslate2: the weights' type "
            "(float32, int8, int8_float32, int16; float16, bfloat16, int8_float16, "
            "int8_bfloat16 on GPUs).")
    if "backend" not in FLAGS:
        flags.DEFINE_enum("backend", "auto", list(backend_choice.BACKENDS), "estimator: decode "
                          "through tf.estimator (TensorFlow 2.15 only); native: restore the "
                          "checkpoint into a session without it; auto: estimator where "
                          "tf.estimator exists. Both decode identically.")


define_decoder_flags()

# What `--help` lists: the flags t2t-decoder reads (the trainer's others are accepted, so
# one command line can serve t2t-trainer and t2t-decoder, and shown by --helpfull), with
# the decoder's own words where the trainer's help says what training does with them.
RUN_FLAGS_HELP = {
    "problem": None, "model": None, "hparams_set": None,
    "hparams": "Overrides (name=value,...) of the hparams the run was trained with (its "
               "hparams.json in --output_dir is read first).",
    "data_dir": "The problem's data folder (the dev set to decode; the vocabulary when "
                "the training folder holds no copy of it).",
    "output_dir": "The training folder (t2t-trainer --output_dir): its latest checkpoint, "
                  "hparams.json, and t2t_model.json with the vocabulary (or flags.txt), "
                  "which give --problem, --model, --hparams_set and --data_dir when not "
                  "set; with --engine=ctranslate2 also a CTranslate2 export.",
    "checkpoint_path": None, "t2t_usr_dir": None, "registry_help": None, "random_seed": None,
    "show_tf_deprecations": None, "decode_hparams": None,
    "intra_op_parallelism_threads": "CPU threads each op may use (0: TensorFlow's choice, "
                                    "all cores; t2t.load's threads= sets the same).",
    "inter_op_parallelism_threads": "Ops run at once (0: TensorFlow's choice).",
}
DECODER_FLAGS = dict(RUN_FLAGS_HELP, **{name: None for name in (
    "decode_from_file", "decode_to_file", "decode_reference", "decode_interactive",
    "score_file", "decode_shards", "worker_id", "decode_in_memory", "keep_timestamp",
    "disable_grappler_optimizations",
    # A SeqIO Task or Mixture.
    "mixture_or_task_name", "module_import", "task_feature_lengths", "task_eval_split",
    "use_cached_tasks", "engine", "quantization")})
DECODER_FLAGS.update(
    backend="estimator: decode through tf.estimator (TensorFlow 2.15 only); native: restore "
            "the checkpoint into a session without it; auto: estimator where tf.estimator "
            "exists. Both decode identically.",
    eval_use_test_set="Decode the test split instead of dev.",
    use_tpu="t2t-decoder does not decode on TPUs: it stops with an error when this is set.",
    decoder_only="With --mixture_or_task_name: the model is decoder-only (also read from "
                 "the training folder's flags.txt).")


# ---------------------------------------------------------------------------- helpers
def create_estimator(model_name, hparams, model_dir, decode_hp, disable_grappler=False):
    """What decodes `model_name` from `model_dir`'s checkpoints with `decode_hp`: an Estimator
    on the estimator backend, else a `CheckpointPredictor` (--backend; identical decodes)."""
    session_config = run_config_lib.create_session_config(
        inter_op_parallelism_threads=FLAGS.inter_op_parallelism_threads,
        intra_op_parallelism_threads=FLAGS.intra_op_parallelism_threads)
    if disable_grappler:
        session_config.graph_options.rewrite_options.disable_meta_optimizer = True
    return predictor.create_predictor(model_name, hparams, model_dir, decode_hparams=decode_hp,
                                      backend=FLAGS.backend, session_config=session_config,
                                      random_seed=FLAGS.random_seed)


def resolve_checkpoint(checkpoint_path, output_dir):
    """(model_dir, checkpoint prefix) from --checkpoint_path / --output_dir; UserError if none
    or if it cannot be read (naming the broken file and the folder's intact checkpoints).

        resolve_checkpoint("train/model.ckpt-300", "")   # ("train", "train/model.ckpt-300")
        resolve_checkpoint(None, "train")                # ("train", <its latest checkpoint>)
    """
    if checkpoint_path:
        checkpoint_path = os.path.expanduser(checkpoint_path)
        if tf.io.gfile.isdir(checkpoint_path):
            model_dir, checkpoint_path = checkpoint_path, tf.train.latest_checkpoint(
                checkpoint_path)
        else:
            model_dir = os.path.dirname(checkpoint_path) or "."
            if not tf.io.gfile.glob(checkpoint_path + ".index"):
                raise errors.UserError("--checkpoint_path %s is not a checkpoint (no %s.index)"
                                       "; give a prefix like model.ckpt-1000 or a folder" %
                                       (checkpoint_path, checkpoint_path))
        if output_dir:
            model_dir = os.path.expanduser(output_dir)
    elif output_dir:
        model_dir = os.path.expanduser(output_dir)
        checkpoint_path = tf.train.latest_checkpoint(model_dir)
    else:
        raise errors.UserError("give --output_dir (the training folder) or --checkpoint_path")
    if not checkpoint_path:
        raise errors.UserError("no checkpoint in %s; train there first or pass "
                               "--checkpoint_path" % model_dir)
    checkpoint_files.check_readable(checkpoint_path)
    return model_dir, checkpoint_path


def require_flags(*names, program="t2t-decoder"):
    missing = [name for name in names if not getattr(FLAGS, name)]
    if missing:
        raise errors.UserError("missing %s; %s needs --problem, --model, --hparams_set and "
                               "--output_dir or --checkpoint_path" % (
                                   ", ".join("--" + name for name in missing), program))


def _has_checkpoint(folder):
    return bool(tf.train.latest_checkpoint(folder) or
                tf.io.gfile.glob(os.path.join(folder, "model.ckpt-*.index")))


def model_source(model_dir, must_hold_model=False):
    """`loading.find_model` of a training folder or export (None when it names no model).

    With `must_hold_model` (--output_dir given, no --checkpoint_path) a folder that does not
    exist, or holds neither a model description nor a checkpoint, is t2t.load's one-line
    error; a folder with checkpoints but no description needs the flags to say what it is.
    """
    if not model_dir:
        return None
    model_dir = os.path.expanduser(model_dir)
    try:
        return loading.find_model(model_dir, data_dir=FLAGS.data_dir)
    except errors.UserError:
        if must_hold_model and not (os.path.isdir(model_dir) and _has_checkpoint(model_dir)):
            raise
        return None  # the flags must then say what it is (require_flags names the missing ones)


def model_flags_from_folder(model_dir, must_hold_model=False):
    """Fill --problem, --model, --hparams_set (and import --t2t_usr_dir) from what a training
    folder or export records (t2t_model.json, job.json or flags.txt), when not given.
    Returns the folder's `loading.ModelSource` (None when it records no model)."""
    source = model_source(model_dir, must_hold_model)
    if source is None:
        return None
    assets = source.assets
    for name, value in (("problem", assets.problem), ("model", assets.model),
                        ("hparams_set", assets.hparams_set)):
        if not getattr(FLAGS, name):
            setattr(FLAGS, name, value)
    if not FLAGS.hparams and assets.hparams_overrides and not source.hparams_path:
        FLAGS.hparams = assets.hparams_overrides  # no hparams.json to restore them from
    if assets.t2t_usr_dir and not FLAGS.t2t_usr_dir:
        FLAGS.t2t_usr_dir = assets.t2t_usr_dir  # what an export of this model records
        usr_dir.import_usr_dir(assets.t2t_usr_dir)
    return source


def vocabulary_dir(output_dir, source=None):
    """--data_dir, else the training folder when it holds the vocabulary copies, else the
    data_dir the run recorded."""
    if FLAGS.data_dir:
        return os.path.expanduser(FLAGS.data_dir)
    if source is None:
        if not output_dir or not os.path.isdir(output_dir):
            return None
        source = model_source(output_dir)
    return source.data_dir if source is not None else None


def hparams_from_flags(source=None):
    """create_hparams with the trainer flags (hparams.json from --output_dir if present);
    `source`: --output_dir's `loading.ModelSource`, when already found."""
    output_dir = os.path.expanduser(FLAGS.output_dir) if FLAGS.output_dir else ""
    hparams_path = None
    if not output_dir:
        source = None  # (found from --checkpoint_path's folder: its data_dir is not read)
    else:
        record = (source.record if source is not None and source.kind == "checkpoint" else
                  loading.read_model_folder(output_dir))
        hparams_path = record.hparams_path or None
    data_dir = vocabulary_dir(output_dir, source)
    return trainer_lib.create_hparams(FLAGS.hparams_set, FLAGS.hparams, data_dir=data_dir,
                                      problem_name=FLAGS.problem, hparams_path=hparams_path)


create_hparams = hparams_from_flags  # T2T's name (user scripts call t2t_decoder.create_hparams)


def parse_decode_hparams(overrides):
    """decoding.decode_hparams(overrides); a bad name or value is a one-line UserError.

        parse_decode_hparams("beam_sze=4")
        # UserError: --decode_hparams='beam_sze=4': unknown decode hyperparameter beam_sze;
        # did you mean beam_size?
    """
    try:
        decode_hp = decoding.decode_hparams(overrides)
        input_checks.check_search_settings(decode_hp.beam_size, decode_hp.alpha,
                                           decode_hp.stopping_bound)
    except hparam.UnknownHParamNameError as error:
        raise errors.UserError("--decode_hparams=%r: %s" % (
            overrides, error.user_message("decode hyperparameter"))) from None
    except ValueError as error:  # UserError is one too
        raise errors.UserError("--decode_hparams=%r: %s" % (overrides, error)) from None
    return decode_hp


def check_input_files(delimiter="\n"):
    """The files the flags name exist and are UTF-8 text (before any model is built)."""
    for name in ("decode_from_file", "score_file"):
        value = getattr(FLAGS, name)
        if not value or FLAGS.decode_shards > 1:
            continue
        path = os.path.expanduser(value)
        if not tf.io.gfile.exists(path):
            raise errors.UserError("--%s %s does not exist; give a text file with one %s per "
                                   "line" % (name, value, "input" if name == "decode_from_file"
                                             else "'input<TAB>target' pair"))
        input_checks.read_text_lines(path, delimiter if name == "decode_from_file" else "\n")
    if FLAGS.decode_to_file:
        cli.check_writable_dir("--decode_to_file",
                               os.path.dirname(os.path.abspath(os.path.expanduser(
                                   FLAGS.decode_to_file))))


def check_trained_with(model_dir):
    """Stop when `model_dir` was trained with another --model / --hparams_set / --problem.

    Its flags.txt (written by t2t-trainer) says what it holds; decoding it with another
    model would end in a long checkpoint-restore traceback.
    """
    saved = loading.read_model_folder(model_dir).saved_flags
    for name in ("model", "hparams_set", "problem"):
        value = getattr(FLAGS, name)
        if saved.get(name) and value and saved[name] != value:
            raise errors.UserError(
                "%s was trained with --%s=%s, not %s; decode with the flags it was trained "
                "with (see %s)" % (model_dir, name, saved[name], value,
                                   os.path.join(model_dir, trainer_lib.FLAGS_FILENAME)))


def create_decode_hparams():
    decode_hp = parse_decode_hparams(FLAGS.decode_hparams)
    decode_hp.shards = FLAGS.decode_shards
    decode_hp.shard_id = FLAGS.worker_id
    decode_hp.decode_in_memory = FLAGS.decode_in_memory or decode_hp.decode_in_memory
    decode_hp.decode_to_file = FLAGS.decode_to_file
    decode_hp.decode_reference = FLAGS.decode_reference
    return decode_hp


# ---------------------------------------------------------------------------- main
def score(checkpoint_path, source=None):
    """--score_file: write the loss of each line to --decode_to_file."""
    if not FLAGS.decode_to_file:
        raise errors.UserError("to score a file, give --decode_to_file for the results")
    filename = os.path.expanduser(FLAGS.score_file)
    if not tf.io.gfile.exists(filename):
        raise errors.UserError("--score_file %s does not exist" % filename)
    results = scoring.score_file(filename, FLAGS.model, hparams_from_flags(source),
                                  checkpoint_path)
    write_scores(results, filename)


def write_scores(results, filename):
    """One "%.6f" loss a line into --decode_to_file."""
    out_path = os.path.expanduser(FLAGS.decode_to_file)
    with tf.io.gfile.GFile(out_path, "w") as f:
        f.write("".join("%.6f\n" % value for value in results))
    print("t2t-decoder: scored %d lines of %s into %s" % (len(results), filename, out_path))


def decode(estimator, hparams, decode_hp, checkpoint_path):
    if FLAGS.decode_interactive:
        count = decoding.decode_interactively(estimator, hparams, decode_hp,
                                              checkpoint_path=checkpoint_path)
        print("t2t-decoder: decoded %d inputs" % count)
    elif FLAGS.decode_from_file:
        decode_to_file = os.path.expanduser(FLAGS.decode_to_file) if FLAGS.decode_to_file \
            else None
        decodes = decoding.decode_from_file(
            estimator, os.path.expanduser(FLAGS.decode_from_file), hparams, decode_hp,
            decode_to_file, checkpoint_path=checkpoint_path, model_name=FLAGS.model,
            hparams_set=FLAGS.hparams_set)
        if FLAGS.checkpoint_path and FLAGS.keep_timestamp and decode_to_file:
            ckpt_time = os.path.getmtime(checkpoint_path + ".index")
            os.utime(decode_to_file, (ckpt_time, ckpt_time))
        print("t2t-decoder: decoded %d lines of %s" % (len(decodes), FLAGS.decode_from_file))
    else:
        decoding.decode_from_dataset(
            estimator, FLAGS.problem, hparams, decode_hp,
            decode_to_file=os.path.expanduser(FLAGS.decode_to_file),
            dataset_split="test" if FLAGS.eval_use_test_set else None,
            checkpoint_path=checkpoint_path, model_name=FLAGS.model,
            hparams_set=FLAGS.hparams_set)


def main(argv):
    cli.reject_extra_args(argv, "t2t-decoder")
    logging.set_verbosity(logging.INFO)
    cli.apply_common_flags(FLAGS.t2t_usr_dir, FLAGS.registry_help)
    # Flags, names and files first: a mistake is one line before any TensorFlow work.
    if FLAGS.mixture_or_task_name:
        return main_task()
    source = model_flags_from_folder(FLAGS.output_dir or (
        os.path.dirname(os.path.expanduser(FLAGS.checkpoint_path)) if FLAGS.checkpoint_path
        else None), must_hold_model=bool(FLAGS.output_dir and not FLAGS.checkpoint_path))
    require_flags("problem", "model", "hparams_set")
    if FLAGS.engine == "ctranslate2":
        return main_ctranslate2()
    if FLAGS.quantization != "float32":
        raise errors.UserError("--quantization is for --engine=ctranslate2; the TensorFlow "
                               "engine decodes the checkpoint's float32 weights")
    backend_choice.resolve_backend(FLAGS.backend)
    if FLAGS.use_tpu:
        raise errors.UserError("t2t-decoder does not decode on TPUs; drop --use_tpu")
    decode_hp = create_decode_hparams()
    check_input_files(decode_hp.delimiter)
    registry.model(FLAGS.model)
    registry.problem(FLAGS.problem)
    registry.hparams(FLAGS.hparams_set)
    model_dir, checkpoint_path = resolve_checkpoint(FLAGS.checkpoint_path, FLAGS.output_dir)
    check_trained_with(model_dir)
    random_seed.set_random_seed(FLAGS.random_seed)
    if FLAGS.score_file:
        score(checkpoint_path, source)
        return 0
    hparams = hparams_from_flags(source)
    estimator = create_estimator(FLAGS.model, hparams, model_dir, decode_hp,
                                 disable_grappler=FLAGS.disable_grappler_optimizations)
    try:
        decode(estimator, hparams, decode_hp, checkpoint_path)
    except tf.errors.DataLossError as error:
        if FLAGS.decode_from_file or FLAGS.decode_interactive:
            raise
        split = "test" if FLAGS.eval_use_test_set else ModeKeys.EVAL
        raise shard_check.explain_data_loss(
            error, model_hparams.attached_problem(hparams).data_files(hparams.data_dir, split),
            problem_name=FLAGS.problem, data_dir=hparams.data_dir) from None
    return 0


def main_ctranslate2():
    """--engine=ctranslate2: decode --decode_from_file (or typed lines) with CTranslate2."""
    import t2t.inference
    from t2t.inference import file_decoding
    from t2t.serving import ctranslate2_export
    if not (FLAGS.decode_from_file or FLAGS.decode_interactive):
        raise errors.UserError("--engine=ctranslate2 decodes --decode_from_file or "
                               "--decode_interactive; decode the dev set with "
                               "--engine=tensorflow")
    if FLAGS.score_file:
        raise errors.UserError("--score_file scores with --engine=tensorflow")
    decode_hp = create_decode_hparams()
    file_decoding.unsupported_decode_hparams(decode_hp, "ctranslate2")
    ctranslate2_export.check_quantization(FLAGS.quantization)
    check_input_files(decode_hp.delimiter)
    path = FLAGS.checkpoint_path or FLAGS.output_dir
    if not path:
        raise errors.UserError("give --output_dir (a training folder or a CTranslate2 "
                               "export) or --checkpoint_path")
    model = t2t.inference.load(
        path, engine="ctranslate2", data_dir=FLAGS.data_dir, quantization=FLAGS.quantization,
        max_input_size=decode_hp.max_input_size if decode_hp.max_input_size > 0 else None)
    settings = file_decoding.settings_from_decode_hparams(decode_hp)
    with model:
        if FLAGS.decode_interactive:
            count = file_decoding.decode_typed_lines(model, settings)
            print("t2t-decoder: decoded %d inputs" % count)
            return 0
        filename = os.path.expanduser(FLAGS.decode_from_file)
        out_path = (os.path.expanduser(FLAGS.decode_to_file) if FLAGS.decode_to_file else
                    decoding.decode_filename(filename, FLAGS.problem, decode_hp, FLAGS.model,
                                             FLAGS.hparams_set))
        lines = file_decoding.decode_file(
            model, filename, out_path, settings, batch_size=decode_hp.batch_size or 32,
            delimiter=decode_hp.delimiter, write_scores=decode_hp.write_beam_scores)
    print("t2t-decoder: decoded %d lines of %s into %s (CTranslate2)" % (
        len(lines), FLAGS.decode_from_file, out_path))
    return 0


def check_task_split():
    """The task's files (or cache) for the split decoded, checked before any work."""
    from t2t.seqio import checks
    from t2t.seqio_training import task_problem
    checks.check_task_data(task_problem.get_provider(FLAGS.mixture_or_task_name),
                           [FLAGS.task_eval_split], use_cached=FLAGS.use_cached_tasks,
                           fix_args=checks.module_args(FLAGS.module_import, FLAGS.t2t_usr_dir))


def main_task():
    """--mixture_or_task_name: decode a task's split (or --decode_from_file) with its
    vocabulary and post-processor."""
    from t2t.seqio import dataset_providers
    from t2t.seqio_training import inference, task_problem, training
    if FLAGS.problem:
        raise errors.UserError("give --problem or --mixture_or_task_name, not both")
    require_flags("model", "hparams_set")
    backend_choice.resolve_backend(FLAGS.backend)
    if FLAGS.score_file and not FLAGS.decode_to_file:
        raise errors.UserError("to score a file, give --decode_to_file for the results")
    decode_hp = create_decode_hparams()
    check_input_files(decode_hp.delimiter)
    registry.model(FLAGS.model)
    registry.hparams(FLAGS.hparams_set)
    usr_dir.import_user_modules(FLAGS.module_import)
    if not (FLAGS.decode_from_file or FLAGS.decode_interactive or FLAGS.score_file):
        check_task_split()
    model_dir, checkpoint_path = resolve_checkpoint(FLAGS.checkpoint_path, FLAGS.output_dir)
    check_trained_with(model_dir)
    record = loading.read_model_folder(model_dir)
    lengths = FLAGS.task_feature_lengths or record.saved_flags.get("task_feature_lengths", "")
    decoder_only = FLAGS.decoder_only or "--decoder_only" in record.saved_switches
    pack = "--nopack" not in record.saved_switches
    spec = training.TaskTrainingSpec(
        FLAGS.mixture_or_task_name, task_problem.parse_feature_lengths(lengths), pack=pack,
        decoder_only=decoder_only, eval_split=FLAGS.task_eval_split,
        use_cached=FLAGS.use_cached_tasks, seed=FLAGS.random_seed)
    random_seed.set_random_seed(FLAGS.random_seed)
    hparams = training.task_hparams(FLAGS.hparams_set, FLAGS.hparams, spec,
                                    hparams_path=record.hparams_path or None)
    batch_size = decode_hp.batch_size or 32
    if FLAGS.score_file:
        filename = os.path.expanduser(FLAGS.score_file)
        results = inference.score_file(FLAGS.model, hparams, FLAGS.mixture_or_task_name,
                                       filename, checkpoint_path, batch_size)
        write_scores(results, filename)
        return 0
    estimator = create_estimator(FLAGS.model, hparams, model_dir, decode_hp,
                                 disable_grappler=FLAGS.disable_grappler_optimizations)
    problem = model_hparams.attached_problem(hparams, "t2t-decoder")
    if FLAGS.decode_interactive:
        count = inference.decode_interactively(estimator, problem, FLAGS.mixture_or_task_name,
                                               checkpoint_path)
        print("t2t-decoder: decoded %d inputs" % count)
        return 0
    decode_to_file = os.path.expanduser(FLAGS.decode_to_file) if FLAGS.decode_to_file else None
    if FLAGS.decode_from_file:
        lines = input_checks.read_text_lines(os.path.expanduser(FLAGS.decode_from_file))
        outputs = inference.decode_lines(estimator, problem, FLAGS.mixture_or_task_name, lines,
                                         decode_to_file, checkpoint_path, batch_size,
                                         source=FLAGS.decode_from_file)
        print("t2t-decoder: decoded %d lines of %s" % (len(outputs), FLAGS.decode_from_file))
        return 0
    split = "test" if FLAGS.eval_use_test_set else FLAGS.task_eval_split
    provider = dataset_providers.get_mixture_or_task(FLAGS.mixture_or_task_name)
    tasks = ([provider] if isinstance(provider, dataset_providers.Task) else
             [t for t in dataset_providers.get_subtasks(provider) if split in t.splits])
    if not tasks:
        raise errors.UserError("no task of %s has a %r split" % (provider.name, split))
    num_examples = decode_hp.num_samples if decode_hp.num_samples > 0 else None
    for task in tasks:
        out = decode_to_file
        if out and len(tasks) > 1:
            out = "%s.%s" % (decode_to_file, task.name)
        outputs = inference.decode_task(estimator, problem, task.name, split, out,
                                        checkpoint_path, batch_size, num_examples)
        print("t2t-decoder: decoded %d examples of %s/%s%s" % (
            len(outputs), task.name, split, " into %s" % out if out else ""))
    return 0


def console_main():
    """Entry point of the `t2t-decoder` console script."""
    cli.run_main(main, "t2t-decoder", doc=__doc__, help_flags=DECODER_FLAGS)


if __name__ == "__main__":
    console_main()
