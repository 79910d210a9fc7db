"""Decoding speed and BLEU side by side: t2t against OpenNMT-tf 2.32 and eole 0.6.4, same models.

The models are the ones bench_multi30k.py trains (3+3 layers, d=256, the same 8k subword
ids, the same data), each taken at the same step (default 500) so the comparison does not
depend on how loaded the machine was while they trained: t2t's from `--t2t_model_dir`
(model.ckpt-<step>, trained by the README's commands), the peers' from the checkpoints
bench_multi30k.py kept in `--multi30k_work_dir` (run it with `--max_steps=500`). Every
system decodes all 1,000 test_2016_flickr sentences at two settings:

    beam4_batch32   beam 4, length penalty alpha 0.6 (each system's equivalent), batches of
                    32 sentences: generated target tokens/s and sentences/s
    greedy_batch1   greedy, one sentence at a time: per-sentence latency

with 2 threads each (TF intra-op 2 / inter-op 1, torch.set_num_threads(2), CTranslate2
intra_threads=2 inter_threads=1), and the BLEU of what it produced (sacrebleu, the bench's
signature). Timing, token counting and the length penalties are in
docs/inference_benchmark.md; in short, a system's time is the wall time of a process that
decodes the 1,000 sentences minus that of the same process decoding 1 sentence (start-up
and model loading cancel), the median of `--repeats` runs interleaved across systems.

    python bench/bench_inference.py --multi30k_work_dir=/tmp/t2t_bench_multi30k
    python bench/bench_inference.py --test_lines=20 --repeats=1 --out=   # a smoke run
    # writes bench/results/inference.json and prints the table

Systems (`--systems`, see bench/inference_systems.py for adding one): t2t_tf (t2t-decoder),
t2t_savedmodel (t2t-exporter, then the SavedModel's signature), opennmt_tf (onmt-main
infer), eole (eole predict), opennmt_tf_ct2 and eole_ct2 (the peers' own CTranslate2
exports, all decoded by CTranslate2 4.8 from a venv of its own).
"""
import argparse
import difflib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # this process only scores and encodes
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_serving  # noqa: E402  (machine(): the CPU's name and vector flags)
import inference_systems  # noqa: E402  (bench/inference_systems.py)
import multi30k_peers  # noqa: E402

PROBLEM, HPARAMS_SET = inference_systems.PROBLEM, inference_systems.HPARAMS_SET
CT2_REQUIREMENTS = ("ctranslate2==4.8.5",)


class Setting(types.SimpleNamespace):
    """name, beam_size, batch_size."""


SETTINGS = (Setting(name="beam4_batch32", beam_size=4, batch_size=32),
            Setting(name="greedy_batch1", beam_size=1, batch_size=1))


def log(message):
    print("[bench_inference %s] %s" % (time.strftime("%H:%M:%S"), message), flush=True)


class Ct2Venv(multi30k_peers.Peer):
    """CTranslate2 4.8 alone, in a venv of its own: one engine version for every CTranslate2
    model (OpenNMT-tf 2.32's venv pins CTranslate2 below 4 for its exporter)."""
    name = "ctranslate2"
    version = "CTranslate2 4.8.5"
    requirements = CT2_REQUIREMENTS


