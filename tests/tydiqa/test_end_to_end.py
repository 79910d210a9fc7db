"""TyDi QA end to end with t2t's programs: datagen -> trainer -> decoder -> t2t-tydi-eval.

The data is TyDi QA-format (seven scripts, 64-bit ids, 3 annotators in dev) and learnable:
the question names a word of the document and the minimal answer is that word (a tenth
of the questions have no answer). A tiny span model learns it in 700 steps (minimal F1
0.84, passage F1 0.90 on TF 2.21; 1,500 steps cost CI ~100 s more).
"""
import json
import os
import subprocess
import sys
import textwrap

from t2t.core import backend_choice
from t2t.tydiqa import synthetic

PROBLEM = "tydiqa_learnable_test"
TASK = dict(num_passages=2, words_per_passage=6, answer_offset=0)
HPARAMS = ("batch_size=32,hidden_size=64,filter_size=256,layer_prepostprocess_dropout=0.0,"
           "attention_dropout=0.0,relu_dropout=0.0")


def run(program, *args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), program)] +
                            list(args), capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 0, (program, result.stderr[-4000:])
    return result


def test_datagen_train_decode_evaluate(tmp_path):
    usr_dir = tmp_path / "usr"
    usr_dir.mkdir()
    (usr_dir / "__init__.py").write_text(textwrap.dedent("""
        from t2t.problems import tydiqa
        from t2t.core import registry


        @registry.register_problem
        class TydiqaLearnableTest(tydiqa.Tydiqa):
            max_seq_length = 64
            doc_stride = 32
            max_question_length = 8
            approx_vocab_size = 2 ** 9
            num_train_shards = 1
            num_processes = 1
        """))
    tmp_dir, data_dir, train_dir = (str(tmp_path / name) for name in ("tmp", "data", "train"))
    os.makedirs(tmp_dir)
    synthetic.write_jsonl_gz(os.path.join(tmp_dir, "tydiqa-v1.0-train.jsonl.gz"),
                             synthetic.learnable_examples(1400, seed=1, **TASK))
    gold = synthetic.write_jsonl_gz(
        os.path.join(tmp_dir, "tydiqa-v1.0-dev.jsonl.gz"),
        synthetic.learnable_examples(140, seed=2, annotators=3, first_id=2 ** 62, **TASK))
    common = ["--problem=" + PROBLEM, "--t2t_usr_dir=%s" % usr_dir, "--data_dir=" + data_dir]

    datagen = run("t2t-datagen", *common, "--tmp_dir=" + tmp_dir)
    assert "tydiqa dev: 140 examples, 140 used" in datagen.stderr

    model = ["--model=transformer_span", "--hparams_set=transformer_span_tiny",
             "--hparams=" + HPARAMS, "--output_dir=" + train_dir]
    run("t2t-trainer", *common, *model, "--train_steps=1000", "--schedule=train",
        "--random_seed=1")

    predictions = str(tmp_path / "predictions.jsonl")
    run("t2t-decoder", *common, *model, "--decode_to_file=" + predictions)
    lines = [json.loads(line) for line in open(predictions)]
    expected_ids = [line["example_id"] for line in synthetic.learnable_examples(
        140, seed=2, annotators=3, first_id=2 ** 62, **TASK)]
    assert [p["example_id"] for p in lines] == expected_ids   # 64-bit ids, every example
    assert set(lines[0]) == {"example_id", "language", "passage_answer_index",
                             "passage_answer_score", "minimal_answer",
                             "minimal_answer_score", "yes_no_answer"}
    if backend_choice.estimator_available():
        # The Estimator-free predictor writes the same predictions.
        native = str(tmp_path / "native.jsonl")
        run("t2t-decoder", *common, *model, "--decode_to_file=" + native, "--backend=native")
        assert open(native).read() == open(predictions).read()

    evaluation = run("t2t-tydi-eval", "--gold_path=" + gold, "--predictions_path=" +
                     predictions)
    averages = json.loads(evaluation.stdout.strip().splitlines()[-1])
    assert averages["avg_minimal_f1"] > 0.8, evaluation.stdout
    assert averages["avg_passage_f1"] > 0.8, evaluation.stdout
