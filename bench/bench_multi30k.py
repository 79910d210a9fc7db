"""Multi30k en->de at equal wall-clock budgets: t2t vs OpenNMT-tf 2.32 vs eole 0.6.4.

Every system trains the same model shape (3+3 layers, d=256, filter 1024, 4 heads, one
embedding matrix shared by source, target and softmax, label smoothing 0.1, Adam beta2
0.98, batches of 4,096 tokens, the Noam schedule with warmup 600 and scale 1.5) on the same
data with the same vocabulary: t2t-datagen's 8k subwords of `translate_ende_multi30k`,
handed to the peers as one token per subword id, so all three see the same segmentation.
Dropout is the same in all three: 0.2 on the embeddings (after adding the positions) and
on every sub-layer's output, 0.1 on the attention weights and 0.1 after the feed-forward
ReLU. Training starts at the launch of each trainer and runs for the largest budget (or to
`--max_steps`); a watcher keeps (hard-links) each checkpoint the moment it appears, and
for every budget the last checkpoint written before it is decoded: test_2016_flickr, beam
4, length penalty alpha 0.6, ids turned back into text by the t2t vocabulary
(detokenized), and scored by sacrebleu with one signature for all. Training tokens/s
(non-padding source + target tokens, each toolkit's own count from its log), the peak
memory (resident set of the trainer's whole process tree) and each system's training loss
curve (its log's loss every `--log_steps` steps) are reported too.

Settings checked in the peers' installed sources, and set to match t2t:
- OpenNMT-tf 2.32: token batches count max(source, target) length padded to the length
  bucket (as t2t's), the loss is averaged over tokens (`average_loss_in_time` is forced on
  for token batches), no gradient accumulation (`effective_batch_size: null`); its Noam
  schedule is evaluated at step + 1.
- eole 0.6.4: `normalization: tokens` (its default, `sents`, divides the summed loss by
  the sentences of the batch); `log_attention_entropy: false` (on by default: attention
  entropies computed every step, for the log); its single `dropout` also drives the
  feed-forward block's inner dropout, which bench/eole_entry.py sets to 0.1 (the residual
  and embedding dropouts keep 0.2, as t2t's and OpenNMT-tf's); `eole predict` is given
  `-compute_dtype fp32` (without it 0.6.4 takes the checkpoint's training dtype, fp32
  here, so earlier decodes were fp32 as well).

Differences left as each toolkit's default (not misconfigurations; they are part of what
is compared):
- Embedding initialization: t2t's symbol modality draws normal(0, d^-0.5), std 0.0625;
  OpenNMT-tf's word embeddings are Keras' glorot_uniform over 8,080 x 256 (std 0.0155)
  and eole's weights, embeddings included, xavier_uniform (`param_init_method`, std
  0.0155; its own default is uniform +-0.1). With the sqrt(d) input scaling and the
  shared softmax, the peers start with ~4x smaller inputs and logits than t2t.
- Layers: all three normalize before each sub-layer (pre-norm: t2t's "n"/"da",
  OpenNMT-tf's `pre_norm=True`, eole's default). Biases: t2t has none in attention, has
  them in the feed-forward layers and none on the softmax; OpenNMT-tf has them in attention,
  feed-forward and the output layer; eole in neither attention nor feed-forward
  (`add_qkvbias`, `add_ffnbias` false) but on the output layer. Layer-norm epsilon: t2t
  1e-6, OpenNMT-tf 1e-3 (Keras'), eole 1e-5.
- The logged loss: t2t's is the label-smoothed cross-entropy minus the entropy of the
  smoothed targets (0 at best), averaged over the steps since the last line; OpenNMT-tf's
  is the smoothed cross-entropy of the logged step alone; eole's that of the steps since its
  last report. The results' curves hold [step, loss as logged, loss - offset], the offset
  being that entropy for the peer's vocabulary and smoothing formula (1.22-1.23 nats), so
  the last column is comparable across systems.

The peers run from their own virtualenvs, created here on first use (Python 3.11 via
`--peer_python`): OpenNMT-tf 2.32 needs TensorFlow <= 2.13, eole 0.6.4 runs on torch 2.13
(CPU). t2t never imports them.

    python bench/bench_multi30k.py                       # budgets 10 and 20 minutes
    python bench/bench_multi30k.py --budgets_minutes=1 --systems=t2t,eole \\
        --out= --plot=                                   # a smoke run, nothing written
    python bench/bench_multi30k.py --systems=opennmt_tf,eole --max_steps=500 \\
        --budgets_minutes=120 --out= --plot=             # the 500-step models of
                                                         # bench_inference.py
    # writes bench/results/multi30k.json and bench/results/multi30k.png

The same learning-rate sweep for every system (chosen on val) and the ablations are
bench/multi30k_sweep.py; they write into the same JSON, under "sweep". Tokens/s set side by
side (the systems trained in turn, paired round by round) is bench/multi30k_speed.py.
"""
import argparse
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # this process only scores and converts
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import multi30k_peers  # noqa: E402  (bench/multi30k_peers.py)

