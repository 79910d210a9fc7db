"""Speed of the TF Hub export: preprocessor sentences/s and encoder sequences/s.

A masked_lm_tmpdir vocabulary is built from a synthetic corpus and a
transformer_encoder_mlm_tiny checkpoint (d=128, 2 layers, 4 heads, filter 512; random
weights: speed does not depend on them) is exported with `t2t.hub.export`. In the same
process, interleaved, each measured `--repeats` times (medians reported):

  preprocessor: the loaded SavedModel on batches of 64 sentences (8-30 Zipf-distributed
    pseudo-words; in-graph subword tokenization and packing to 128), against the same
    work in Python (SubwordTextEncoder.encode, its token cache emptied at the start of
    each run, + masked_lm.pack_segments + padding);
  encoder: the loaded SavedModel (training=False) on batches of 64 x 128 ids, against the
    same encoder run from the t2t checkpoint (TransformerEncoderMlm.encode_ids in a TF1
    session), on the same ids.

    python bench/bench_hub.py [--repeats 7] [--batches 20]
    # writes bench/results/hub.json
"""
import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2

from t2t.core.modes import ModeKeys
from t2t.core import registry
from t2t.hub import encoder as encoder_lib
from t2t.hub import export as hub_export
from t2t.models import transformer_encoder_mlm
from t2t.problems import masked_lm
from t2t.training import run_config, trainer_lib

v1 = tf.compat.v1
HERE = os.path.dirname(os.path.abspath(__file__))
BATCH = 64
SEQ_LENGTH = 128
SYLLABLES = ("ka ri to na me su lo vi de ga po ne ru si ta mo be chi fu ya "
             "ro ze ni ho").split()


def word_list(rng, count=5000):
    """Pseudo-words of 1-4 syllables, some capitalised, for a varied vocabulary."""
    words = set()
    while len(words) < count:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4)))
        words.add(word.capitalize() if rng.random() < 0.1 else word)
    return sorted(words)


def corpus(folder, rng, lines=3000):
    """Sentences of 8-30 words drawn Zipf-like from `word_list`, with punctuation."""
    os.makedirs(folder, exist_ok=True)
    words = word_list(rng)
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    sentences = []
    for _ in range(lines):
        sentence = rng.choices(words, weights, k=rng.randint(8, 30))
        sentences.append(" ".join(sentence) + rng.choice([" .", " ?", " !", ", ka ."]))
    for name in ("train.txt", "dev.txt"):
        with open(os.path.join(folder, name), "w") as f:
            f.write("\n".join(sentences) + "\n")
    return sentences


def save_checkpoint(hparams, path):
    """Random weights for every variable of the model, as t2t-trainer would save them."""
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(1)
        model = transformer_encoder_mlm.TransformerEncoderMlm(hparams,
                                                              ModeKeys.TRAIN)
        ids = tf.constant([[2, 7, 8, 3]])
        model({"inputs": ids[:, :, None, None], "targets": ids[:, :, None, None],
               "input_type_ids": tf.zeros_like(ids)})
        with v1.Session(graph=graph, config=session_config()) as sess:
            sess.run(v1.global_variables_initializer())
            v1.train.Saver().save(sess, path)
    return path


def python_preprocess(vocab, texts):
    """The preprocessor's work in Python: encode, pack one segment, pad to SEQ_LENGTH."""
    rows = []
    for text in texts:
        ids, types = masked_lm.pack_segments([vocab.encode(text)], SEQ_LENGTH)
        pad = SEQ_LENGTH - len(ids)
        rows.append((ids + [0] * pad, [1] * len(ids) + [0] * pad, types + [0] * pad))
    return np.array(rows, np.int32)


