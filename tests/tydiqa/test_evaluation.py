"""t2t.tydiqa.evaluation and t2t-tydi-eval against hand-computed figures."""
import json
import os
import subprocess
import sys

import pytest

from t2t.tydiqa import evaluation
from t2t.tydiqa.evaluation import Label, Span
from t2t.tydiqa.synthetic import example_dict, write_jsonl_gz


def gold_labels(example_id, language, annotations):
    """annotations: [(passage index, start, end, yes_no)]."""
    return [Label(example_id, language, p, Span(s, e), yn) for p, s, e, yn in annotations]


def prediction(example_id, language, passage=-1, span=(-1, -1), yes_no="none", score=1.0):
    return Label(example_id, language, passage, Span(*span), yes_no, score, score)


THREE = [(0, 10, 20, "none")] * 3


def test_partial_match_by_hand():
    assert evaluation.partial_match(Span(10, 20), Span(15, 25)) == (0.5, 0.5, 0.5)
    assert evaluation.partial_match(Span(10, 20), Span(10, 20)) == (1.0, 1.0, 1.0)
    assert evaluation.partial_match(Span(10, 20), Span(20, 30)) == (0.0, 0.0, 0.0)
    p, r, f1 = evaluation.partial_match(Span(0, 10), Span(5, 7))   # inside the gold span
    assert (p, r) == (1.0, 0.2) and f1 == pytest.approx(2 * 0.2 / 1.2)


def test_perfect_predictions_score_one():
    gold = {1: gold_labels(1, "arabic", THREE), 2: gold_labels(2, "thai", THREE)}
    preds = {1: prediction(1, "arabic", 0, (10, 20)), 2: prediction(2, "thai", 0, (10, 20))}
    averages = evaluation.evaluate(gold, preds).averages()
    assert averages == {key: 1.0 for key in averages} and len(averages) == 6


def test_half_overlapping_span_is_half():
    gold = {1: gold_labels(1, "korean", THREE)}
    result = evaluation.evaluate(gold, {1: prediction(1, "korean", 0, (15, 25))})
    figures = result.per_language["korean"].minimal
    assert (figures.f1, figures.precision, figures.recall) == (0.5, 0.5, 0.5)
    assert result.per_language["korean"].passage.f1 == 1.0
    assert result.averages()["avg_minimal_f1"] == 0.5


def test_best_threshold_and_recall_at_precision():
    # Four examples with gold answers; scores 3 and 2 right, 1 wrong, 0 a null prediction.
    gold = {i: gold_labels(i, "russian", THREE) for i in range(4)}
    preds = {0: prediction(0, "russian", 0, (10, 20), score=3.0),
             1: prediction(1, "russian", 0, (10, 20), score=2.0),
             2: prediction(2, "russian", 1, (30, 40), score=1.0),
             3: prediction(3, "russian", score=0.0)}
    passage = evaluation.evaluate(gold, preds).per_language["russian"].passage
    # threshold 3: P 1, R 1/4; threshold 2: P 1, R 1/2 (F1 2/3); threshold 1: P 2/3, R 1/2.
    assert passage.f1 == pytest.approx(2 / 3)
    assert (passage.precision, passage.recall, passage.threshold) == (1.0, 0.5, 2.0)
    assert passage.recall_at_precision == {0.5: 0.5, 0.75: 0.5, 0.9: 0.5}
    assert (passage.num_gold, passage.num_pred) == (4, 3)


def test_non_null_threshold_of_annotators():
    # One annotator of three gives an answer: not enough for gold to have one (default 2).
    one_of_three = [(0, 10, 20, "none"), (-1, -1, -1, "none"), (-1, -1, -1, "none")]
    gold = {1: gold_labels(1, "telugu", one_of_three), 2: gold_labels(2, "telugu", THREE)}
    preds = {1: prediction(1, "telugu", 0, (10, 20)), 2: prediction(2, "telugu", 0, (10, 20))}
    minimal = evaluation.evaluate(gold, preds).per_language["telugu"].minimal
    assert (minimal.precision, minimal.recall) == (0.5, 1.0)   # 1 right of 2 predicted
    relaxed = evaluation.evaluate(gold, preds, 1, 1).per_language["telugu"].minimal
    assert (relaxed.precision, relaxed.recall, relaxed.f1) == (1.0, 1.0, 1.0)