class Bench:
    """What the systems share: arguments, folders, the data, and how a process is run."""

    def __init__(self, args):
        self.args = args
        self.work_dir = args.work_dir
        self.settings = [s for s in SETTINGS if s.name in args.settings]
        os.makedirs(self.work_dir, exist_ok=True)
        self.peer_args = types.SimpleNamespace(
            venv_dir=args.venv_dir, peer_python=args.peer_python, beam_size=4,
            checkpoint_steps=50, log_steps=10, max_steps=args.step,
            learning_rate=1.5, warmup_steps=600)  # transformer_multi30k's, as trained
        self.peer_data = {"data_dir": args.t2t_data_dir,
                          "peer_dir": os.path.join(args.multi30k_work_dir, "peer_data")}
        self._peers = {}
        self._ct2 = None
        self.encoder = None

    # -- processes
    def env(self, **extra):
        """The environment of every decoding process: 2 threads for whatever reads these."""
        threads = str(self.args.threads)
        return dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads,
                    TF_NUM_INTRAOP_THREADS=threads, TF_NUM_INTEROP_THREADS="1",
                    OMP_WAIT_POLICY=self.args.omp_wait_policy, **extra)

    def run_once(self, command, log_path, env=None):
        """An untimed preparation step (export, conversion); its output in `log_path`."""
        log("  %s" % " ".join(os.path.basename(c) if i == 0 else c
                             for i, c in enumerate(command[:6])) + " ...")
        with open(log_path, "w") as handle:
            result = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, env=env,
                                    cwd=self.work_dir)
        if result.returncode != 0:
            raise RuntimeError("%s failed (exit %d); the end of %s:\n%s" % (
                command[0], result.returncode, log_path,
                open(log_path, errors="replace").read()[-3000:]))

    # -- models
    def t2t_checkpoint(self):
        """(a folder of this bench's own with links to the checkpoint, its step)."""
        step = self.args.step
        source = os.path.abspath(os.path.expanduser(self.args.t2t_model_dir))
        # t2t-decoder writes into its model folder (decode/), so it gets a folder of links.
        target = os.path.join(self.work_dir, "t2t_model")
        if not self.prepared(target, self.t2t_source()):
            os.makedirs(target)
            for name in os.listdir(source):
                if name.startswith("model.ckpt-%d." % step) or name.endswith((".json", ".txt")):
                    link_file(os.path.join(source, name), os.path.join(target, name))
            self.mark_prepared(target, self.t2t_source())
        return target, step

    def t2t_source(self):
        """What t2t's prepared folders come from: the checkpoint and when it was written."""
        index = os.path.join(os.path.realpath(os.path.expanduser(self.args.t2t_model_dir)),
                             "model.ckpt-%d.index" % self.args.step)
        return "%s written %d" % (index, os.path.getmtime(index))

    @staticmethod
    def prepared(folder, source):
        """Whether `folder` was prepared (exported, converted, linked) from `source`; a
        folder prepared from another one is removed."""
        stamp = os.path.join(folder, "PREPARED_FROM")
        if os.path.exists(stamp) and open(stamp).read() == source:
            return True
        shutil.rmtree(folder, ignore_errors=True)
        return False

    @staticmethod
    def mark_prepared(folder, source):
        with open(os.path.join(folder, "PREPARED_FROM"), "w") as handle:
            handle.write(source)

    def export_t2t(self, model_dir, step, export_dir, source, *flags):
        """`t2t-exporter` of `model_dir`'s checkpoint at `step` into `export_dir` (untimed),
        stamped as prepared from `source`."""
        self.run_once(inference_systems.t2t_export_command(
            self.args.t2t_bin, model_dir, export_dir, *flags, problem=PROBLEM,
            hparams_set=HPARAMS_SET, data_dir=self.args.t2t_data_dir,
            checkpoint_path=os.path.join(model_dir, "model.ckpt-%d" % step)),
            export_dir + ".log", self.env(TF_CPP_MIN_LOG_LEVEL="2"))
        self.mark_prepared(export_dir, source)

    def t2t_flags(self, model_dir):
        return ["--problem=" + PROBLEM, "--model=transformer", "--hparams_set=" + HPARAMS_SET,
                "--data_dir=" + self.args.t2t_data_dir, "--output_dir=" + model_dir]

    def peer(self, name):
        if name not in self._peers:
            run_dir = os.path.join(self.work_dir, name)
            os.makedirs(run_dir, exist_ok=True)
            self._peers[name] = multi30k_peers.PEERS[name](self.peer_args, self.peer_data,
                                                           run_dir, log)
        return self._peers[name]

    def peer_checkpoint(self, name):
        """(the kept checkpoint folder of bench_multi30k's run, its step)."""
        return self.peer_kept(name), self.args.step

    def peer_kept(self, name):
        return os.path.join(self.args.multi30k_work_dir, "runs", name, "kept",
                            "step_%d" % self.args.step)

    def ct2_worker(self, model, setting, source, output, compute_type="float32"):
        """(argv, env) of inference_worker.py decoding with CTranslate2 4.8."""
        if self._ct2 is None:
            self._ct2 = Ct2Venv(self.peer_args, {}, self.work_dir, log)
        return [self._ct2.python, inference_systems.WORKER, "--engine=ctranslate2",
                "--model=" + model, "--compute_type=" + compute_type] + \
            inference_systems.worker_flags(setting, source, output, self.args.threads), \
            self.env()

    # -- data
    def prepare_data(self):
        """The source files (text and tokens, all lines and the first), the references."""
        from t2t.core import registry
        problem = registry.problem(PROBLEM)
        self.encoder = problem.feature_encoders(self.args.t2t_data_dir)["targets"]
        text = os.path.join(self.args.t2t_data_dir, "%s.test_2016_flickr.en" % PROBLEM)
        reference = os.path.join(self.args.t2t_data_dir, "%s.test_2016_flickr.de" % PROBLEM)
        lines = open(text, encoding="utf-8").read().split("\n")[:-1]
        references = open(reference, encoding="utf-8").read().split("\n")[:-1]
        if self.args.test_lines:
            lines, references = lines[:self.args.test_lines], references[:self.args.test_lines]
        self.references = references
        ids = [self.encoder.encode(line) for line in lines]
        tokens = [multi30k_peers.ids_to_tokens(i) for i in ids]
        with_eos = [" ".join(map(str, i + [1])) for i in ids]
        self.sources = {}
        for kind, content in (("text", lines), ("tokens", tokens), ("ids", with_eos)):
            for count in (len(content), 1):
                path = os.path.join(self.work_dir, "source.%s.%d" % (kind, count))
                write_lines(path, content[:count])
                self.sources[kind, count] = path
        return len(lines)

    def outputs(self, system, path):
        """(ids per sentence, text per sentence) of a system's output file."""
        lines = open(path, encoding="utf-8").read().split("\n")[:-1]
        if system.output_kind == "text":
            return [self.encoder.encode(line) for line in lines], lines
        if system.output_kind == "tokens":
            ids = [multi30k_peers.tokens_to_ids(line) for line in lines]
        else:
            ids = [[int(i) for i in line.split()] for line in lines]
        return ids, [self.encoder.decode(i) for i in ids]


