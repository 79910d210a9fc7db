"""The systems bench_inference.py times: one small class each (see `System`).

A system turns a trained model into something it decodes (once, untimed: `prepare`), then
decodes a file of test sentences in a process of its own (`command`) at a `Setting` (beam
size, sentences per batch) with 2 threads. Adding a row is a subclass with a name and those
two methods, registered in `SYSTEMS`; e.g. a CTranslate2 folder written by some converter:

    class MyCt2(System):
        name, engine, source_kind, output_kind = "my_ct2", "CTranslate2 4.8", "tokens", "ids"

        def prepare(self):
            self.model = convert_somehow(self.bench.args.t2t_model_dir)   # untimed
            return 500                                                     # the model's step

        def command(self, setting, source, output):
            return self.bench.ct2_worker(self.model, setting, source, output)

Sources (`source_kind`): "text" (the English sentences), "tokens" (the same sentences as
t2t subword ids, "t17 t4 t999", which the peers were trained on) or "ids" (those ids and
EOS, "17 4 999 1"). Outputs (`output_kind`):
"text" (detokenized sentences; `generated_tokens` reads the decoder's own count),
"tokens" (the peers' own decoders) or "ids" (bench/inference_worker.py).
"""
import glob
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import multi30k_peers  # noqa: E402  (bench/multi30k_peers.py)

WORKER = os.path.join(HERE, "inference_worker.py")
PROBLEM = "translate_ende_multi30k"
HPARAMS_SET = "transformer_multi30k"
ALPHA = 0.6  # the length penalty exponent of bench_multi30k (Wu et al. 2016's alpha)


def t2t_export_command(bin_dir, model_dir, export_dir, *flags, problem=PROBLEM,
                       hparams_set=HPARAMS_SET, data_dir=None, checkpoint_path=None):
    """The `t2t-exporter` command line every t2t export of the benches is made with:
    `model_dir`'s latest checkpoint (or `checkpoint_path`) into `export_dir`, plus `flags`
    (--decode_hparams=..., --export_format=ctranslate2, ...)."""
    command = [os.path.join(bin_dir, "t2t-exporter"), "--problem=" + problem,
               "--model=transformer", "--hparams_set=" + hparams_set,
               "--output_dir=" + model_dir, "--export_dir=" + export_dir]
    if data_dir:
        command.append("--data_dir=" + data_dir)
    if checkpoint_path:
        command.append("--checkpoint_path=" + checkpoint_path)
    return command + list(flags)


class System:
    name = ""
    engine = ""           # what decodes, for the table
    source_kind = "text"  # "text" or "tokens"
    output_kind = "text"  # "text", "tokens" or "ids"
    length_penalty = ""   # the formula this system scores finished beams with

    def __init__(self, bench):
        self.bench = bench
        self.step = None

    def prepare(self):
        """Make the model decodable (export, convert, link); return its training step."""
        raise NotImplementedError

    def command(self, setting, source, output):
        """(argv, env) of one process that decodes `source` into `output`."""
        raise NotImplementedError

    def generated_tokens(self, log_text, sentences):
        """The generated ids (EOS left out) as the decoder counted them, or None: count
        the output's ids."""
        return None