def test_yes_no_answers():
    yes = [(0, -1, -1, "yes")] * 2 + [(0, -1, -1, "none")]
    gold = {1: gold_labels(1, "japanese", yes), 2: gold_labels(2, "japanese", yes)}
    preds = {1: prediction(1, "japanese", 0, yes_no="yes"),
             2: prediction(2, "japanese", 0, yes_no="no")}
    minimal = evaluation.evaluate(gold, preds).per_language["japanese"].minimal
    assert (minimal.precision, minimal.recall) == (0.5, 0.5)


def test_english_is_reported_but_not_averaged():
    gold = {1: gold_labels(1, "english", THREE), 2: gold_labels(2, "bengali", THREE)}
    preds = {1: prediction(1, "english", 0, (10, 20)), 2: prediction(2, "bengali", 1, (0, 5))}
    result = evaluation.evaluate(gold, preds)
    assert result.per_language["english"].minimal.f1 == 1.0
    assert result.averages()["avg_minimal_f1"] == 0.0
    assert result.averages()["avg_passage_f1"] == 0.0


def test_missing_prediction_is_a_null_answer():
    gold = {1: gold_labels(1, "arabic", THREE),
            2: gold_labels(2, "arabic", [(-1, -1, -1, "none")] * 3)}
    # Example 2 has no gold answer and no prediction: it must not count as predicted.
    result = evaluation.evaluate(gold, {1: prediction(1, "arabic", 0, (10, 20))})
    assert result.per_language["arabic"].minimal.precision == 1.0
    assert result.missing == 1


def _files(tmp_path, predictions):
    document = "x" * 40
    gold_lines = [example_dict(-(2 ** 63) + 5, "thai", "q", document, [(0, 30), (30, 40)],
                               [(0, 10, 20, "NONE")] * 3),
                  example_dict(2 ** 63 - 7, "arabic", "q", document, [(0, 30), (30, 40)],
                               [(1, 32, 36, "NONE")] * 3)]
    gold = write_jsonl_gz(str(tmp_path / "gold.jsonl.gz"), gold_lines)
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in predictions))
    return gold, str(path)


def test_files_with_64_bit_ids_and_a_missing_minimal_answer(tmp_path):
    gold, preds = _files(tmp_path, [
        {"example_id": -(2 ** 63) + 5, "language": "thai", "passage_answer_index": 0,
         "passage_answer_score": 2.0, "minimal_answer": {"start_byte_offset": 15,
                                                         "end_byte_offset": 25},
         "minimal_answer_score": 2.0, "yes_no_answer": "NONE"},
        {"example_id": 2 ** 63 - 7, "language": "arabic", "passage_answer_index": 1,
         "passage_answer_score": 1.0, "minimal_answer_score": 1.0}])
    result = evaluation.evaluate_files(gold, preds)
    assert result.per_language["thai"].minimal.f1 == 0.5
    assert result.per_language["arabic"].passage.f1 == 1.0
    assert result.per_language["arabic"].minimal.num_pred == 0   # null minimal span
    assert result.averages()["avg_minimal_f1"] == 0.25


def run_cli(*args):
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), "t2t-tydi-eval")] +
                          list(args), capture_output=True, text=True, timeout=120)


def test_cli_prints_languages_and_json_last(tmp_path):
    gold, preds = _files(tmp_path, [
        {"example_id": -(2 ** 63) + 5, "language": "thai", "passage_answer_index": 0,
         "passage_answer_score": 2.0, "minimal_answer": {"start_byte_offset": 10,
                                                         "end_byte_offset": 20},
         "minimal_answer_score": 2.0, "yes_no_answer": "NONE"},
        {"example_id": 2 ** 63 - 7, "language": "arabic", "passage_answer_index": 1,
         "passage_answer_score": 1.0, "minimal_answer": {"start_byte_offset": 32,
                                                         "end_byte_offset": 34},
         "minimal_answer_score": 1.0, "yes_no_answer": "NONE"}])
    result = run_cli("--gold_path=" + gold, "--predictions_path=" + preds)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert any(line.startswith("thai") and "minimal F1 1.000" in line for line in lines)
    assert any(line.startswith("arabic") and "passage F1 1.000" in line for line in lines)
    averages = json.loads(lines[-1])
    assert averages["avg_passage_f1"] == 1.0
    # arabic minimal: P 1, R 0.5 -> F1 2/3; thai 1.0.
    assert averages["avg_minimal_f1"] == pytest.approx((1.0 + 2 / 3) / 2)
    assert sorted(averages) == sorted(["avg_passage_f1", "avg_passage_precision",
                                       "avg_passage_recall", "avg_minimal_f1",
                                       "avg_minimal_precision", "avg_minimal_recall"])