PROBLEM = "translate_ende_multi30k"
HPARAMS_SET = "transformer_multi30k"
SYSTEMS = ("t2t", "opennmt_tf", "eole")
BIN = os.path.dirname(sys.executable)


def log(message):
    print("[bench_multi30k %s] %s" % (time.strftime("%H:%M:%S"), message), flush=True)


def default_multi30k_dir():
    for path in (os.path.join(REPO, "..", "shared", "data", "multi30k"),
                 "/work/shared/data/multi30k"):
        if os.path.isfile(os.path.join(path, "train.en.gz")):
            return os.path.abspath(path)
    return ""


# ----------------------------------------------------------------------------- data
def prepare_data(args):
    """t2t-datagen, then the same sentences as subword-id tokens for the peers."""
    data_dir = os.path.join(args.work_dir, "t2t_data")
    tmp_dir = args.multi30k_dir or os.path.join(args.work_dir, "download")
    vocab_name = "vocab.%s.8192.subwords" % PROBLEM
    if not os.path.exists(os.path.join(data_dir, "%s.test_2016_flickr.de" % PROBLEM)):
        log("t2t-datagen %s (tmp_dir %s)" % (PROBLEM, tmp_dir))
        run_checked([os.path.join(BIN, "t2t-datagen"), "--problem=" + PROBLEM,
                     "--data_dir=" + data_dir, "--tmp_dir=" + tmp_dir, "--random_seed=1"])
    peer_dir = os.path.join(args.work_dir, "peer_data")
    done = os.path.join(peer_dir, "DONE")
    if not os.path.exists(done):
        from t2t.core import registry
        from t2t.problems import problem as problem_lib
        from t2t.problems import translate_multi30k
        problem = registry.problem(PROBLEM)
        encoder = problem.feature_encoders(data_dir)["inputs"]
        os.makedirs(peer_dir, exist_ok=True)
        for split, name in ((problem_lib.DatasetSplit.TRAIN, "train"),
                            (problem_lib.DatasetSplit.EVAL, "val"),
                            (problem_lib.DatasetSplit.TEST, "test")):
            paths = problem.split_files(tmp_dir, split)
            with open(os.path.join(peer_dir, name + ".src"), "w") as src, \
                    open(os.path.join(peer_dir, name + ".tgt"), "w") as tgt:
                for source, target in translate_multi30k.parallel_sentences(*paths):
                    src.write(multi30k_peers.ids_to_tokens(encoder.encode(source)) + "\n")
                    tgt.write(multi30k_peers.ids_to_tokens(encoder.encode(target)) + "\n")
        with open(os.path.join(peer_dir, "vocab.txt"), "w") as handle:
            for token_id in range(2, encoder.vocab_size):  # 0 (PAD) and 1 (EOS) are t2t's
                handle.write(multi30k_peers.ids_to_tokens([token_id]) + "\n")
        open(done, "w").close()
    if args.peer_source_eos:
        peer_dir = with_source_eos(peer_dir, os.path.join(args.work_dir, "peer_data_source_eos"))
    val_source, val_reference = (os.path.join(peer_dir, "val." + lang) for lang in ("en", "de"))
    if not os.path.exists(val_reference):  # the text of val, for t2t-decoder and scoring
        from t2t.core import registry
        from t2t.problems import problem as problem_lib
        from t2t.problems import translate_multi30k
        paths = registry.problem(PROBLEM).split_files(tmp_dir, problem_lib.DatasetSplit.EVAL)
        pairs = list(translate_multi30k.parallel_sentences(*paths))
        for path, side in ((val_source, 0), (val_reference, 1)):
            with open(path + ".tmp", "w", encoding="utf-8") as handle:
                handle.write("".join(pair[side] + "\n" for pair in pairs))
            os.replace(path + ".tmp", path)
    data = {"data_dir": data_dir, "peer_dir": peer_dir, "vocab": vocab_name,
            "test_source": os.path.join(data_dir, "%s.test_2016_flickr.en" % PROBLEM),
            "test_reference": os.path.join(data_dir, "%s.test_2016_flickr.de" % PROBLEM),
            "peer_test_source": os.path.join(peer_dir, "test.src"),
            "val_source": val_source, "val_reference": val_reference,
            "peer_val_source": os.path.join(peer_dir, "val.src")}
    if args.test_lines:  # a smoke run: the first N sentences, in files of their own
        for key in ("test_source", "test_reference", "peer_test_source",
                    "val_source", "val_reference", "peer_val_source"):
            head = os.path.join(args.work_dir, "head%d.%s" % (args.test_lines, key))
            with open(data[key], encoding="utf-8") as source, \
                    open(head, "w", encoding="utf-8") as out:
                out.write("".join(line for _, line in zip(range(args.test_lines), source)))
            data[key] = head
    return data