# ----------------------------------------------------------------------------- t2t
class T2tDecoder(System):
    """`t2t-decoder --decode_from_file` as a user runs it (TF path; batches longest first).

    `bin_dir`: the folder of the t2t-decoder to time (default --t2t_bin), so two t2t
    versions are two rows:

        class T2tDecoderBefore(T2tDecoder):
            name, bin_dir = "t2t_tf_before", "/work/old/.venv-3.13/bin"
    """
    name = "t2t_tf"
    engine = "t2t-decoder"
    length_penalty = "log P / ((5 + |y|) / 6)^0.6, |y| counting EOS, at every step"
    bin_dir = None

    def prepare(self):
        self.model_dir, self.step = self.bench.t2t_checkpoint()
        return self.step

    def command(self, setting, source, output):
        hp = "beam_size=%d,alpha=%s,batch_size=%d" % (setting.beam_size, ALPHA,
                                                    setting.batch_size)
        return [os.path.join(self.bin_dir or self.bench.args.t2t_bin, "t2t-decoder")] + \
            self.bench.t2t_flags(self.model_dir) + [
                "--checkpoint_path=%s" % os.path.join(self.model_dir,
                                                      "model.ckpt-%d" % self.step),
                "--decode_hparams=" + hp, "--decode_from_file=" + source,
                "--decode_to_file=" + output], self.bench.env(TF_CPP_MIN_LOG_LEVEL="2")

    def generated_tokens(self, log_text, sentences):
        """From the summary line "decode ... done: 1,000 sentences, 14,321 tokens, ...":
        its count is each decode's ids up to EOS plus one for the EOS, so less one per
        sentence it is the generated ids (re-encoding the detokenized text would give the
        vocabulary's own segmentation, not necessarily the model's)."""
        match = re.search(r"done: ([\d,]+) sentences, ([\d,]+) tokens", log_text)
        if not match:
            return None
        return int(match.group(2).replace(",", "")) - int(match.group(1).replace(",", ""))


class T2tSavedModel(System):
    """`t2t-exporter` (one SavedModel a setting's beam size), then its "serialized_example"
    signature called from Python (bench/inference_worker.py) on tf.Examples of the source
    ids: Multi30k's normalizing subword vocabulary cannot be encoded in the graph, so the
    export has no raw-string signature."""
    name = "t2t_savedmodel"
    engine = "tf.saved_model.load"
    source_kind = "ids"
    output_kind = "ids"
    length_penalty = T2tDecoder.length_penalty

    def prepare(self):
        model_dir, self.step = self.bench.t2t_checkpoint()
        self.exports = {}
        for beam_size in sorted({s.beam_size for s in self.bench.settings}):
            export_dir = os.path.join(self.bench.work_dir, "t2t_savedmodel_beam%d" % beam_size)
            source = self.bench.t2t_source()
            if not self.bench.prepared(export_dir, source):
                self.bench.export_t2t(model_dir, self.step, export_dir, source,
                                      "--decode_hparams=beam_size=%d,alpha=%s" % (beam_size,
                                                                                  ALPHA))
            found = sorted(glob.glob(os.path.join(export_dir, "[0-9]*", "saved_model.pb*")))
            self.exports[beam_size] = os.path.dirname(found[-1])
        return self.step

    def command(self, setting, source, output):
        return [sys.executable, WORKER, "--engine=savedmodel",
                "--model=" + self.exports[setting.beam_size]] + \
            worker_flags(setting, source, output, self.bench.args.threads), \
            self.bench.env(TF_CPP_MIN_LOG_LEVEL="2")


class T2tCt2(System):
    """`t2t-exporter --export_format=ctranslate2` (t2t's own converter), decoded by the same
    CTranslate2 4.8 worker as the peers' exports: any gap to them is the converter's. The
    export names each subword id by its number, so the source is the ids with EOS."""
    name = "t2t_ct2"
    engine = "CTranslate2 (float32)"
    source_kind = "ids"
    output_kind = "ids"
    quantization = "float32"
    converter = "t2t-exporter --export_format=ctranslate2"
    length_penalty = "CTranslate2's: log P / |y|^0.6, |y| without EOS, once finished"

    def prepare(self):
        model_dir, self.step = self.bench.t2t_checkpoint()
        self.model = os.path.join(self.bench.work_dir, self.name)
        source = self.bench.t2t_source()
        if not self.bench.prepared(self.model, source):
            self.bench.export_t2t(model_dir, self.step, self.model, source,
                                  "--export_format=ctranslate2",
                                  "--quantization=" + self.quantization)
        return self.step

    def command(self, setting, source, output):
        # Up to the source length + 100 ids, as t2t decodes (extra_length), not 200.
        command, env = self.bench.ct2_worker(self.model, setting, source, output,
                                             compute_type=self.quantization)
        return command + ["--extra_length=100"], env