def link_file(source, target):
    try:
        os.link(os.path.realpath(source), target)
    except OSError:
        shutil.copy2(source, target)


def check_inputs(args):
    """The message of what is missing (None when all is there), before any work."""
    model_dir = os.path.expanduser(args.t2t_model_dir)
    t2t = [s for s in args.systems if s.startswith("t2t")]
    if t2t and not os.path.isdir(model_dir):
        return "--t2t_model_dir=%s does not exist; give t2t's training folder" % model_dir
    if t2t and args.step not in inference_systems.checkpoint_steps(model_dir):
        return ("--t2t_model_dir=%s has no model.ckpt-%d (its steps: %s); give --step one of "
                "them" % (model_dir, args.step, ", ".join(
                    map(str, inference_systems.checkpoint_steps(model_dir))) or "none"))
    for name in ("vocab.%s.8192.subwords" % PROBLEM, "%s.test_2016_flickr.en" % PROBLEM,
                 "%s.test_2016_flickr.de" % PROBLEM):
        if not os.path.exists(os.path.join(args.t2t_data_dir, name)):
            return ("--t2t_data_dir=%s has no %s; give the data folder t2t-datagen wrote for "
                    "%s" % (args.t2t_data_dir, name, PROBLEM))
    peers = sorted({inference_systems.SYSTEMS[s].peer for s in args.systems
                    if getattr(inference_systems.SYSTEMS[s], "peer", "")})
    for peer in peers:
        kept = os.path.join(args.multi30k_work_dir, "runs", peer, "kept")
        if not os.path.isdir(os.path.join(kept, "step_%d" % args.step)):
            have = sorted(os.listdir(kept)) if os.path.isdir(kept) else []
            return ("%s has no step %d in %s (kept: %s); train it with bench_multi30k.py "
                    "--systems=%s --max_steps=%d --work_dir=%s" % (
                        peer, args.step, kept, ", ".join(have) or "none", peer, args.step,
                        args.multi30k_work_dir))
    if peers:
        ours = os.path.join(args.t2t_data_dir, "vocab.%s.8192.subwords" % PROBLEM)
        theirs = os.path.join(args.multi30k_work_dir, "t2t_data",
                              "vocab.%s.8192.subwords" % PROBLEM)
        if not os.path.exists(theirs) or open(ours, "rb").read() != open(theirs, "rb").read():
            return ("the peers learnt %s, which is not --t2t_data_dir's vocabulary %s; give "
                    "the data folder of the vocabulary they were trained with" % (theirs, ours))
    return None