def with_source_eos(peer_dir, out_dir):
    """A copy of the peers' data whose source lines end with t2t's EOS id, as t2t's inputs do
    (token "t1", added to vocab.txt): the --peer_source_eos ablation. Returns `out_dir`.

        with_source_eos("peer_data", "peer_data_source_eos")
        # train.src "t17 t4" -> "t17 t4 t1"; *.tgt as they were; vocab.txt gains "t1"
    """
    from t2t.core import atomic_files
    done = os.path.join(out_dir, "DONE")
    if os.path.exists(done):
        return out_dir
    os.makedirs(out_dir, exist_ok=True)
    eos = multi30k_peers.ids_to_tokens([1])
    for name in sorted(os.listdir(peer_dir)):
        source, target = os.path.join(peer_dir, name), os.path.join(out_dir, name)
        if name.endswith(".src"):
            with open(source, encoding="utf-8") as lines, \
                    atomic_files.atomic_write(target, "w") as out:
                out.writelines(line.rstrip("\n") + " " + eos + "\n" for line in lines)
        elif name == "vocab.txt":
            with open(source, encoding="utf-8") as vocab, \
                    atomic_files.atomic_write(target, "w") as out:
                out.write(vocab.read() + eos + "\n")
        elif name != "DONE" and os.path.isfile(source):
            shutil.copyfile(source, target)
    open(done, "w").close()
    return out_dir


def run_checked(command, env=None, cwd=None, log_path=None):
    handle = open(log_path, "w") if log_path else subprocess.DEVNULL
    try:
        result = subprocess.run(command, env=env, cwd=cwd, stdout=handle,
                                stderr=subprocess.STDOUT if log_path else subprocess.PIPE)
    finally:
        if log_path:
            handle.close()
    if result.returncode != 0:
        tail = open(log_path).read()[-3000:] if log_path else result.stderr.decode()[-3000:]
        raise RuntimeError("%s failed (exit %d):\n%s" % (command[0], result.returncode, tail))


# ----------------------------------------------------------------------------- training
def process_tree_rss(pid):
    """Resident bytes of `pid` and all its descendants (from /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError):
            continue
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        stack.extend(children.get(current, []))
        try:
            with open("/proc/%d/status" % current) as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


class CheckpointWatcher:
    """Hard-links every new checkpoint of a run into `keep_dir`, stamped with its minute.

    `find(model_dir)` -> {step: [paths]} of the complete checkpoints there (per system).
    Only the checkpoints a budget can pick stay kept: one superseded before the next budget
    is dropped, so a 20-minute run holds a few checkpoints on disk, not hundreds.
    """

    def __init__(self, model_dir, keep_dir, find, start, budgets):
        self.model_dir, self.keep_dir, self.find, self.start = model_dir, keep_dir, find, start
        self.budgets = sorted(budgets)
        self.kept = {}  # step -> (minutes since launch, kept folder)
        self.seen = set()
        self.newest = None
        os.makedirs(keep_dir, exist_ok=True)

    def poll(self):
        if not os.path.isdir(self.model_dir):
            return
        for step, paths in sorted(self.find(self.model_dir).items()):
            if step in self.seen:
                continue
            self.seen.add(step)
            minutes = (time.monotonic() - self.start) / 60.0
            target = os.path.join(self.keep_dir, "step_%d" % step)
            try:
                for path in paths:
                    link_tree(path, os.path.join(target, os.path.basename(path)))
            except OSError:
                shutil.rmtree(target, ignore_errors=True)
                continue  # rotated away while we looked: the next one will do
            self.kept[step] = (minutes, target)
            previous, self.newest = self.newest, step
            if previous is not None and not any(
                    self.kept[previous][0] <= b < minutes for b in self.budgets):
                shutil.rmtree(self.kept.pop(previous)[1], ignore_errors=True)

    def last_before(self, minutes):
        steps = [(m, step, path) for step, (m, path) in self.kept.items() if m <= minutes]
        return max(steps) if steps else None


def link_tree(source, target):
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
        for name in os.listdir(source):
            link_tree(os.path.join(source, name), os.path.join(target, name))
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        source = os.path.realpath(source)
        try:
            os.link(source, target)
        except OSError:
            shutil.copy2(source, target)


def train_for(system, command, env, run_dir, model_dir, find, budgets):
    """Run `command` for the largest budget (minutes of wall clock) or until it ends by
    itself (--max_steps); kept checkpoints, log, peak RSS."""
    max_minutes = max(budgets)
    log_path = os.path.join(run_dir, "train.log")
    watcher_start = time.monotonic()
    with open(log_path, "w") as handle:
        process = subprocess.Popen(command, env=env, cwd=run_dir, stdout=handle,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    watcher = CheckpointWatcher(model_dir, os.path.join(run_dir, "kept"), find, watcher_start,
                                budgets)
    peak, deadline, last_report = 0, watcher_start + max_minutes * 60.0, watcher_start
    try:
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(1.0)
            peak = max(peak, process_tree_rss(process.pid))
            watcher.poll()
            if time.monotonic() - last_report >= 60:
                last_report = time.monotonic()
                log("%s: %.1f of %.1f min, %d checkpoints kept, peak %.0f MB" % (
                    system, (last_report - watcher_start) / 60, max_minutes,
                    len(watcher.kept), peak / 1e6))
    except BaseException:  # interrupted (Ctrl-C, SIGTERM): the trainer goes too
        stop_process_group(process)
        raise
    exited = process.poll()
    watcher.poll()  # the checkpoint written last, at --max_steps, before the trainer exited
    if exited is None:
        stop_process_group(process)
    elif exited != 0:
        raise RuntimeError("%s training exited with %d before the budget; see %s:\n%s" % (
            system, exited, log_path, open(log_path, errors="replace").read()[-3000:]))
    return watcher, peak, log_path


def stop_process_group(process):
    """SIGTERM to the trainer's process group (it runs in a session of its own), SIGKILL
    after a minute."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