class T2tCt2Int8(T2tCt2):
    name, engine, quantization = "t2t_ct2_int8", "CTranslate2 (int8)", "int8"
    converter = "t2t-exporter --export_format=ctranslate2 --quantization=int8"


def worker_flags(setting, source, output, threads):
    return ["--source=" + source, "--output=" + output, "--beam_size=%d" % setting.beam_size,
            "--batch_size=%d" % setting.batch_size, "--length_penalty=%s" % ALPHA,
            "--threads=%d" % threads]


# ----------------------------------------------------------------------------- peers
class PeerSystem(System):
    """A peer's checkpoint at the bench's step, from bench_multi30k's kept checkpoints."""
    peer = ""
    source_kind = "tokens"
    output_kind = "tokens"

    def prepare(self):
        self.kept_path, self.step = self.bench.peer_checkpoint(self.peer)
        self.peer_obj = self.bench.peer(self.peer)
        return self.step


class OpenNMTTFInfer(PeerSystem):
    """`onmt-main infer`, its own decoder (TensorFlow 2.13)."""
    name = peer = "opennmt_tf"
    engine = "onmt-main infer"
    length_penalty = "log P / ((5 + |y|) / 6)^0.6, |y| counting EOS, at every step"

    def command(self, setting, source, output):
        return self.peer_obj.infer_command(self.kept_path, self.step, source, output,
                                           setting.beam_size, setting.batch_size,
                                           self.bench.args.threads), self.bench.env()


class EolePredict(PeerSystem):
    """`eole predict`, its own decoder (PyTorch, fp32)."""
    name = peer = "eole"
    engine = "eole predict"
    length_penalty = "eole's \"wu\": log P / ((5 + |y|) / 6)^0.6, at every step"

    def command(self, setting, source, output):
        return self.peer_obj.predict_command(self.kept_path, self.step, source, output,
                                             setting.beam_size, setting.batch_size,
                                             self.bench.args.threads), self.bench.env()


class PeerCt2(PeerSystem):
    """A peer's own CTranslate2 export, decoded by CTranslate2 4.8 (inference_worker.py)."""
    output_kind = "ids"
    engine = "CTranslate2 (float32)"
    length_penalty = "CTranslate2's: log P / |y|^0.6, |y| without EOS, once finished"

    def prepare(self):
        step = super().prepare()
        self.model = os.path.join(self.bench.work_dir, self.name)
        source = "%s written %d" % (os.path.realpath(self.kept_path),
                                    os.path.getmtime(self.kept_path))
        if not self.bench.prepared(self.model, source):
            tmp = self.model + ".tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            self.bench.run_once(self.peer_obj.ct2_export_command(self.kept_path, step, tmp),
                                self.model + ".log", self.bench.env())
            self.bench.mark_prepared(tmp, source)
            os.replace(tmp, self.model)
        return step

    def command(self, setting, source, output):
        return self.bench.ct2_worker(self.model, setting, source, output)


class OpenNMTTFCt2(PeerCt2):
    name, peer = "opennmt_tf_ct2", "opennmt_tf"
    converter = "onmt-main export --format ctranslate2 (CTranslate2 3.24's OpenNMTTFConverter)"


class EoleCt2(PeerCt2):
    name, peer = "eole_ct2", "eole"
    converter = "CTranslate2 4.8's eole converter (ctranslate2.converters.eole_ct2)"


SYSTEMS = {cls.name: cls for cls in (T2tDecoder, T2tSavedModel, T2tCt2, T2tCt2Int8,
                                     OpenNMTTFInfer, EolePredict, OpenNMTTFCt2, EoleCt2)}


def git_commit(path):
    result = subprocess.run(["git", "-C", path, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True)
    return result.stdout.strip() or None


def checkpoint_steps(model_dir, pattern=r"model\.ckpt-(\d+)\.index$"):
    return sorted(int(m.group(1)) for m in (re.match(pattern, n) for n in os.listdir(model_dir))
                  if m)

