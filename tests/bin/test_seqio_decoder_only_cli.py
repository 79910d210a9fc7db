"""t2t-trainer / t2t-decoder --mixture_or_task_name --decoder_only: a tiny decoder-only
Transformer learns a PrefixLM copy task, with the task metric on real decodes at each
evaluation; the decoder continues the split's inputs, a file's lines and typed lines (each
post-processed by the task), and scores 'input<TAB>target' pairs."""
import json
import os
import subprocess
import sys

import pytest

from seqio_training_testing import copy_tasks_module, write_copy_tsv

BIN = os.path.dirname(sys.executable)
TRAINER, DECODER = os.path.join(BIN, "t2t-trainer"), os.path.join(BIN, "t2t-decoder")
TIMEOUT = 400
STEPS = 200
HPARAMS = ("hidden_size=64,filter_size=128,num_hidden_layers=2,num_heads=4,batch_size=1024,"
           "learning_rate_warmup_steps=100,learning_rate_constant=0.5,"
           "layer_prepostprocess_dropout=0.0,attention_dropout=0.0,relu_dropout=0.0")


def run(program, args, env, stdin=None):
    return subprocess.run([program] + args, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT, input=stdin)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A decoder-only model trained STEPS steps by t2t-trainer, evaluated every 100."""
    root = tmp_path_factory.mktemp("seqio_dec")
    paths = write_copy_tsv(root, {"train": 2000, "validation": 16})
    (root / "dec_tasks.py").write_text(copy_tasks_module("dec_copy", paths))
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    model_dir = root / "model"
    trained = run(TRAINER, task_args(model_dir) + [
        "--task_feature_lengths=inputs=8,targets=8", "--decoder_only", "--hparams=" + HPARAMS,
        "--train_steps=%d" % STEPS, "--schedule=train_and_evaluate",
        "--local_eval_frequency=100", "--eval_steps=1", "--random_seed=1"], env)
    assert trained.returncode == 0, trained.stderr[-3000:]
    return root, env, model_dir


def task_args(model_dir):
    return ["--mixture_or_task_name=dec_copy", "--module_import=dec_tasks",
            "--model=transformer", "--hparams_set=transformer_tiny",
            "--output_dir=%s" % model_dir]


def test_task_metrics_on_decodes_rise(trained):
    _, _, model_dir = trained
    assert "--decoder_only" in (model_dir / "flags.txt").read_text().splitlines()
    log_dir = model_dir / "inference_eval"
    lines = [json.loads(line) for line in
             (log_dir / "dec_copy-metrics.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [100, 200]
    first, last = lines[0]["exact_match"], lines[-1]["exact_match"]
    print("exact_match on decodes by step:", [(l["step"], l["exact_match"]) for l in lines])
    assert last >= 80.0 and last > first, lines
    records = [json.loads(line) for line in
               (log_dir / ("dec_copy-%06d.jsonl" % STEPS)).read_text().splitlines()]
    assert len(records) == 16
    # The prediction is the continuation only (not the prompt), post-processed.
    assert sum(r["prediction"] == r["target"] == r["input"]["inputs_pretokenized"].upper()
               for r in records) == round(last * 16 / 100)


def test_decode_split_file_and_interactive(trained):
    root, env, model_dir = trained
    out = root / "decodes" / "copy.txt"
    split = run(DECODER, task_args(model_dir) + ["--decode_to_file=%s" % out,
                                                "--decode_hparams=beam_size=1"], env)
    assert split.returncode == 0, split.stderr[-3000:]
    assert "decoded 16 examples of dec_copy/validation" in split.stdout
    decodes = out.read_text().splitlines()
    targets = (root / "decodes" / "copy.txt.targets").read_text().splitlines()
    assert len(decodes) == len(targets) == 16
    assert sum(d == t for d, t in zip(decodes, targets)) >= 13, (decodes, targets)

    words = ["abc", "dab", "cc", "bad", "a"]
    prompts = root / "prompts.txt"
    prompts.write_text("".join(w + "\n" for w in words))
    beam = run(DECODER, task_args(model_dir) + [
        "--decode_from_file=%s" % prompts, "--decode_to_file=%s" % (root / "p.out"),
        "--decode_hparams=beam_size=2,alpha=0.6"], env)
    assert beam.returncode == 0, beam.stderr[-3000:]
    outputs = (root / "p.out").read_text().splitlines()
    assert len(outputs) == len(words)
    assert sum(o == w.upper() for o, w in zip(outputs, words)) >= 4, outputs

    typed = run(DECODER, task_args(model_dir) + ["--decode_interactive",
                                                "--decode_hparams=beam_size=1"], env,
                stdin="abc\nabcdabcdabcd\ndab\nq\nnot read\n")
    assert typed.returncode == 0, typed.stderr[-3000:]
    assert "decoded 2 inputs" in typed.stdout
    assert "error: line 2 'abcdabcdabcd': 13 ids with EOS, more than the task's inputs " \
           "length 8" in typed.stderr
    answers = [line.lstrip(">") for line in typed.stdout.splitlines() if line.startswith(">")]
    assert answers[:2] == [outputs[0], outputs[1]], typed.stdout


def test_score_file(trained):
    root, env, model_dir = trained
    pairs = root / "pairs.tsv"
    pairs.write_text("abc\tabc\nabc\tcba\ndab\tdab\ndab\tdd\n")
    scores_path = root / "scores.txt"
    scored = run(DECODER, task_args(model_dir) + [
        "--score_file=%s" % pairs, "--decode_to_file=%s" % scores_path], env)
    assert scored.returncode == 0, scored.stderr[-3000:]
    assert "scored 4 lines" in scored.stdout
    text = scores_path.read_text()
    assert text.endswith("\n") and all(len(l.split(".")[1]) == 6 for l in text.splitlines())
    losses = [float(line) for line in text.splitlines()]
    assert len(losses) == 4 and all(loss >= 0 for loss in losses)
    assert losses[0] < losses[1] and losses[2] < losses[3], losses

    bad = root / "bad.tsv"
    bad.write_text("abc\tabc\nabcdefghijk\tabc\n")
    too_long = run(DECODER, task_args(model_dir) + [
        "--score_file=%s" % bad, "--decode_to_file=%s" % (root / "bad.out")], env)
    assert too_long.returncode == 2
    last = too_long.stderr.strip().splitlines()[-1]
    assert "line 2: the input has 12 ids with EOS, more than the task's inputs length 8" in last