# ----------------------------------------------------------------------------- t2t
def t2t_find(model_dir):
    """{step: [files]} of the complete Estimator checkpoints (index and data written)."""
    found, names = {}, os.listdir(model_dir)
    for name in names:
        match = re.match(r"model\.ckpt-(\d+)\.index$", name)
        if match:
            parts = [os.path.join(model_dir, n) for n in names
                     if n.startswith("model.ckpt-%s." % match.group(1))]
            if any(".data-" in p for p in parts):
                found[int(match.group(1))] = sorted(parts)
    return found


T2T_ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")


def t2t_flags(args, data, output_dir):
    """The flags t2t-trainer and t2t-decoder share: problem, model, set, folders."""
    flags = ["--problem=" + PROBLEM, "--model=transformer",
             "--hparams_set=" + args.t2t_hparams_set,
             "--data_dir=" + data["data_dir"], "--output_dir=" + output_dir]
    if args.t2t_hparams_set != HPARAMS_SET:  # an ablation's set
        flags.append("--t2t_usr_dir=" + os.path.join(HERE, "multi30k_ablations"))
    return flags


def t2t_train_command(args, data, output_dir, train_steps, checkpoint_steps):
    return [os.path.join(BIN, "t2t-trainer")] + t2t_flags(args, data, output_dir) + [
        "--hparams=learning_rate_constant=%s,learning_rate_warmup_steps=%d" % (
            args.learning_rate, args.warmup_steps),
        "--schedule=train", "--train_steps=%d" % train_steps,
        "--random_seed=1", "--local_eval_frequency=%d" % checkpoint_steps,
        "--keep_checkpoint_max=3", "--log_step_count_steps=%d" % args.log_steps]


def t2t_decode(args, data, output_dir, checkpoint, out_path, split="test"):
    """Decode `split`'s source with `checkpoint` (a model.ckpt-N prefix), beam
    --beam_size, alpha 0.6; the decoded lines."""
    run_checked([os.path.join(BIN, "t2t-decoder")] + t2t_flags(args, data, output_dir) + [
        "--checkpoint_path=" + checkpoint,
        "--decode_hparams=beam_size=%d,alpha=0.6,batch_size=32" % args.beam_size,
        "--decode_from_file=" + data[split + "_source"], "--decode_to_file=" + out_path],
        env=T2T_ENV, log_path=out_path + ".log")
    return [line for line in open(out_path, encoding="utf-8").read().split("\n")][:-1]


