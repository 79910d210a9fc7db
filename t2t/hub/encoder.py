"""The TF Hub encoder and text-embedding SavedModels of a trained t2t text encoder.

The encoder runs the t2t model's own graph code (`model.encode_ids`, as in training)
inside a `tf.function`, with every `get_variable` answered by a `tf.Variable` that holds
the checkpoint's value. So the SavedModel computes exactly what the t2t model computes,
its variables are ordinary TF2 variables (fine-tunable through `hub.KerasLayer(...,
trainable=True)`), and loading it needs TensorFlow only.

    encoder = Encoder("transformer_encoder_mlm", hparams, "/train/model.ckpt-1000")
    tf.saved_model.save(encoder, "/export/hub/encoder")

    encoder = hub.load("/export/hub/encoder")
    out = encoder({"input_word_ids": ids, "input_mask": mask, "input_type_ids": types},
                  training=False)          # int32 [B, L] each
    out["pooled_output"]      # float32 [B, width]    (also out["default"])
    out["sequence_output"]    # float32 [B, L, width]
    out["encoder_outputs"]    # [B, L, width] per layer; the last is sequence_output
    encoder.variables, encoder.trainable_variables, encoder.regularization_losses

Dropout acts only with training=True (the model's TRAIN hparams); training=False uses
the EVAL hparams, where every dropout is 0.

    embedding = Embedding(Preprocessor(vocab), encoder)
    embedding(tf.constant(["a sentence", "another"]))    # float32 [2, width] pooled_output
"""
import tensorflow as tf

from t2t.core import errors
from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.model import variable_store

_v1 = tf.compat.v1
_TRAIN = ModeKeys.TRAIN
_EVAL = ModeKeys.EVAL
INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


def input_specs():
    """The encoder's input signature: three int32 [batch, seq_length] tensors."""
    return {name: tf.TensorSpec([None, None], tf.int32, name=name) for name in INPUT_NAMES}


def _encoder_variable_shapes(model):
    """{variable name: shape} of what `model.encode_ids` creates, found in a scratch graph."""
    graph = tf.Graph()
    with graph.as_default():
        placeholders = [_v1.placeholder(tf.int32, [None, None]) for _ in INPUT_NAMES]
        model.encode_ids(*placeholders)
        return {v.op.name: v.shape.as_list() for v in _v1.global_variables()}


def load_encoder_variables(model, checkpoint_path):
    """{name: tf.Variable} with the checkpoint's values of the encoder's variables.

    Raises UserError naming the first variable the checkpoint lacks (or whose shape
    differs), as when the hparams differ from the training run's.
    """
    reader = tf.train.load_checkpoint(checkpoint_path)
    saved_shapes = reader.get_variable_to_shape_map()
    variables = {}
    for name, shape in sorted(_encoder_variable_shapes(model).items()):
        if name not in saved_shapes:
            raise errors.UserError(
                "checkpoint %s has no variable %s; export with the model, hparams_set and "
                "hparams it was trained with" % (checkpoint_path, name))
        if list(saved_shapes[name]) != list(shape):
            raise errors.UserError(
                "variable %s has shape %s in checkpoint %s but the hparams give %s; export "
                "with the hparams it was trained with" % (name, saved_shapes[name],
                                                          checkpoint_path, shape))
        variables[name] = tf.Variable(reader.get_tensor(name), name=name, trainable=True)
    return variables


def build_model(model_name, hparams, mode):
    """The registered model in `mode`; it must have `encode_ids` (a text encoder)."""
    model_cls = registry.model(model_name)
    if not callable(getattr(model_cls, "encode_ids", None)):
        raise errors.UserError(
            "--export_as_tfhub exports text encoders (models with encode_ids, such as "
            "transformer_encoder_mlm); model %s has none" % model_name)
    return model_cls(hparams, mode)


class Encoder(tf.train.Checkpoint):
    """The encoder SavedModel's root (see the module doc)."""

    def __init__(self, model_name, hparams, checkpoint_path):
        super().__init__()
        self._train_model = build_model(model_name, hparams, _TRAIN)
        self._eval_model = build_model(model_name, hparams, _EVAL)
        # Answers the models' get_variable calls with the checkpoint's values (by the
        # training run's names); frozen: a name the checkpoint lacks is an error.
        self._store = variable_store.VariableStore(
            load_encoder_variables(self._eval_model, checkpoint_path))
        self.variables = list(self._store.variables.values())
        self.trainable_variables = list(self.variables)
        self.regularization_losses = []
        specs = input_specs()
        for training in (False, True):
            self.__call__.get_concrete_function(specs, training=training)

    @property
    def width(self):
        return self._eval_model.hparams.hidden_size

    @tf.function(autograph=False)
    def __call__(self, inputs, training=False):
        missing = [name for name in INPUT_NAMES if name not in inputs]
        if missing:
            raise ValueError("the encoder takes a dict with %s (the preprocessor's output); "
                             "%s missing" % (", ".join(INPUT_NAMES), ", ".join(missing)))
        model = self._train_model if training else self._eval_model
        with self._store.scope():
            outputs = model.encode_ids(*[tf.cast(inputs[name], tf.int32)
                                         for name in INPUT_NAMES])
        return {"pooled_output": outputs["pooled_output"],
                "sequence_output": outputs["sequence_output"],
                "encoder_outputs": list(outputs["encoder_outputs"]),
                "default": outputs["pooled_output"]}


class Embedding(tf.train.Checkpoint):
    """The text-embedding SavedModel's root: strings [B] -> float32 [B, width].

    The preprocessor (at its default sequence length) and the encoder's pooled_output
    in one Reusable SavedModel; it shares the encoder's variables.
    """

    def __init__(self, preprocessor, encoder):
        super().__init__()
        self.preprocessor = preprocessor
        self.encoder = encoder
        self.variables = list(encoder.variables)
        self.trainable_variables = list(encoder.trainable_variables)
        self.regularization_losses = []
        spec = tf.TensorSpec([None], tf.string)
        for training in (False, True):
            self.__call__.get_concrete_function(spec, training=training)

    @tf.function(autograph=False)
    def __call__(self, strings, training=False):
        return self.encoder(self.preprocessor(strings), training=training)["pooled_output"]