def test_cli_user_errors_are_one_line(tmp_path):
    result = run_cli("--gold_path=%s/nothing.jsonl.gz" % tmp_path, "--predictions_path=x")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "t2t-tydi-eval: error: --gold_path %s/nothing.jsonl.gz does not exist; give a path "
        "or glob of jsonl(.gz) files" % tmp_path]
    gold, preds = _files(tmp_path, [{"example_id": 1, "language": "thai",
                                     "yes_no_answer": "MAYBE"}])
    result = run_cli("--gold_path=" + gold, "--predictions_path=" + preds)
    assert result.returncode == 2
    assert "yes_no_answer 'MAYBE'; expected YES, NO or NONE" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------ files as users give them
def _prediction_line(example_id, language, passage, span, score=1.0):
    return {"example_id": example_id, "language": language, "passage_answer_index": passage,
            "passage_answer_score": score,
            "minimal_answer": {"start_byte_offset": span[0], "end_byte_offset": span[1]},
            "minimal_answer_score": score, "yes_no_answer": "NONE"}


THAI_RIGHT = _prediction_line(-(2 ** 63) + 5, "thai", 0, (10, 20))
ARABIC_RIGHT = _prediction_line(2 ** 63 - 7, "arabic", 1, (32, 36))


def run_in_process(capsys, *args):
    """t2t-tydi-eval in this process: (exit code, stdout, stderr)."""
    from absl import flags
    from absl.testing import flagsaver
    from t2t.bin import cli, t2t_tydi_eval
    with flagsaver.flagsaver():
        flags.FLAGS.unparse_flags()
        with pytest.raises(SystemExit) as info:
            cli.run_main(t2t_tydi_eval.main, "t2t-tydi-eval",
                         argv=["t2t-tydi-eval"] + list(args))
    out, err = capsys.readouterr()
    return info.value.code or 0, out, err


def test_cli_glob_reads_every_matching_file(tmp_path, capsys):
    gold, _ = _files(tmp_path, [])
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "a.jsonl").write_text(json.dumps(THAI_RIGHT) + "\n")
    (parts / "b.jsonl").write_text(json.dumps(ARABIC_RIGHT) + "\n")
    code, out, err = run_in_process(capsys, "--gold_path=" + gold,
                                    "--predictions_path=%s/*.jsonl" % parts)
    assert code == 0, err
    assert "gold examples: 2, predictions: 2" in out
    averages = json.loads(out.strip().splitlines()[-1])
    assert averages["avg_passage_f1"] == 1.0 and averages["avg_minimal_f1"] == 1.0
    assert "no prediction" not in err


def test_cli_reports_duplicate_example_ids_and_keeps_the_last(tmp_path, capsys):
    wrong_thai = _prediction_line(THAI_RIGHT["example_id"], "thai", 1, (30, 40))
    gold, preds = _files(tmp_path, [wrong_thai, ARABIC_RIGHT, THAI_RIGHT, wrong_thai,
                                    ARABIC_RIGHT])
    code, out, err = run_in_process(capsys, "--gold_path=" + gold, "--predictions_path=" + preds)
    assert code == 0, err
    # tydi_eval's rule: the last line of an example wins (thai: the wrong one).
    averages = json.loads(out.strip().splitlines()[-1])
    assert averages["avg_passage_f1"] == 0.5
    assert "gold examples: 2, predictions: 2" in out
    assert ("t2t-tydi-eval: warning: 3 prediction lines repeat an example_id already "
            "predicted (2 example_ids, the first %d)" % THAI_RIGHT["example_id"]) in err


def test_cli_warns_when_no_prediction_was_read(tmp_path, capsys):
    gold, preds = _files(tmp_path, [])
    code, out, err = run_in_process(capsys, "--gold_path=" + gold, "--predictions_path=" + preds)
    assert code == 0
    assert "t2t-tydi-eval: warning: no prediction was read from %s" % preds in err
    assert json.loads(out.strip().splitlines()[-1])["avg_minimal_f1"] == 0.0


def test_cli_truncated_gold_file_is_one_line(tmp_path, capsys):
    from t2t.tydiqa.synthetic import learnable_examples
    gold = write_jsonl_gz(str(tmp_path / "dev.jsonl.gz"), learnable_examples(300, seed=3))
    data = open(gold, "rb").read()
    open(gold, "wb").write(data[:len(data) // 2])
    code, _, err = run_in_process(capsys, "--gold_path=" + gold,
                                  "--predictions_path=" + gold)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith("t2t-tydi-eval: error: %s is truncated or damaged" % gold)
    assert "complete lines" in lines[0] and lines[0].endswith(
        "delete it and download or copy it again")