def run_t2t(args, data, run_dir):
    output_dir = os.path.join(run_dir, "train")
    command = t2t_train_command(args, data, output_dir, args.max_steps or 100000000,
                                args.checkpoint_steps)
    watcher, peak, log_path = train_for("t2t", command, T2T_ENV, run_dir, output_dir,
                                        t2t_find, args.budgets)

    def decode(kept_path, step, out_path, split="test"):
        return t2t_decode(args, data, output_dir,
                          os.path.join(kept_path, "model.ckpt-%d" % step), out_path, split)

    text = open(log_path, errors="replace").read()
    rates = [float(v.replace(",", "")) for v in re.findall(r"([\d,]+) tokens/s", text)]
    params = t2t_parameter_count(text)
    return watcher, peak, multi30k_peers.steady_rate(rates), params, decode, t2t_loss_curve(text)


T2T_LOSS = ("label-smoothed cross-entropy per target token minus the entropy of the smoothed "
            "targets (0 at best), mean of the steps since the previous point")


def t2t_loss_curve(log_text):
    """[(step, loss)] from the trainer's step lines:

        t2t_loss_curve("train transformer: step 20, loss 5.1234 (mean of 10 steps), ...")
        # [(20, 5.1234)]
    """
    return [(int(step), float(loss)) for step, loss in
            re.findall(r"step (\d+), loss ([\d.]+) \(mean of \d+ steps\)", log_text)]


def t2t_parameter_count(log_text):
    """The trainer's own count: "Trainable Variables Total size: 7597824"."""
    match = re.search(r"Trainable Variables Total size: (\d+)", log_text)
    return int(match.group(1)) if match else None


# ----------------------------------------------------------------------------- driver
def tf_version():
    import tensorflow as tf
    return tf.__version__


def protobuf_implementation():
    """"upb" (compiled) or "python": pure-Python protobuf makes TF 1.x-style checkpoints and
    graph writes several times slower, so a bench on it is no bench (see docs/install.md)."""
    from google.protobuf.internal import api_implementation
    return api_implementation.Type()


def score(decodes, references):
    from t2t.evaluation import bleu_hook
    return bleu_hook.sacrebleu_corpus_score(decodes, references)


