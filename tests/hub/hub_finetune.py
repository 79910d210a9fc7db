"""Use a t2t TF Hub export the way TF Hub's text API page shows, in a process without t2t.

    python hub_finetune.py <export_dir> <data.json> <results.json>

Only tensorflow and tensorflow_hub are imported; importing t2t is blocked. data.json
holds {"train": [[text, label], ...], "test": [...], "pairs": [[premise, hypothesis], ...],
"seq_length": int}. The script runs the page's usage examples and writes the figures the
test checks to results.json.
"""
import importlib.abc
import json
import sys


class _BlockT2t(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "t2t" or fullname.startswith("t2t."):
            raise ImportError("t2t must not be needed to load the TF Hub export")
        return None


sys.meta_path.insert(0, _BlockT2t())

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_hub as hub  # noqa: E402

EXPORT, DATA, RESULTS = sys.argv[1:4]
PREPROCESSOR, ENCODER, EMBEDDING = (EXPORT + "/preprocessor", EXPORT + "/encoder",
                                    EXPORT + "/embedding")
with open(DATA) as f:
    data = json.load(f)
results = {}


def tolist(x):
    return x.to_list() if isinstance(x, tf.RaggedTensor) else x.numpy().tolist()


# --- "Text embeddings with preprocessed inputs": hub.load, preprocessor(), encoder().
text_input = tf.constant(["A long sentence.", "single-word", "http://example.com"])
preprocessor = hub.load(PREPROCESSOR)
encoder_inputs = preprocessor(text_input)
encoder = hub.load(ENCODER)
encoder_outputs = encoder(encoder_inputs)
embeddings = encoder_outputs["default"]
results["encoder_inputs"] = {k: tolist(v) for k, v in encoder_inputs.items()}
results["default_equals_pooled"] = bool(np.array_equal(
    embeddings.numpy(), encoder_outputs["pooled_output"].numpy()))
results["default_shape"] = embeddings.shape.as_list()
results["sequence_shape"] = encoder_outputs["sequence_output"].shape.as_list()
results["num_encoder_outputs"] = len(encoder_outputs["encoder_outputs"])
results["last_encoder_output_is_sequence_output"] = bool(np.array_equal(
    encoder_outputs["encoder_outputs"][-1].numpy(),
    encoder_outputs["sequence_output"].numpy()))
results["num_variables"] = len(encoder.variables)
results["num_trainable_variables"] = len(encoder.trainable_variables)
results["regularization_losses"] = len(encoder.regularization_losses)
inference = [encoder(encoder_inputs, training=False)["pooled_output"].numpy()
             for _ in range(2)]
training = [encoder(encoder_inputs, training=True)["pooled_output"].numpy() for _ in range(2)]
results["inference_max_difference"] = float(np.abs(inference[0] - inference[1]).max())
results["training_max_difference"] = float(np.abs(training[0] - training[1]).max())
results["inference_equals_default_call"] = bool(np.array_equal(inference[0], embeddings))

# --- "Transformer encoders": tokenize, bert_pack_inputs (also through Keras).
premises = tf.constant([p for p, _ in data["pairs"]])
hypotheses = tf.constant([h for _, h in data["pairs"]])
tokenized_premises = preprocessor.tokenize(premises)
tokenized_hypotheses = preprocessor.tokenize(hypotheses)
seq_length = data["seq_length"]
packed = preprocessor.bert_pack_inputs([tokenized_premises, tokenized_hypotheses],
                                       seq_length=seq_length)
results["tokenized_premises"] = tolist(tokenized_premises)
results["tokenized_hypotheses"] = tolist(tokenized_hypotheses)
results["tokens_dtype"] = tokenized_premises.dtype.name
results["tokens_are_ragged"] = isinstance(tokenized_premises, tf.RaggedTensor)
results["packed"] = {k: tolist(v) for k, v in packed.items()}
results["packed_single"] = {k: tolist(v) for k, v in preprocessor.bert_pack_inputs(
    [tokenized_premises], seq_length=seq_length).items()}
results["special_tokens"] = {k: int(v) for k, v in
                             preprocessor.tokenize.get_special_tokens_dict().items()}
tokenize = hub.KerasLayer(preprocessor.tokenize)
bert_pack_inputs = hub.KerasLayer(preprocessor.bert_pack_inputs,
                                  arguments=dict(seq_length=seq_length))
keras_packed = bert_pack_inputs([tokenize(premises), tokenize(hypotheses)])
results["keras_packed_equal"] = all(
    np.array_equal(keras_packed[k].numpy(), packed[k].numpy()) for k in packed)

# --- "Text embedding from text inputs": the embedding SavedModel.
embed = hub.load(EMBEDDING)
results["embedding"] = tolist(embed(text_input))
results["embedding_max_difference_to_encoder"] = float(np.abs(
    embed(text_input).numpy() - embeddings.numpy()).max())
results["embedding_keras_shape"] = hub.KerasLayer(EMBEDDING)(text_input).shape.as_list()


# --- Fine-tuning in Keras, as on the page, against the same classifier on a frozen encoder.
def fit(trainable):
    tf.keras.utils.set_random_seed(1)
    text = tf.keras.layers.Input(shape=(), dtype=tf.string)
    encoder_inputs = hub.KerasLayer(PREPROCESSOR)(text)
    encoder_layer = hub.KerasLayer(ENCODER, trainable=trainable)
    encoder_outputs = encoder_layer(encoder_inputs)
    pooled_output = encoder_outputs["pooled_output"]
    hidden = tf.keras.layers.Dense(32, activation="relu")(pooled_output)
    logits = tf.keras.layers.Dense(2)(hidden)
    model = tf.keras.Model(text, logits)
    model.compile(optimizer=tf.keras.optimizers.Adam(data["learning_rate"]),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    before = [v.numpy().copy() for v in encoder_layer.weights]
    x_train = tf.constant([t for t, _ in data["train"]])
    y_train = tf.constant([label for _, label in data["train"]])
    x_test = tf.constant([t for t, _ in data["test"]])
    y_test = tf.constant([label for _, label in data["test"]])
    model.fit(x_train, y_train, batch_size=16, epochs=data["epochs"], verbose=0,
              shuffle=True)
    after = [v.numpy() for v in encoder_layer.weights]
    changed = max(float(np.abs(a - b).max()) for a, b in zip(after, before))
    _, accuracy = model.evaluate(x_test, y_test, verbose=0)
    return {"accuracy": float(accuracy), "encoder_weight_change": changed,
            "trainable_weights": len(encoder_layer.trainable_weights),
            "weights": len(encoder_layer.weights)}


results["fine_tuned"] = fit(trainable=True)
results["frozen"] = fit(trainable=False)
results["t2t_imported"] = any(name == "t2t" or name.startswith("t2t.") for name in sys.modules)
results["tensorflow_text_imported"] = "tensorflow_text" in sys.modules
with open(RESULTS, "w") as f:
    json.dump(results, f)