def write_lines(path, lines):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))
    os.replace(tmp, path)


def timed_run(bench, system, setting, count, tag):
    """Wall seconds of one process decoding the first `count` sentences; its output path."""
    source = bench.sources[system.source_kind, count]
    output = os.path.join(bench.work_dir, "out", "%s.%s.%d.%s" % (system.name, setting.name,
                                                                  count, tag))
    os.makedirs(os.path.dirname(output), exist_ok=True)
    if os.path.exists(output):
        os.remove(output)
    command, env = system.command(setting, source, output)
    start = time.monotonic()
    with open(output + ".log", "w") as handle:
        result = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, env=env,
                                cwd=bench.work_dir)
    seconds = time.monotonic() - start
    if result.returncode != 0 or not os.path.exists(output):
        raise RuntimeError("%s (%s) failed (exit %d); the end of %s.log:\n%s" % (
            system.name, setting.name, result.returncode, output,
            open(output + ".log", errors="replace").read()[-3000:]))
    return seconds, output


def in_process_seconds(log_path):
    """The worker's own decode seconds (its JSON line), when it printed one."""
    for line in reversed(open(log_path, errors="replace").read().split("\n")):
        if line.startswith("{") and "decode_seconds" in line:
            return json.loads(line)["decode_seconds"]
    return None


def measure(bench, systems, repeats):
    """{(system, setting): [run records]}, each run a pair of processes (1 and N lines).
    The order of systems rotates from one repeat to the next (interleaving)."""
    from t2t.evaluation import bleu_hook
    runs, results = {}, {}
    total = repeats * len(bench.settings) * len(systems)
    done = 0
    for repeat in range(repeats):
        order = systems[repeat % len(systems):] + systems[:repeat % len(systems)]
        for setting in bench.settings:
            for system in order:
                one, _ = timed_run(bench, system, setting, 1, "r%d" % repeat)
                full, output = timed_run(bench, system, setting, bench.count, "r%d" % repeat)
                ids, text = bench.outputs(system, output)
                key = (system.name, setting.name)
                if key not in results:
                    bleu, signature = bleu_hook.sacrebleu_corpus_score(text, bench.references)
                    counted = system.generated_tokens(
                        open(output + ".log", errors="replace").read(), len(ids))
                    results[key] = {"ids": ids, "bleu": round(bleu, 2), "signature": signature,
                                    "tokens": sum(len(i) for i in ids) if counted is None
                                    else counted,
                                    "tokens_from": "output ids" if counted is None
                                    else "the decoder's count"}
                record = {"wall_all": round(full, 3), "wall_one": round(one, 3),
                          "seconds": round(full - one, 3),
                          "in_process_seconds": in_process_seconds(output + ".log"),
                          "load_average_1min": round(os.getloadavg()[0], 2),
                          "same_output_as_first": ids == results[key]["ids"]}
                runs.setdefault(key, []).append(record)
                done += 1
                log("[%d/%d] %s %s: %.1f s - %.1f s = %.1f s, BLEU %.2f" % (
                    done, total, system.name, setting.name, full, one, full - one,
                    results[key]["bleu"]))
    return runs, results