def train_system(system, args, data, run_dir):
    """Train `system` in a fresh `run_dir` for the largest budget; what `decode_budget` and
    the results need: the watcher (kept checkpoints), decode(kept, step, out, split), the
    loss curve, throughput, peak memory, parameters and version."""
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    log("%s: training for %s min (learning rate %s, warmup %d)" % (
        system, max(args.budgets), args.learning_rate, args.warmup_steps))
    if system == "t2t":
        watcher, peak, rate, params, decode, curve = run_t2t(args, data, run_dir)
        loss = {"definition": T2T_LOSS, "offset": 0.0}
        commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        version = "t2t %s on TensorFlow %s (CPU)" % (commit or "(this repository)",
                                                     tf_version())
    else:
        peer = multi30k_peers.PEERS[system](args, data, run_dir, log)
        command, env, model_dir, find = peer.train_command()
        watcher, peak, log_path = train_for(system, command, env, run_dir, model_dir, find,
                                            args.budgets)
        rate, params = peer.tokens_per_sec(log_path), peer.parameter_count(watcher)
        decode, version = peer.decode, peer.version
        curve = peer.loss_curve(log_path)
        loss = {"definition": peer.loss_definition, "offset": round(peer.loss_offset(), 4)}
    # [step, loss as logged, loss - offset]: the last is comparable across systems (each
    # toolkit's loss less the constant its label smoothing adds; see the docstring).
    loss["curve"] = [[step, value, round(value - loss["offset"], 4)] for step, value in curve]
    log("%s: loss %s" % (system, ", ".join("%d: %.3f" % (point[0], point[2])
                                          for point in loss["curve"][::max(1, len(curve) // 8)])))
    return {"system": system, "version": version, "parameters": params,
            "train_tokens_per_sec": round(rate) if rate else None,
            "peak_memory_mb": round(peak / 1e6), "steps_trained": watcher.newest,
            "loss": loss, "watcher": watcher, "decode": decode, "run_dir": run_dir}


def decode_budget(trained, minutes, data, split="test"):
    """Decode `split` (test or val) with the last checkpoint written within `minutes` and
    score it: {"minutes", "bleu", "step", ...}; bleu and step None when there is none."""
    system, run_dir = trained["system"], trained["run_dir"]
    chosen = trained["watcher"].last_before(minutes)
    if chosen is None:
        log("%s: no checkpoint within %s min" % (system, minutes))
        return {"minutes": minutes, "bleu": None, "step": None}
    at_minutes, step, kept_path = chosen
    name = "test_2016_flickr" if split == "test" else split
    out_path = os.path.join(run_dir, "%s.%smin.de" % (name, minutes))
    references = open(data[split + "_reference"], encoding="utf-8").read().split("\n")[:-1]
    start = time.monotonic()
    decodes = trained["decode"](kept_path, step, out_path, split)
    bleu, signature = score(decodes, references)
    log("%s: %s min -> step %d (written at %.1f min), %s BLEU %.2f, decode %.0f s" % (
        system, minutes, step, at_minutes, split, bleu, time.monotonic() - start))
    return {"minutes": minutes, "bleu": round(bleu, 2), "step": step,
            "checkpoint_minutes": round(at_minutes, 2),
            "decode_seconds": round(time.monotonic() - start, 1), "signature": signature}


def public(trained):
    """The JSON part of train_system's result."""
    return {k: v for k, v in trained.items() if k not in ("watcher", "decode", "run_dir")}


def t2t_stack():
    """"Python 3.13, TensorFlow 2.21.0, native backend": what a t2t row ran on."""
    from t2t.core import backend_choice
    return "Python %s, TensorFlow %s, %s backend" % (
        ".".join(platform.python_version_tuple()[:2]), tf_version(),
        backend_choice.resolve_backend("auto"))


def variant_of(system, args):
    """What an ablation changed for `system`: "default" for each toolkit's own configuration,
    else e.g. "peer_embedding_init=t2t" or "t2t_hparams_set=transformer_multi30k_glorot_..."."""
    if system == "t2t":
        return ("default" if args.t2t_hparams_set == HPARAMS_SET
                else "t2t_hparams_set=" + args.t2t_hparams_set)
    changes = ["%s=%s" % (name, value) for name, value in (
        ("peer_embedding_init", multi30k_peers.embedding_init(args)),
        ("peer_biases", multi30k_peers.biases(args)),
        ("peer_batching", multi30k_peers.batching(args))) if value != "default"]
    if args.peer_source_eos:
        changes.append("peer_source_eos=true")
    return ",".join(changes) or "default"


def row_key(row):
    """A row of "systems" replaces the stored row of the same system, stack, variant and
    tag: t2t has one row per stack (Python, TensorFlow, backend), a peer one per version."""
    return (row["system"], row.get("stack") or row.get("version"),
            row.get("variant", "default"), row.get("tag", ""))


def merge_rows(stored, new):
    """`stored` rows less those `new` replaces, then `new`; in SYSTEMS order.

        merge_rows([{"system": "eole", "stack": "a"}, {"system": "t2t", "stack": "b"}],
                   [{"system": "t2t", "stack": "b", "budgets": [...]}])
        # [{"system": "t2t", "stack": "b", "budgets": [...]}, {"system": "eole", ...}]
    """
    replaced = {row_key(row) for row in new}
    rows = [row for row in stored if row_key(row) not in replaced] + list(new)
    return sorted(rows, key=lambda row: (SYSTEMS.index(row["system"])
                                         if row["system"] in SYSTEMS else len(SYSTEMS)))


def bench_system(system, args, data):
    load = os.getloadavg()[0]
    trained = train_system(system, args, data, os.path.join(args.work_dir, "runs", system))
    result = public(trained)
    result["budgets"] = [decode_budget(trained, minutes, data) for minutes in args.budgets]
    result.update({"stack": t2t_stack() if system == "t2t" else result["version"],
                   "learning_rate": args.learning_rate, "warmup_steps": args.warmup_steps,
                   "date": time.strftime("%Y-%m-%d"), "load_average_at_start": round(load, 2),
                   "load_average_at_end": round(os.getloadavg()[0], 2)})
    variant = variant_of(system, args)
    if variant != "default":
        result["variant"] = variant
    if args.tag:
        result["tag"] = args.tag
    if args.max_steps:  # a row of its own run's setting, not the file's
        result["max_steps"] = args.max_steps
    return result


def plot(args, results, path):
    """The PNG of BLEU vs minutes, drawn by bench/multi30k_plot.py in a matplotlib venv."""
    results_path = os.path.join(args.work_dir, "results.json")
    with open(results_path, "w") as handle:
        json.dump(results, handle)
    plotter = multi30k_peers.Plotter(args, {}, args.work_dir, log)
    tmp = path + ".tmp.png"
    plotter.plot(results_path, tmp)
    os.replace(tmp, path)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budgets_minutes", default="10,20",
                        help="comma-separated training budgets in minutes")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--work_dir", default="/tmp/t2t_bench_multi30k")
    parser.add_argument("--multi30k_dir", default=default_multi30k_dir(),
                        help="folder with the six .gz files; empty: download them")
    parser.add_argument("--venv_dir", default=os.path.expanduser("~/.cache/t2t/bench_venvs"))
    parser.add_argument("--peer_python", default="python3.11",
                        help="Python 3.11 for the peer venvs (e.g. a pyenv shim)")
    parser.add_argument("--checkpoint_steps", type=int, default=50)
    parser.add_argument("--max_steps", type=int, default=0,
                        help="training ends at this step or at the largest budget, whichever "
                             "comes first (0: the budget alone); a multiple of "
                             "--checkpoint_steps, so the last step is kept")
    parser.add_argument("--log_steps", type=int, default=10,
                        help="steps between the loss and throughput lines of every trainer")
    parser.add_argument("--learning_rate", type=float, default=None,
                        help="the Noam schedule's constant for every system (default: %s's "
                             "learning_rate_constant)" % HPARAMS_SET)
    parser.add_argument("--warmup_steps", type=int, default=None,
                        help="the Noam schedule's warmup for every system (default: %s's "
                             "learning_rate_warmup_steps)" % HPARAMS_SET)
    parser.add_argument("--peer_embedding_init", choices=("default", "t2t"), default="default",
                        help="an ablation: t2t gives the peers' shared embedding matrix t2t's "
                             "initialization, normal(0, d^-0.5), instead of their own "
                             "(std 0.0155 at 8,080 x 256)")
    parser.add_argument("--peer_biases", choices=("default", "t2t"), default="default",
                        help="an ablation: t2t gives the peers t2t's biases (none in attention, "
                             "in the feed-forward layers, none on the output layer) instead of "
                             "their own (OpenNMT-tf: all three; eole: the output layer only)")
    parser.add_argument("--peer_batching", choices=("default", "t2t"), default="default",
                        help="an ablation for OpenNMT-tf: t2t shuffles and repeats its training "
                             "data before batching, as t2t does, instead of batching each pass "
                             "and flushing its part-filled length buckets at the pass's end")
    parser.add_argument("--peer_source_eos", action="store_true",
                        help="an ablation: the peers' source sentences end with t2t's EOS id "
                             "(token t1, added to their vocabulary), as t2t's inputs do; "
                             "without it they have no end marker")
    parser.add_argument("--t2t_hparams_set", default=HPARAMS_SET,
                        help="the hparams set t2t trains: %s, or an ablation's set of "
                             "bench/multi30k_ablations (e.g. "
                             "transformer_multi30k_glorot_embeddings)" % HPARAMS_SET)
    parser.add_argument("--tag", default="",
                        help="a name stored with the rows of this run and part of their key, "
                             "so they sit beside the untagged ones: e.g. step200, a --max_steps "
                             "pair of an ablation; tagged rows are not drawn (tokens/s side by "
                             "side: bench/multi30k_speed.py)")
    parser.add_argument("--beam_size", type=int, default=4)
    parser.add_argument("--test_lines", type=int, default=0,
                        help="decode only the first N test sentences (smoke runs); 0: all")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "multi30k.json"),
                        help="results JSON; empty: none")
    parser.add_argument("--plot", default=os.path.join(HERE, "results", "multi30k.png"),
                        help="PNG of BLEU vs minutes; empty: none")
    parser.add_argument("--replot", action="store_true",
                        help="only draw --plot from the results in --out (nothing trained)")
    args = parser.parse_args(argv)
    try:
        args.budgets = sorted(float(v) for v in args.budgets_minutes.split(",") if v.strip())
    except ValueError:
        parser.error("--budgets_minutes=%s: give minutes like 10,20" % args.budgets_minutes)
    args.budgets = [int(b) if b == int(b) else b for b in args.budgets]
    registered_schedule(args)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = sorted(set(args.systems) - set(SYSTEMS))
    if args.max_steps < 0 or (args.max_steps and args.max_steps % args.checkpoint_steps):
        parser.error("--max_steps=%d: give 0 or a multiple of --checkpoint_steps=%d" % (
            args.max_steps, args.checkpoint_steps))
    if args.peer_batching != "default" and "eole" in args.systems:
        parser.error("--peer_batching=%s changes OpenNMT-tf's input only; give "
                     "--systems=opennmt_tf" % args.peer_batching)
    if not args.budgets or unknown:
        parser.error("--systems: unknown %s; use %s" % (", ".join(unknown), ", ".join(SYSTEMS))
                     if unknown else "--budgets_minutes: give at least one budget")
    return args


def parse_with_own_flags(parser, argv, defaults, note, check=None):
    """A bench script's own flags (`parser`, made with add_help=False), then this file's
    flags from the rest of `argv` after `defaults`, so a flag given overrides its default.
    `defaults` is a list, or a function of the own flags' namespace that returns one (for
    a default that follows an own flag, e.g. --max_steps from multi30k_speed's --steps).

    `check(own)` validates the script's flags first (it exits with a one-line message),
    before anything heavier runs; -h prints both helps, `note` saying how this file's
    flags differ there. The own flags' values are set on the returned namespace, e.g.

        parser = argparse.ArgumentParser(add_help=False)
        parser.add_argument("--rounds", type=int, default=3)
        args = parse_with_own_flags(parser, ["--rounds=2", "--systems=t2t"],
                                    ["--plot="], "--plot is not used")
        # args.rounds == 2, args.systems == ["t2t"], args.plot == ""
    """
    own, rest = parser.parse_known_args(argv)
    if "-h" in rest or "--help" in rest:
        parser.print_help()
        print("\nand bench_multi30k.py's flags (%s):" % note)
    elif check is not None:
        check(own)
    if callable(defaults):
        defaults = defaults(own)
    args = parse_args(list(defaults) + rest)
    for name, value in vars(own).items():
        setattr(args, name, value)
    return args


def registered_schedule(args):
    """--learning_rate / --warmup_steps not given: the values of HPARAMS_SET."""
    if args.learning_rate is None or args.warmup_steps is None:
        from t2t.core import registry
        from t2t.models import transformer_multi30k  # noqa: F401  (registers the set)
        hparams = registry.hparams(HPARAMS_SET)
        if args.learning_rate is None:
            args.learning_rate = hparams.learning_rate_constant
        if args.warmup_steps is None:
            args.warmup_steps = hparams.learning_rate_warmup_steps


def write_results(path, results):
    """`results`' keys into the JSON at `path`, the keys it has of other runs kept (the
    sweep, the ablations); written under a temporary name, then renamed."""
    merged = {}
    if os.path.exists(path):
        with open(path) as handle:
            merged = json.load(handle)
    merged.update(results)
    from t2t.core import atomic_files
    with atomic_files.atomic_write(path, "w") as handle:
        json.dump(merged, handle, indent=1, sort_keys=True)
    return merged


def begin(args):
    """What every run of this bench and of multi30k_sweep.py does first: SIGTERM unwinds
    like Ctrl-C (so a trainer running in its own session is stopped too), the work folder,
    the protobuf check, the data; returns prepare_data's dict."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    os.makedirs(args.work_dir, exist_ok=True)
    if protobuf_implementation() == "python":
        sys.exit("bench_multi30k: this venv runs pure-Python protobuf (slow checkpoints and graph "
                 "writes); reinstall t2t with `make test` or pip install 'protobuf>=4.25'")
    return prepare_data(args)


def main(argv=None):
    args = parse_args(argv)
    if args.replot:
        if not (args.out and os.path.exists(args.out) and args.plot):
            sys.exit("bench_multi30k: --replot needs --out=<an existing results JSON> and "
                     "--plot=<a PNG path>")
        os.makedirs(args.work_dir, exist_ok=True)
        plot(args, json.load(open(args.out)), args.plot)
        log("drew %s from %s" % (args.plot, args.out))
        return
    start = time.monotonic()
    data = begin(args)
    # Settings shared by every row; what differs per run (stack, schedule, date, load) is in
    # each row, and a run replaces only the rows it measured (see merge_rows).
    results = {"problem": PROBLEM, "hparams_set": HPARAMS_SET,
               "beam_size": args.beam_size, "alpha": 0.6, "test_lines": args.test_lines or 1000,
               "cpu_count": os.cpu_count(),
               "protobuf": protobuf_implementation(), "systems": []}
    for system in args.systems:
        results["systems"].append(bench_system(system, args, data))
    print("\n%-11s %11s %10s %9s  %s" % ("system", "parameters", "tokens/s", "peak MB",
                                        "  ".join("BLEU@%smin" % m for m in args.budgets)))
    for result in results["systems"]:
        print("%-11s %11s %10s %9s  %s" % (
            result["system"], "{:,}".format(result["parameters"] or 0),
            "{:,}".format(result["train_tokens_per_sec"] or 0), result["peak_memory_mb"],
            "  ".join("%10s" % (b["bleu"] if b["bleu"] is not None else "-")
                      for b in result["budgets"])))
    signatures = {b.get("signature") for r in results["systems"] for b in r["budgets"]} - {None}
    print("sacrebleu: %s" % ", ".join(sorted(signatures)))
    if args.out:
        stored = json.load(open(args.out)) if os.path.exists(args.out) else {}
        results["systems"] = merge_rows(stored.get("systems", []), results["systems"])
        results["budgets_minutes"] = sorted({b["minutes"] for row in results["systems"]
                                             for b in row["budgets"]})
        results = write_results(args.out, results)
    if args.plot:
        plot(args, results, args.plot)
    log("done: %d systems, %d budgets, %.1f min%s" % (
        len(args.systems), len(args.budgets), (time.monotonic() - start) / 60,
        ", wrote %s" % args.out if args.out else ""))


if __name__ == "__main__":
    main()
