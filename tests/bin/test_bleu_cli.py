"""t2t-bleu: sacrebleu corpus BLEU of a file, and of a folder of step-stamped files."""
import os
import subprocess
import sys

import pytest
import sacrebleu
import tensorflow as tf
from absl import flags
from absl.testing import flagsaver

from t2t.bin import t2t_bleu
from t2t.core import errors

FLAGS = flags.FLAGS
REFERENCE = ["The cat sat on the mat .", "A dog barked at the mailman today .",
             "Rain is expected tomorrow in the north ."]
GOOD = ["the cat sat on the mat .", "A dog barked at the postman today .",
        "Rain is expected tomorrow in the north ."]
BAD = ["a cat is on a mat", "dogs bark", "it rains"]


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


def sacrebleu_score(hyps, refs, lowercase):
    return sacrebleu.metrics.BLEU(lowercase=lowercase).corpus_score(hyps, [refs]).score


def test_bleu_scores_match_sacrebleu():
    results = t2t_bleu.bleu_scores(REFERENCE, GOOD)
    assert [tag for tag, _, _ in results] == ["BLEU_uncased", "BLEU_cased"]
    assert results[0][1] == pytest.approx(sacrebleu_score(GOOD, REFERENCE, True))
    assert results[1][1] == pytest.approx(sacrebleu_score(GOOD, REFERENCE, False))
    assert results[0][1] > results[1][1] > 0
    assert "case:lc" in results[0][2] and "case:mixed" in results[1][2]
    assert "tok:13a" in results[1][2]
    assert t2t_bleu.bleu_scores(REFERENCE, REFERENCE, "cased")[0][1] == pytest.approx(100.0)
    with pytest.raises(errors.UserError, match="3 lines but the translation 2"):
        t2t_bleu.bleu_scores(REFERENCE, GOOD[:2])
    with pytest.raises(errors.UserError, match="--bleu_variant"):
        t2t_bleu.bleu_scores(REFERENCE, GOOD, "lower")


def test_console_script_scores_one_file(tmp_path):
    program = os.path.join(os.path.dirname(sys.executable), "t2t-bleu")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [program, "--reference=%s" % write(tmp_path / "ref", REFERENCE),
         "--translation=%s" % write(tmp_path / "hyp", GOOD)],
        capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2
    expected = sacrebleu_score(GOOD, REFERENCE, False)
    assert lines[1].startswith("BLEU_cased = %6.2f  (sacrebleu nrefs:1|case:mixed|" % expected)
    result = subprocess.run([program, "--reference=%s" % (tmp_path / "ref")],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "t2t-bleu: error: give --translation (one file) or --translations_dir (a folder of "
        "step-stamped files)"]


def read_events(event_dir):
    events = []
    for path in sorted(tf.io.gfile.glob(os.path.join(event_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                events.append((event.step, value.tag, round(value.simple_value, 4)))
    return events


def test_translations_dir_writes_events_and_resumes(tmp_path, capsys):
    transl_dir = tmp_path / "translations"
    transl_dir.mkdir()
    write(transl_dir / "newstest.de-1000", BAD)
    write(transl_dir / "newstest.de-2000", GOOD)
    event_dir = str(tmp_path / "events")
    FLAGS.mark_as_parsed()
    with flagsaver.flagsaver(reference=write(tmp_path / "ref", REFERENCE),
                             translations_dir=str(transl_dir), event_dir=event_dir,
                             bleu_variant="cased", tag_suffix="_test"):
        assert t2t_bleu.main(["t2t-bleu"]) == 0
        out = capsys.readouterr().out.strip().splitlines()
        assert [line.split(":")[0] for line in out] == [
            str(transl_dir / "newstest.de-1000"), str(transl_dir / "newstest.de-2000")]
        good = round(sacrebleu_score(GOOD, REFERENCE, False), 4)
        bad = round(sacrebleu_score(BAD, REFERENCE, False), 4)
        # report_zero: BLEU 0 at step 0, then each file at its step.
        assert read_events(event_dir) == [(0, "BLEU_cased_test", 0.0),
                                          (1000, "BLEU_cased_test", bad),
                                          (2000, "BLEU_cased_test", good)]
        with open(os.path.join(event_dir, "last_evaluated_step.txt")) as f:
            assert f.read() == "2000\n"
        # A second run continues after the last evaluated step: nothing new to score.
        write(transl_dir / "newstest.de-3000", REFERENCE)
        assert t2t_bleu.main(["t2t-bleu"]) == 0
        out = capsys.readouterr().out.strip().splitlines()
        assert len(out) == 1 and out[0].startswith(str(transl_dir / "newstest.de-3000"))
        assert out[0].endswith("BLEU_cased = 100.00  (sacrebleu %s)" % (
            t2t_bleu.bleu_scores(REFERENCE, REFERENCE, "cased")[0][2]))
