"""t2t-exporter: write a trained model as a SavedModel for serving.

    t2t-exporter --problem=translate_ende_wmt8k --model=transformer \\
        --hparams_set=transformer_base --data_dir=~/t2t_data --output_dir=~/train \\
        --decode_hparams="beam_size=4,alpha=0.6"
    # prints the SavedModel folder, e.g. ~/train/export/1700000000

The SavedModel loads with `tf.saved_model.load` in a process without t2t. Its
"serving_default" signature takes raw strings ("inputs") and its "serialized_example"
signature serialized tf.Examples (T2T's only one); both return "outputs" (ids),
"decoded_outputs" (strings) and "scores" (see `t2t.serving.export`).

With --export_as_tfhub it writes a pretrained text encoder (e.g. transformer_encoder_mlm)
as TF Hub SavedModels instead: <export_dir>/preprocessor, /encoder and /embedding, export_dir
defaulting to <output_dir>/export/hub (see `t2t.hub.export`; --default_seq_length, 128, is
the preprocessor's packed length):

    t2t-exporter --problem=masked_lm_tmpdir --model=transformer_encoder_mlm \\
        --hparams_set=transformer_encoder_mlm_tiny --data_dir=~/mlm_data \\
        --output_dir=~/mlm --export_as_tfhub

With --export_format=ctranslate2 it writes a CTranslate2 model folder of a Transformer
(float32 weights, or --quantization=int8 / int8_float32 / int16), which `t2t.load` and
`t2t-decoder --engine=ctranslate2` decode (see `t2t.serving.ctranslate2_export`):

    t2t-exporter --problem=translate_ende_multi30k --model=transformer \\
        --hparams_set=transformer_multi30k --output_dir=~/t2t_train/m30k \\
        --export_format=ctranslate2 --quantization=int8
    # prints ~/t2t_train/m30k/export/ctranslate2-int8

Flags are T2T 1.15.7's: --export_dir (default <checkpoint folder>/export),
--checkpoint_path (default: the latest in --output_dir), --as_text (default True, as in
T2T) and the trainer's --problem, --model, --hparams_set, --hparams, --data_dir,
--output_dir, --t2t_usr_dir, plus --decode_hparams. `--help` lists those; the trainer's
other flags are accepted (one command line can serve several programs) and ignored.
"""
import os

from absl import flags, logging

from t2t.bin import cli
from t2t.bin import t2t_decoder  # The trainer and decoder flags, and their helpers.
from t2t.core import errors
from t2t.core import registry
from t2t.core import random_seed
from t2t.hub import export as hub_export
from t2t.serving import ctranslate2_export
from t2t.serving import export

FLAGS = flags.FLAGS

flags.DEFINE_string("export_dir", None, "Parent folder of the SavedModel (a timestamped "
                    "subfolder is created); default <checkpoint folder>/export. With "
                    "--export_as_tfhub: the folder of the three SavedModels, default "
                    "<output_dir>/export/hub.")
flags.DEFINE_bool("export_as_tfhub", False, "Write TF Hub SavedModels of a text encoder "
                  "(preprocessor, encoder, embedding) to --export_dir, default "
                  "<output_dir>/export/hub (see t2t.hub.export).")
flags.DEFINE_integer("default_seq_length", 128, "With --export_as_tfhub: the length the "
                     "preprocessor packs strings to.")
flags.DEFINE_bool("as_text", True, "Write saved_model.pbtxt (text) instead of "
                  "saved_model.pb.")
flags.DEFINE_enum("export_format", "saved_model", ["saved_model", "ctranslate2"],
                  "saved_model: a TensorFlow SavedModel for serving; ctranslate2: a "
                  "CTranslate2 model folder (a Transformer; needs the ctranslate2 package) "
                  "in --export_dir, default <checkpoint folder>/export/ctranslate2[-<"
                  "quantization>].")


# What `--help` lists: the flags t2t-exporter reads.
EXPORTER_FLAGS = dict(t2t_decoder.RUN_FLAGS_HELP, data_dir="The problem's data folder (its "
                      "vocabulary, which the SavedModel encodes strings with).",
                      export_dir=None, as_text=None, export_as_tfhub=None,
                      default_seq_length=None, export_format=None, quantization=None)


def main(argv):
    cli.reject_extra_args(argv, "t2t-exporter")
    logging.set_verbosity(logging.INFO)
    cli.apply_common_flags(FLAGS.t2t_usr_dir, FLAGS.registry_help)
    # Flags, names and the checkpoint first: a mistake is one line before any model work.
    source = t2t_decoder.model_flags_from_folder(
        FLAGS.output_dir, must_hold_model=bool(FLAGS.output_dir and not FLAGS.checkpoint_path))
    t2t_decoder.require_flags("problem", "model", "hparams_set", program="t2t-exporter")
    decode_hp = t2t_decoder.parse_decode_hparams(FLAGS.decode_hparams)
    registry.model(FLAGS.model)
    if FLAGS.export_format == "ctranslate2":
        ctranslate2_export.check_quantization(FLAGS.quantization)
        ctranslate2_export.require_ctranslate2()
    elif FLAGS.quantization != "float32":
        raise errors.UserError("--quantization is for --export_format=ctranslate2; a "
                               "SavedModel keeps the checkpoint's float32 weights")
    model_dir, checkpoint_path = t2t_decoder.resolve_checkpoint(FLAGS.checkpoint_path,
                                                                FLAGS.output_dir)
    t2t_decoder.check_trained_with(model_dir)
    random_seed.set_random_seed(FLAGS.random_seed)
    hparams = t2t_decoder.hparams_from_flags(source)
    if FLAGS.export_as_tfhub:
        run_dir = os.path.expanduser(FLAGS.output_dir or os.path.dirname(checkpoint_path))
        export_dir = os.path.expanduser(FLAGS.export_dir or
                                        os.path.join(run_dir, "export", "hub"))
        hub_export.export_tfhub(FLAGS.model, hparams, checkpoint_path, export_dir,
                                default_seq_length=FLAGS.default_seq_length)
        print(export_dir)
        return 0
    assets = {"hparams_set": FLAGS.hparams_set, "hparams_overrides": FLAGS.hparams,
              "t2t_usr_dir": FLAGS.t2t_usr_dir or ""}
    default_dir = os.path.join(os.path.dirname(checkpoint_path), "export")
    if FLAGS.export_format == "ctranslate2":
        ctranslate2_export.check_convertible(FLAGS.model, hparams)
        name = "ctranslate2" + ("" if FLAGS.quantization == "float32" else
                                "-" + FLAGS.quantization)
        path = ctranslate2_export.export_ctranslate2(
            FLAGS.model, hparams, checkpoint_path,
            os.path.expanduser(FLAGS.export_dir or os.path.join(default_dir, name)),
            quantization=FLAGS.quantization, **assets)
        print(path)
        return 0
    export_dir = os.path.expanduser(FLAGS.export_dir or default_dir)
    path = export.export_saved_model(FLAGS.model, hparams, checkpoint_path, export_dir,
                                     decode_hp, as_text=FLAGS.as_text, assets=assets)
    print(path)
    return 0


def console_main():
    """Entry point of the `t2t-exporter` console script."""
    cli.run_main(main, "t2t-exporter", doc=__doc__, help_flags=EXPORTER_FLAGS)


if __name__ == "__main__":
    console_main()
