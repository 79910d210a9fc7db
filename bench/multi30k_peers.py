"""The peers of bench_multi30k.py: OpenNMT-tf 2.32 and eole 0.6.4, each in its own venv.

Both get the t2t subword ids of the sentences as tokens ("t17 t4 t999"), one shared
vocabulary file, and the model shape of `transformer_multi30k`; their decodes are turned
back into ids and detokenized by the t2t vocabulary. Nothing here is imported by t2t.
"""
import glob
import json
import math
import os
import re
import statistics
import subprocess
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))


def ids_to_tokens(ids):
    """[17, 4] -> "t17 t4" (the peers' view of t2t's subword ids)."""
    return " ".join("t%d" % i for i in ids)


def tokens_to_ids(line):
    """"t17 t4 <unk>" -> [17, 4]: anything but a t<id> token is dropped."""
    return [int(token[1:]) for token in line.split() if re.fullmatch(r"t\d+", token)]


def peer_vocabulary_size(data):
    """The peers' vocabulary: the tokens of vocab.txt (t2t's ids but PAD and EOS; EOS too with
    --peer_source_eos) and four of their own (<blank>, <s>, </s>, <unk>)."""
    with open(os.path.join(data["peer_dir"], "vocab.txt")) as handle:
        return sum(1 for _ in handle) + 4


def smoothed_target_entropy(smoothing, size, off_value=None):
    """The entropy (nats) of label-smoothed targets over `size` ids: 1 - smoothing on the
    label and `off_value` (default smoothing / (size - 1)) on each other id. A loss that is
    the cross-entropy to such targets cannot go below it; t2t subtracts it from its loss.

        round(smoothed_target_entropy(0.1, 8000), 4)   # 1.2238
    """
    if off_value is None:
        off_value = smoothing / (size - 1)
    on_value = 1.0 - (size - 1) * off_value
    return -(on_value * math.log(on_value) + (size - 1) * off_value * math.log(off_value))


def steady_rate(rates):
    """The median of periodic throughput figures, the first (warm-up) window left out."""
    rates = [r for r in rates if r > 0]
    if len(rates) > 1:
        rates = rates[1:]
    return statistics.median(rates) if rates else None


def embedding_init(args):
    """"default" (each toolkit's own) or "t2t" (normal(0, d^-0.5), t2t's symbol modality):
    bench_multi30k.py's --peer_embedding_init, an ablation."""
    return getattr(args, "peer_embedding_init", "default")


def batching(args):
    """"default" (OpenNMT-tf's own: batch each pass over the data, then repeat, so every pass
    ends in a flush of part-filled length buckets) or "t2t" (shuffle each pass and repeat,
    then batch, as t2t's input_fn does): bench_multi30k.py's --peer_batching, an ablation."""
    return getattr(args, "peer_batching", "default")


def biases(args):
    """"default" (each toolkit's own) or "t2t" (t2t's: none in attention, in the feed-forward
    layers, none on the softmax): bench_multi30k.py's --peer_biases, an ablation."""
    return getattr(args, "peer_biases", "default")