def session_config():
    """t2t-trainer's session options, without Grappler's remapper: on this TF 2.15 CPU build
    it aborts the process ("key not found: value") on the encoder graph fed by placeholders."""
    config = run_config.create_session_config()
    config.graph_options.rewrite_options.remapping = rewriter_config_pb2.RewriterConfig.OFF
    return config


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--batches", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(0)
    work = tempfile.mkdtemp(prefix="bench_hub_")
    sentences = corpus(os.path.join(work, "text"), rng)
    data_dir = os.path.join(work, "data")
    prob = registry.problem("masked_lm_tmpdir")
    random.seed(0)
    prob.generate_data(data_dir, os.path.join(work, "text"))
    vocab = prob.feature_encoders(data_dir)["inputs"]
    hparams = trainer_lib.create_hparams("transformer_encoder_mlm_tiny", data_dir=data_dir,
                                         problem_name="masked_lm_tmpdir")
    checkpoint = save_checkpoint(hparams, os.path.join(work, "train", "model.ckpt-0"))
    export_dir = os.path.join(work, "export", "hub")
    hub_export.export_tfhub("transformer_encoder_mlm", hparams, checkpoint, export_dir,
                            default_seq_length=SEQ_LENGTH)
    preprocessor = tf.saved_model.load(os.path.join(export_dir, "preprocessor"))
    encoder = tf.saved_model.load(os.path.join(export_dir, "encoder"))

    batches = [sentences[i * BATCH:(i + 1) * BATCH] for i in range(args.batches)]
    string_batches = [tf.constant(b) for b in batches]
    id_batches = [{k: v.numpy() for k, v in preprocessor(b).items()} for b in string_batches]

    graph = tf.Graph()
    with graph.as_default():
        model = transformer_encoder_mlm.TransformerEncoderMlm(hparams,
                                                              ModeKeys.EVAL)
        placeholders = {k: v1.placeholder(tf.int32, [None, None], name=k)
                        for k in encoder_lib.INPUT_NAMES}
        outputs = model.encode_ids(*[placeholders[k] for k in encoder_lib.INPUT_NAMES])
        session = v1.Session(graph=graph, config=session_config())
        v1.train.Saver().restore(session, checkpoint)

    def run_exported_preprocessor():
        for b in string_batches:
            preprocessor(b)["input_word_ids"].numpy()

    def run_python_preprocessor():
        vocab._cache = {}  # start cold, as on new text; it warms up within the run
        for b in batches:
            python_preprocess(vocab, b)

    def run_exported_encoder():
        for b in id_batches:
            encoder(b, training=False)["pooled_output"].numpy()

    def run_checkpoint_encoder():
        for b in id_batches:
            session.run(outputs["pooled_output"], {placeholders[k]: b[k] for k in b})

    # The two agree (the export computes the checkpoint's encoder).
    reference = session.run(outputs, {placeholders[k]: id_batches[0][k] for k in id_batches[0]})
    exported = encoder(id_batches[0], training=False)
    max_difference = float(np.abs(reference["sequence_output"] -
                                  exported["sequence_output"].numpy()).max())
    runs = {"preprocessor_savedmodel": run_exported_preprocessor,
            "preprocessor_python": run_python_preprocessor,
            "encoder_savedmodel": run_exported_encoder,
            "encoder_t2t_checkpoint": run_checkpoint_encoder}
    for fn in runs.values():
        fn()  # warm-up
    seconds = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, fn in runs.items():
            seconds[name].append(timed(fn))
    count = args.batches * BATCH
    per_second = {name: count / statistics.median(s) for name, s in seconds.items()}
    results = {
        "batch": BATCH, "seq_length": SEQ_LENGTH, "batches": args.batches,
        "repeats": args.repeats, "hparams_set": "transformer_encoder_mlm_tiny",
        "vocab_size": vocab.vocab_size,
        "preprocessor_sentences_per_second": {
            "savedmodel": round(per_second["preprocessor_savedmodel"], 1),
            "python": round(per_second["preprocessor_python"], 1),
            "ratio_savedmodel_to_python": round(per_second["preprocessor_savedmodel"] /
                                                per_second["preprocessor_python"], 2)},
        "encoder_sequences_per_second": {
            "savedmodel": round(per_second["encoder_savedmodel"], 1),
            "t2t_checkpoint": round(per_second["encoder_t2t_checkpoint"], 1),
            "ratio_savedmodel_to_checkpoint": round(per_second["encoder_savedmodel"] /
                                                    per_second["encoder_t2t_checkpoint"], 2)},
        "encoder_max_abs_difference": max_difference,
    }
    session.close()
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results, indent=2))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "hub.json"), "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