def summarize(bench, systems, runs, results):
    rows = []
    for system in systems:
        for setting in bench.settings:
            key = (system.name, setting.name)
            seconds = statistics.median(r["seconds"] for r in runs[key])
            tokens = results[key]["tokens"]
            row = {"system": system.name, "setting": setting.name, "engine": system.engine,
                   "step": system.step, "beam_size": setting.beam_size,
                   "batch_size": setting.batch_size, "sentences": bench.count,
                   "generated_tokens": tokens, "tokens_from": results[key]["tokens_from"],
                   "seconds_median": round(seconds, 3),
                   "tokens_per_sec": round(tokens / seconds, 1) if seconds > 0 else None,
                   "sentences_per_sec": round(bench.count / seconds, 2) if seconds > 0 else None,
                   "ms_per_sentence": round(1000 * seconds / bench.count, 2),
                   "bleu": results[key]["bleu"], "signature": results[key]["signature"],
                   "length_penalty": system.length_penalty if setting.beam_size > 1 else None,
                   "runs": runs[key]}
            if getattr(system, "converter", None):
                row["converter"] = system.converter
            rows.append(row)
    return rows


def print_table(rows):
    """The summary: one line a system and setting (a time at or below zero, where start-up
    noise exceeds the decode of a few sentences, shows as "-")."""
    print("\n%-16s %-14s %5s %8s %9s %8s %9s %6s" % (
        "system", "setting", "step", "tokens", "tokens/s", "sent/s", "ms/sent", "BLEU"))
    for row in rows:
        timed = row["seconds_median"] > 0
        print("%-16s %-14s %5s %8d %9s %8s %9s %6.2f" % (
            row["system"], row["setting"], row["step"], row["generated_tokens"],
            "{:,.0f}".format(row["tokens_per_sec"]) if timed else "-",
            "%.2f" % row["sentences_per_sec"] if timed else "-",
            "%.1f" % row["ms_per_sentence"] if timed else "-", row["bleu"]))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--systems", default=",".join(inference_systems.SYSTEMS))
    parser.add_argument("--settings", default=",".join(s.name for s in SETTINGS))
    parser.add_argument("--t2t_model_dir", default="/work/m30k/train",
                        help="t2t's training folder (read only: the bench links its files)")
    parser.add_argument("--t2t_data_dir", default="/work/m30k/data",
                        help="its data folder: vocabulary and test_2016_flickr files")
    parser.add_argument("--t2t_bin", default=os.path.dirname(sys.executable),
                        help="folder of the t2t-decoder and t2t-exporter to time")
    parser.add_argument("--multi30k_work_dir", default="/tmp/t2t_bench_multi30k",
                        help="bench_multi30k.py's --work_dir (the peers' kept checkpoints)")
    parser.add_argument("--step", type=int, default=500, help="every model at this step")
    parser.add_argument("--work_dir", default="/tmp/t2t_bench_inference")
    parser.add_argument("--venv_dir", default=os.path.expanduser("~/.cache/t2t/bench_venvs"))
    parser.add_argument("--peer_python", default="python3.11")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--omp_wait_policy", default="PASSIVE", choices=("PASSIVE", "ACTIVE"),
                        help="OpenMP's, for every system (CTranslate2 and PyTorch use "
                             "OpenMP): spinning threads (ACTIVE) starve each other as soon "
                             "as anything else runs on the 2 cores (t2t sets PASSIVE)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--test_lines", type=int, default=0,
                        help="decode only the first N test sentences (smoke runs); 0: all")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "inference.json"),
                        help="results JSON; empty: none")
    parser.add_argument("--keep_other_rows", action="store_true",
                        help="keep the rows of --out's systems that this run does not "
                             "measure, each marked with the run it came from")
    args = parser.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    args.settings = [s.strip() for s in args.settings.split(",") if s.strip()]
    for flag, given, known in (("--systems", args.systems, inference_systems.SYSTEMS),
                               ("--settings", args.settings, [s.name for s in SETTINGS])):
        unknown = [name for name in given if name not in known]
        if unknown or not given:
            close = [c for name in unknown for c in difflib.get_close_matches(name, known, 1)]
            parser.error("%s: unknown %s%s; use some of %s" % (
                flag, ", ".join(unknown) or "(none given)",
                " (did you mean %s?)" % ", ".join(close) if close else "", ", ".join(known)))
    if args.repeats < 1:
        parser.error("--repeats=%d: give 1 or more" % args.repeats)
    return args