class Peer:
    name = ""
    version = ""
    requirements = ()

    def __init__(self, args, data, run_dir, log, make_venv=True):
        """make_venv=False: the configuration and commands only (nothing installed)."""
        self.args, self.data, self.run_dir, self.log = args, data, run_dir, log
        self.venv = os.path.join(args.venv_dir, self.name)
        self.python = os.path.join(self.venv, "bin", "python")
        if make_venv:
            self.ensure_venv()

    def ensure_venv(self):
        """Create the venv and install `requirements` once (a stamp file lists them)."""
        stamp = os.path.join(self.venv, "t2t-bench-requirements.txt")
        wanted = "\n".join(self.requirements) + "\n"
        if os.path.exists(stamp) and open(stamp).read() == wanted:
            return
        self.log("%s: creating %s (%s)" % (self.name, self.venv, ", ".join(self.requirements)))
        if not os.path.exists(self.python):
            subprocess.run([self.args.peer_python, "-m", "venv", self.venv], check=True)
        result = subprocess.run([self.python, "-m", "pip", "install", "-q"] +
                                list(self.requirements), capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError("%s: pip install %s failed:\n%s" % (
                self.name, " ".join(self.requirements), result.stderr[-3000:]))
        with open(stamp, "w") as handle:
            handle.write(wanted)

    def bin(self, name):
        return os.path.join(self.venv, "bin", name)

    def write(self, name, text):
        path = os.path.join(self.run_dir, name)
        with open(path, "w") as handle:
            handle.write(textwrap.dedent(text).lstrip())
        return path

    def detokenize(self, lines):
        from t2t.core import registry
        encoder = registry.problem("translate_ende_multi30k").feature_encoders(
            self.data["data_dir"])["targets"]
        return [encoder.decode(tokens_to_ids(line)) for line in lines]

    def write_decodes(self, tokens_path, out_path):
        """The peer's subword-id lines in `tokens_path` as text in `out_path` (and returned)."""
        decodes = self.detokenize(open(tokens_path).read().split("\n")[:-1])
        with open(out_path, "w", encoding="utf-8") as handle:
            handle.write("".join(d + "\n" for d in decodes))
        return decodes

    def run(self, command, log_name, env=None):
        with open(os.path.join(self.run_dir, log_name), "w") as handle:
            result = subprocess.run(command, cwd=self.run_dir, stdout=handle,
                                    stderr=subprocess.STDOUT, env=env)
        if result.returncode != 0:
            text = open(os.path.join(self.run_dir, log_name), errors="replace").read()
            raise RuntimeError("%s: %s failed (exit %d):\n%s" % (
                self.name, os.path.basename(command[0]), result.returncode, text[-3000:]))


# ----------------------------------------------------------------------------- OpenNMT-tf
class OpenNMTTF(Peer):
    name = "opennmt_tf"
    version = "OpenNMT-tf 2.32.0 on TensorFlow 2.13.1 (CPU)"
    requirements = ("OpenNMT-tf==2.32.0", "tensorflow-cpu==2.13.1")

    def write_config(self):
        """model.py and config.yml in run_dir (the model shape, training and decoding)."""
        peer = self.data["peer_dir"]
        vocab = self.write("vocab.txt", "<blank>\n<s>\n</s>\n" +
                           open(os.path.join(peer, "vocab.txt")).read())
        self.model_py = self.write("model.py", """
            import opennmt
            import tensorflow as tf

            EMBEDDING_INIT = %r  # "default": Keras' glorot_uniform; "t2t": normal(0, 256^-0.5)
            BATCHING = %r  # "default": batch, then repeat; "t2t": shuffle, repeat, then batch

            if BATCHING == "t2t":
                from opennmt.data import dataset as dataset_util
                _training_pipeline = dataset_util.training_pipeline

                def training_pipeline(*args, shuffle_buffer_size=None, dataset_size=None,
                                      single_pass=False, **kwargs):
                    # Each pass is shuffled whole (as its shuffle buffer of 500,000 does for
                    # this data) and repeated before batching, so no pass ends in a flush of
                    # part-filled length buckets; the pipeline then neither shuffles nor repeats.
                    if dataset_size is None or single_pass:
                        raise ValueError("--peer_batching=t2t needs the dataset size and "
                                         "repeated training")
                    batch = _training_pipeline(*args, single_pass=True, **kwargs)
                    return lambda dataset: batch(dataset.shuffle(dataset_size).repeat())

                dataset_util.training_pipeline = training_pipeline


            class WordEmbedder(opennmt.inputters.WordEmbedder):
                def add_weight(self, name=None, *args, **kwargs):
                    if name == "embedding" and EMBEDDING_INIT == "t2t":
                        kwargs["initializer"] = tf.keras.initializers.RandomNormal(
                            stddev=256 ** -0.5)
                    return super().add_weight(name, *args, **kwargs)


            def model():
                return opennmt.models.Transformer(
                    source_inputter=WordEmbedder(embedding_size=256),
                    target_inputter=WordEmbedder(embedding_size=256),
                    num_layers=3, num_units=256, num_heads=4, ffn_inner_dim=1024,
                    dropout=0.2, attention_dropout=0.1, ffn_dropout=0.1,
                    share_embeddings=opennmt.models.EmbeddingsSharingLevel.ALL,
                    mha_bias=%r, output_layer_bias=%r)
            """ % ((embedding_init(self.args), batching(self.args)) + (
                (False, False) if biases(self.args) == "t2t" else (True, True))))
        self.config = self.write("config.yml", """
            model_dir: %(run)s/model
            data:
              train_features_file: %(peer)s/train.src
              train_labels_file: %(peer)s/train.tgt
              source_vocabulary: %(vocab)s
              target_vocabulary: %(vocab)s
            params:
              optimizer: Adam
              optimizer_params: {beta_1: 0.9, beta_2: 0.98, epsilon: 1.0e-9}
              learning_rate: %(learning_rate)s
              decay_type: NoamDecay
              decay_params: {model_dim: 256, warmup_steps: %(warmup)d}
              label_smoothing: 0.1
              beam_width: %(beam)d
              length_penalty: 0.6
              maximum_decoding_length: 200
            train:
              batch_size: 4096
              batch_type: tokens
              effective_batch_size: null
              maximum_features_length: 128
              maximum_labels_length: 128
              save_checkpoints_steps: %(every)d
              keep_checkpoint_max: 3
              save_summary_steps: %(log_every)d
              max_step: %(max_step)d
              average_last_checkpoints: 0
            infer:
              batch_size: 32
              length_bucket_width: 5
            """ % {"run": self.run_dir, "peer": peer, "vocab": vocab,
                   "beam": self.args.beam_size, "every": self.args.checkpoint_steps,
                   "log_every": self.args.log_steps,
                   "learning_rate": self.args.learning_rate, "warmup": self.args.warmup_steps,
                   "max_step": self.args.max_steps or 100000000})

    def train_command(self):
        self.write_config()
        command = [self.bin("onmt-main"), "--model", self.model_py, "--config", self.config,
                   "--seed", "1", "train"]
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1")
        return command, env, os.path.join(self.run_dir, "model"), self.find

    @staticmethod
    def find(model_dir):
        found = {}
        names = os.listdir(model_dir)
        for name in names:
            match = re.match(r"ckpt-(\d+)\.index$", name)
            if match:
                parts = [os.path.join(model_dir, n) for n in names
                         if n.startswith("ckpt-%s." % match.group(1))]
                if any(".data-" in p for p in parts):
                    found[int(match.group(1))] = sorted(parts)
        return found

    def main_command(self, kept_path, step, threads=0, override=None):
        """onmt-main with the model, config (then the YAML file `override`) and checkpoint."""
        if not hasattr(self, "config"):
            self.write_config()
        configs = [self.config] + ([override] if override else [])
        command = [self.bin("onmt-main"), "--model", self.model_py, "--config"] + configs + [
            "--checkpoint_path", os.path.join(kept_path, "ckpt-%d" % step)]
        if threads:
            command += ["--intra_op_parallelism_threads", str(threads),
                        "--inter_op_parallelism_threads", "1"]
        return command

    def infer_command(self, kept_path, step, source, output, beam_size, batch_size,
                      threads=0):
        """`onmt-main infer`: beam beam_size, length penalty 0.6 (GNMT's), batches of up to
        batch_size sentences drawn from source-length buckets 5 wide (its
        `length_bucket_width`, which restores the input order afterwards; without it
        batches follow the file's order and pad short sentences to long ones)."""
        override = self.write("infer_beam%d_batch%d.yml" % (beam_size, batch_size), """
            params:
              beam_width: %d
              length_penalty: 0.6
            infer:
              batch_size: %d
              length_bucket_width: 5
            """ % (beam_size, batch_size))
        return self.main_command(kept_path, step, threads, override) + [
            "infer", "--features_file", source, "--predictions_file", output]

    def ct2_export_command(self, kept_path, step, output_dir):
        """The checkpoint as a CTranslate2 model (float32), by OpenNMT-tf's exporter: its
        "ctranslate2" format runs the converter of the CTranslate2 in its venv (3.24, which
        OpenNMT-tf 2.32 pins below 4), the same code as `ct2-opennmt-tf-converter`."""
        return self.main_command(kept_path, step) + [
            "export", "--output_dir", output_dir, "--format", "ctranslate2"]

    def decode(self, kept_path, step, out_path, split="test"):
        raw = out_path + ".tokens"
        self.run(self.infer_command(kept_path, step, self.data["peer_%s_source" % split], raw,
                                    self.args.beam_size, 32),
                 os.path.basename(out_path) + ".log",
                 env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1"))
        return self.write_decodes(raw, out_path)

    def tokens_per_sec(self, log_path):
        text = open(log_path, errors="replace").read()
        # "Step = 10 ; steps/s = 0.09, tokens/s = 638 (302 source, 336 target) ; ..."
        return steady_rate([int(v) for v in re.findall(r"tokens/s = (\d+) \(", text)])

    loss_definition = ("label-smoothed cross-entropy per target token (targets: 0.9 on the "
                       "label, 0.1/(V-1) on the others), of the logged step alone")

    def loss_curve(self, log_path):
        """[(step, loss)] from "Step = 100 ; steps/s = ... ; Loss = 4.512345" lines."""
        text = open(log_path, errors="replace").read()
        return [(int(step), float(loss)) for step, loss in
                re.findall(r"Step = (\d+) ;.*; Loss = ([\d.]+)", text)]

    def loss_offset(self):
        """The entropy of its smoothed targets over its vocabulary (t2t's ids but PAD and
        EOS, plus <blank>, <s>, </s> and its <unk>): what its loss has on top of t2t's."""
        return smoothed_target_entropy(0.1, peer_vocabulary_size(self.data))

    def parameter_count(self, watcher):
        text = open(os.path.join(self.run_dir, "train.log"), errors="replace").read()
        match = re.search(r"Number of model parameters: (\d+)", text)
        return int(match.group(1)) if match else None


# ----------------------------------------------------------------------------- eole
class Eole(Peer):
    name = "eole"
    version = "eole 0.6.4 on torch 2.13.0 (CPU)"
    requirements = ("eole==0.6.4", "torch==2.13.0", "aiohttp")

    def train_command(self):
        peer = self.data["peer_dir"]
        vocab_size = peer_vocabulary_size(self.data) + 4  # room above its vocabulary
        self.config = self.write("config.yaml", """
            seed: 1
            report_every: %(log_every)d
            save_data: %(run)s/data
            overwrite: true
            src_vocab: %(peer)s/vocab.txt
            tgt_vocab: %(peer)s/vocab.txt
            share_vocab: true
            src_vocab_size: %(vocab_size)d
            tgt_vocab_size: %(vocab_size)d
            vocab_size_multiple: 1
            src_words_min_frequency: 0
            tgt_words_min_frequency: 0
            n_sample: 0
            data:
              corpus_1:
                path_src: %(peer)s/train.src
                path_tgt: %(peer)s/train.tgt
              valid:
                path_src: %(peer)s/val.src
                path_tgt: %(peer)s/val.tgt
            transforms: []
            model:
              architecture: transformer
              hidden_size: 256
              layers: 3
              heads: 4
              transformer_ff: 1024
              share_embeddings: true
              share_decoder_embeddings: true
              add_ffnbias: %(ffn_bias)s
              generator_bias: %(generator_bias)s
              embeddings:
                word_vec_size: 256
                position_encoding_type: SinusoidalInterleaved
            training:
              model_path: %(run)s/model
              train_steps: %(max_step)d
              valid_steps: 100000000
              save_checkpoint_steps: %(every)d
              keep_checkpoint: 3
              batch_type: tokens
              batch_size: 4096
              valid_batch_size: 2048
              num_workers: 0
              bucket_size: 32768
              bucket_size_init: 32768
              bucket_size_increment: 0
              accum_count: [1]
              optim: adam
              adam_beta1: 0.9
              adam_beta2: 0.98
              learning_rate: %(learning_rate)s
              decay_method: noam
              warmup_steps: %(warmup)d
              label_smoothing: 0.1
              normalization: tokens
              dropout: [0.2]
              attention_dropout: [0.1]
              log_attention_entropy: false
              param_init_method: xavier_uniform
              max_grad_norm: 0
              world_size: 1
              gpu_ranks: []
            """ % {"run": self.run_dir, "peer": peer, "vocab_size": vocab_size,
                   # eole's own: no feed-forward biases, one on the output layer; t2t's:
                   # the reverse (neither has them in attention).
                   "ffn_bias": str(biases(self.args) == "t2t").lower(),
                   "generator_bias": str(biases(self.args) != "t2t").lower(),
                   "every": self.args.checkpoint_steps, "log_every": self.args.log_steps,
                   "learning_rate": self.args.learning_rate, "warmup": self.args.warmup_steps,
                   "max_step": self.args.max_steps or 100000000})
        # eole_entry.py: the feed-forward block's inner dropout 0.1 (t2t's relu_dropout),
        # which eole's config cannot set apart from `dropout`.
        command = self.entry(relu_dropout=0.1, embedding_init_std=(
            256 ** -0.5 if embedding_init(self.args) == "t2t" else None)) + [
            "train", "-config", self.config]
        return command, dict(os.environ), os.path.join(self.run_dir, "model"), self.find

    def entry(self, threads=0, relu_dropout=None, embedding_init_std=None):
        """eole's command line through bench/eole_entry.py (threads, inner dropout, the
        embeddings' initialization)."""
        command = [self.python, os.path.join(HERE, "eole_entry.py"), "--threads=%d" % threads]
        if relu_dropout is not None:
            command.append("--relu_dropout=%s" % relu_dropout)
        if embedding_init_std is not None:
            command.append("--embedding_init_std=%r" % embedding_init_std)
        return command + ["--"]

    def predict_command(self, kept_path, step, source, output, beam_size, batch_size,
                        threads=0):
        """`eole predict` in float32 (given: a checkpoint trained in 16 bits would
        otherwise predict in them), GNMT's length penalty with alpha 0.6, batches of
        batch_size sentences (eole sorts them by length)."""
        return self.entry(threads) + [
            "predict", "-model_path", os.path.join(kept_path, "step_%d" % step),
            "-src", source, "-output", output, "-beam_size", str(beam_size),
            "-length_penalty", "wu", "-alpha", "0.6", "-batch_size", str(batch_size),
            "-batch_type", "sents", "-max_length", "200", "-compute_dtype", "fp32",
            "-seed", "1"]

    def ct2_export_command(self, kept_path, step, output_dir):
        """The checkpoint as a CTranslate2 model (float32) by CTranslate2's eole converter
        (ctranslate2.converters.eole_ct2, in the CTranslate2 4.8 that eole 0.6.4 requires)."""
        return [self.python, "-m", "ctranslate2.converters.eole_ct2", "--model_path",
                os.path.join(kept_path, "step_%d" % step), "--output_dir", output_dir]

    @staticmethod
    def find(model_dir):
        found = {}
        for name in os.listdir(model_dir):
            match = re.match(r"step_(\d+)$", name)
            path = os.path.join(model_dir, name)
            if match and os.path.exists(os.path.join(path, "config.json")) and \
                    os.path.exists(os.path.join(path, "vocab.json")):
                found[int(match.group(1))] = [path]
        return found

    def decode(self, kept_path, step, out_path, split="test"):
        raw = out_path + ".tokens"
        self.run(self.predict_command(kept_path, step, self.data["peer_%s_source" % split], raw,
                                      self.args.beam_size, 32),
                 os.path.basename(out_path) + ".log")
        return self.write_decodes(raw, out_path)

    def tokens_per_sec(self, log_path):
        text = open(log_path, errors="replace").read()
        pairs = re.findall(r"(\d+)/\s*(\d+) tok/s", text)
        return steady_rate([int(a) + int(b) for a, b in pairs])

    loss_definition = ("label-smoothed cross-entropy per target token (torch's: 0.9 + 0.1/V "
                       "on the label, 0.1/V on the others), over the steps since the previous "
                       "point; ln of the logged perplexity (2 decimals, finer than its xent)")

    def loss_curve(self, log_path):
        """[(step, loss)] from "Step  5/  500; acc: 9.1; ppl: 1234.56; xent: 7.12; ..." lines."""
        text = open(log_path, errors="replace").read()
        return [(int(step), round(math.log(float(ppl)), 4)) for step, ppl in
                re.findall(r"Step\s+(\d+)(?:/\s*\d+)?; acc:\s*[\d.]+; ppl:\s*([\d.]+);",
                           text)]

    def loss_offset(self):
        """The entropy of torch's smoothed targets over eole's vocabulary (t2t's ids but
        PAD and EOS, plus <unk>, <blank>, <s>, </s>, as its vocab.json lists)."""
        size = peer_vocabulary_size(self.data)
        for path in glob.glob(os.path.join(self.run_dir, "kept", "*", "*", "vocab.json")):
            size = len(json.load(open(path))["tgt"])
            break
        return smoothed_target_entropy(0.1, size, off_value=0.1 / size)

    def parameter_count(self, watcher):
        text = open(os.path.join(self.run_dir, "train.log"), errors="replace").read()
        match = re.search(r"[Nn]umber of parameters:\s*([\d,]+)", text) or \
            re.search(r"[Tt]otal params[^\d]*([\d,]+)", text)
        return int(match.group(1).replace(",", "")) if match else None


class Plotter(Peer):
    """matplotlib in a venv of its own (t2t's venv does not carry it): bench/multi30k_plot.py."""
    name = "plot"
    version = "matplotlib"
    requirements = ("matplotlib",)

    def plot(self, results_path, png_path):
        self.run([self.python, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            "multi30k_plot.py"), results_path, png_path],
                 "plot.log")


PEERS = {"opennmt_tf": OpenNMTTF, "eole": Eole}
