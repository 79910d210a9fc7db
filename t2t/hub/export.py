"""Export a pretrained t2t text encoder as TF Hub SavedModels (`t2t-exporter --export_as_tfhub`).

    paths = export_tfhub("transformer_encoder_mlm", hparams, "/train", "/train/export/hub")
    # /train/export/hub/preprocessor  strings -> input_word_ids / input_mask / input_type_ids
    # /train/export/hub/encoder       that dict -> pooled_output, sequence_output, ...
    # /train/export/hub/embedding     strings -> float32 [batch, width]

Each is a TF2 Reusable SavedModel (`tf.saved_model.save`) implementing TF Hub's "Common
SavedModel APIs for Text Tasks"; anyone loads them with TensorFlow and tensorflow_hub
only (no t2t, no tensorflow_text):

    preprocessor = hub.KerasLayer("/train/export/hub/preprocessor")
    encoder = hub.KerasLayer("/train/export/hub/encoder", trainable=True)
    pooled = encoder(preprocessor(text_input))["pooled_output"]

The export is written under a temporary name next to `export_dir` and renamed into place
when all three are complete (`atomic_files.atomic_output_dir`); an older export at
`export_dir` is replaced, and folders an interrupted export left are removed first.
"""
import logging as std_logging
import os

import tensorflow as tf
from absl import logging

from t2t.core import atomic_files
from t2t.core import errors
from t2t.hub import encoder as encoder_lib
from t2t.hub import preprocessor as preprocessor_lib
from t2t.model import model_hparams

PARTS = ("preprocessor", "encoder", "embedding")


def _problem_vocabulary(hparams):
    p_hparams = model_hparams.attached_problem_hparams(hparams, "export_tfhub")
    vocabulary = p_hparams.vocabulary.get("inputs")
    if vocabulary is None:
        raise errors.UserError("the problem has no inputs vocabulary to tokenize text with; "
                               "pretrain on a masked-LM problem such as masked_lm_tmpdir")
    return vocabulary


def _resolve_checkpoint(checkpoint_path):
    if checkpoint_path and tf.io.gfile.isdir(checkpoint_path):
        checkpoint_path = tf.train.latest_checkpoint(checkpoint_path)
    if not checkpoint_path or not tf.io.gfile.exists(checkpoint_path + ".index"):
        raise errors.UserError("no checkpoint %s to export; train first or pass "
                               "--checkpoint_path" % checkpoint_path)
    return checkpoint_path


def build_hub_objects(model_name, hparams, checkpoint_path, default_seq_length=128):
    """{"preprocessor", "encoder", "embedding"}: the objects `export_tfhub` saves."""
    checkpoint_path = _resolve_checkpoint(checkpoint_path)
    vocabulary = _problem_vocabulary(hparams)
    preprocessor_lib.special_token_ids(vocabulary)  # fail early on a vocabulary without them
    encoder = encoder_lib.Encoder(model_name, hparams, checkpoint_path)
    preprocessor = preprocessor_lib.Preprocessor(vocabulary, default_seq_length)
    embedding = encoder_lib.Embedding(preprocessor, encoder)
    return {"preprocessor": preprocessor, "encoder": encoder, "embedding": embedding}


class _WithoutCaptureRenameNotice(std_logging.Filter):
    """Drops TensorFlow's "Function `__call__` contains input name(s) 17287 with unsupported
    characters which will be renamed to unknown" notice: the "name" is the id of the
    vocabulary table the preprocessor's signature captures, not an input of ours, and
    nothing a user can act on."""

    def filter(self, record):
        return "with unsupported characters which will be renamed" not in str(record.msg)


def save(obj, path):
    """`tf.saved_model.save(obj, path)` without TensorFlow's capture-rename notice."""
    notice_filter, logger = _WithoutCaptureRenameNotice(), logging.get_absl_logger()
    logger.addFilter(notice_filter)
    try:
        tf.saved_model.save(obj, path)
    finally:
        logger.removeFilter(notice_filter)


def export_tfhub(model_name, hparams, checkpoint_path, export_dir, default_seq_length=128):
    """Write <export_dir>/{preprocessor,encoder,embedding}; returns {part: path}.

    Args:
      model_name: a registered text-encoder model (with `encode_ids`), e.g.
        "transformer_encoder_mlm".
      hparams: its hparams with the problem attached (`add_problem_hparams`); the
        problem's vocabulary must hold [CLS], [SEP] and [MASK].
      checkpoint_path: checkpoint prefix, or a folder (its latest checkpoint).
      export_dir: the folder to create (replaced if it exists).
      default_seq_length: the preprocessor's packed length when called on strings.
    """
    objects = build_hub_objects(model_name, hparams, checkpoint_path, default_seq_length)
    export_dir = export_dir.rstrip("/")
    # Folders an interrupted export left: ours (.hub.<random>.incomplete) and those of
    # earlier versions (hub.incomplete-<pid>, hub.old-<pid>).
    atomic_files.make_dirs(os.path.dirname(export_dir))
    atomic_files.remove_stale_temp_files([export_dir])
    for stale in tf.io.gfile.glob(export_dir + ".incomplete-*") + tf.io.gfile.glob(
            export_dir + ".old-*"):
        tf.io.gfile.rmtree(stale)
        logging.info("removed %s, left by an interrupted export", stale)
    with atomic_files.atomic_output_dir(export_dir) as temporary:
        for part in PARTS:
            save(objects[part], os.path.join(temporary, part))
            logging.info("Saved the TF Hub %s", part)
    logging.info("Exported %s as TF Hub SavedModels to %s (width %d, default_seq_length %d)",
                 model_name, export_dir, objects["encoder"].width, default_seq_length)
    return {part: os.path.join(export_dir, part) for part in PARTS}