def kept_rows(path, measured_systems):
    """The rows of `path` (an earlier report) of systems not in `measured_systems`, each with
    `earlier_run`: that report's commit, load averages and repeats (not side by side with
    this run's rows)."""
    with open(path) as handle:
        earlier = json.load(handle)
    run = {name: earlier.get(name) for name in ("t2t_commit", "load_average_at_start",
                                                "load_average_at_end", "repeats")}
    return [dict(row, earlier_run=row.get("earlier_run", run))
            for row in earlier.get("rows", []) if row["system"] not in measured_systems]


def main(argv=None):
    args = parse_args(argv)
    problem = check_inputs(args)
    if problem:
        sys.stderr.write("bench_inference: %s\n" % problem)
        sys.exit(2)
    start = time.monotonic()
    bench = Bench(args)
    load_at_start = os.getloadavg()
    bench.count = bench.prepare_data()
    systems = []
    for name in args.systems:
        system = inference_systems.SYSTEMS[name](bench)
        log("%s: preparing (%s)" % (name, system.engine))
        system.step = system.prepare()
        systems.append(system)
    log("%d systems, %d sentences, settings %s, %d repeats, %d threads; load average %.1f" % (
        len(systems), bench.count, ", ".join(s.name for s in bench.settings), args.repeats,
        args.threads, load_at_start[0]))
    runs, results = measure(bench, systems, args.repeats)
    rows = summarize(bench, systems, runs, results)
    print_table(rows)
    report = {
        "problem": PROBLEM, "hparams_set": HPARAMS_SET, "step": args.step,
        "test_lines": bench.count, "repeats": args.repeats, "threads": args.threads,
        "omp_wait_policy": args.omp_wait_policy,
        "timing": "wall time of a process decoding all sentences minus that of the same "
                  "process decoding the first sentence (start-up, model loading and first-"
                  "call tracing cancel); median over repeats, systems interleaved; "
                  "in_process_seconds: the worker's own time around its decode calls, "
                  "where a system has a Python API (a cross-check)",
        "generated_tokens": "output subword ids in the shared t2t vocabulary, EOS left out; "
                            "t2t-decoder writes text, so its own count of the ids it "
                            "generated (its summary line, less one EOS a sentence)",
        # The CPU's flags (AVX-512, VNNI, AMX): CTranslate2's int8 figure depends on them.
        "machine": bench_serving.machine(),
        "cpu_count": os.cpu_count(), "load_average_at_start": load_at_start,
        "load_average_at_end": os.getloadavg(), "python": platform.python_version(),
        "t2t_commit": inference_systems.git_commit(os.path.dirname(HERE)),
        "ctranslate2": Ct2Venv.version, "rows": rows}
    if args.out and args.keep_other_rows and os.path.exists(args.out):
        report["rows"] = rows + kept_rows(args.out, args.systems)
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w") as handle:
            json.dump(report, handle, indent=1, sort_keys=True)
        os.replace(tmp, args.out)
    log("done: %d systems x %d settings x %d repeats in %.1f min%s" % (
        len(systems), len(bench.settings), args.repeats, (time.monotonic() - start) / 60,
        ", wrote %s" % args.out if args.out else ""))


if __name__ == "__main__":
    main()
