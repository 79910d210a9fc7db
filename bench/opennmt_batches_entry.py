"""The training batches OpenNMT-tf's runner would feed its trainer, as JSON rows.

Run with the OpenNMT-tf venv's python by multi30k_batches.py:

    python bench/opennmt_batches_entry.py RUN_DIR N OUT.json

RUN_DIR holds the model.py and config.yml bench_multi30k.py writes (model.py applies the
--peer_batching ablation when it is loaded, as it does under `onmt-main`). The dataset is
built by the inputter's make_training_dataset with the arguments OpenNMT-tf's runner passes
for this config (one replica, no mixed precision). Each of the first N batches becomes
[examples, source length, target length, source tokens, target tokens] (lengths padded,
tokens real).
"""
import importlib.util
import json
import os
import sys


def main():
    run_dir, count, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import opennmt
    from opennmt import config as config_util
    from opennmt import runner
    spec = importlib.util.spec_from_file_location("model", os.path.join(run_dir, "model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.model()
    config = config_util.merge_config(
        config_util.merge_config({}, runner._CONFIG_FALLBACK),
        config_util.load_config([os.path.join(run_dir, "config.yml")]))
    model.initialize(config["data"], params=config["params"])
    train = config["train"]
    tf.random.set_seed(1)
    dataset = model.examples_inputter.make_training_dataset(
        config["data"]["train_features_file"], config["data"]["train_labels_file"],
        train["batch_size"], batch_type=train["batch_type"],
        shuffle_buffer_size=train["sample_buffer_size"],
        length_bucket_width=train["length_bucket_width"],
        maximum_features_length=train.get("maximum_features_length"),
        maximum_labels_length=train.get("maximum_labels_length"))
    rows = []
    for features, labels in dataset.take(count):
        rows.append([int(tf.shape(features["ids"])[0]), int(tf.shape(features["ids"])[1]),
                     int(tf.shape(labels["ids"])[1]), int(tf.reduce_sum(features["length"])),
                     int(tf.reduce_sum(labels["length"]))])
    with open(out + ".tmp", "w") as handle:
        json.dump({"opennmt_version": opennmt.__version__, "batches": rows}, handle)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
