"""t2t-bleu: corpus BLEU (sacrebleu) of translations against a reference.

    t2t-bleu --translation=newstest2014.de.decodes --reference=newstest2014.de
    # BLEU_uncased =  28.04  (sacrebleu nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:2.6.0)
    # BLEU_cased =  27.31  (sacrebleu nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0)

    t2t-bleu --translations_dir=translations/ --reference=newstest2014.de \\
        --event_dir=train/eval_bleu --wait_minutes=60
    # scores every step-stamped file translations/<name>-<steps> (oldest step first, waiting
    # for new ones), prints "<file>: BLEU_cased = ...", writes TensorBoard events with the
    # file's step and time, and remembers the last step in <event_dir>/last_evaluated_step.txt

Flags are T2T 1.15.7's (--source is accepted and unused, as there). The score is
sacrebleu's standard corpus BLEU on detokenized text (T2T's t2t-bleu used its own
tokenizer); --tokenize picks sacrebleu's tokenizer.
"""
import os
import time

from absl import flags, logging
import tensorflow as tf

from t2t.bin import cli
from t2t.core import errors
from t2t.evaluation import bleu_hook

FLAGS = flags.FLAGS


_define = cli.define_once  # flags other programs in this process define are kept


_define(flags.DEFINE_string, "source", None,
        "Path to the source-language file (unused, as in T2T).")
_define(flags.DEFINE_string, "reference", None, "Path to the reference translation file.")
_define(flags.DEFINE_string, "translation", None, "Path to the MT system translation file.")
_define(flags.DEFINE_string, "translations_dir", None,
        "Folder of step-stamped translation files (<name>-<steps>) to score one by one.")
_define(flags.DEFINE_string, "event_dir", None, "Where --translations_dir writes its events.")
_define(flags.DEFINE_string, "bleu_variant", "both",
        "cased (case-sensitive), uncased, or both.")
_define(flags.DEFINE_string, "tag_suffix", "",
        "Appended to the BLEU_cased and BLEU_uncased tags.")
_define(flags.DEFINE_integer, "min_steps", -1,
        "Skip translations of fewer steps; -1: continue after "
        "<event_dir>/last_evaluated_step.txt (or from 0).")
_define(flags.DEFINE_integer, "wait_minutes", 0,
        "Wait up to this long for a new translation file.")
_define(flags.DEFINE_bool, "report_zero", None,
        "Write BLEU=0 at step 0, timed at the oldest file of --translations_dir; default: "
        "True when starting from step 0.")
_define(flags.DEFINE_string, "tokenize", "13a",
        "sacrebleu tokenizer: 13a, intl, zh, char, none, ...")

VARIANTS = {"uncased": ["uncased"], "cased": ["cased"], "both": ["uncased", "cased"]}


def read_lines(filename):
    """The lines of a UTF-8 file; a final newline does not start another line."""
    if not tf.io.gfile.exists(filename):
        raise errors.UserError("%s does not exist" % filename)
    with tf.io.gfile.GFile(filename, "rb") as f:
        text = f.read().decode("utf-8")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def bleu_scores(reference_lines, translation_lines, variant="both", tokenize="13a"):
    """[(tag, BLEU 0..100, sacrebleu signature)] for "uncased" and/or "cased".

        bleu_scores(["The cat sat ."], ["the cat sat ."])
        # [("BLEU_uncased", 100.0, "nrefs:1|case:lc|..."), ("BLEU_cased", 59.46, "...")]
    """
    if variant not in VARIANTS:
        raise errors.UserError("--bleu_variant %r: use cased, uncased or both" % variant)
    if len(reference_lines) != len(translation_lines):
        raise errors.UserError("the reference has %d lines but the translation %d; give one "
                               "translation per reference line" % (len(reference_lines),
                                                                   len(translation_lines)))
    results = []
    for case in VARIANTS[variant]:
        try:
            score, signature = bleu_hook.sacrebleu_corpus_score(
                translation_lines, reference_lines, lowercase=(case == "uncased"),
                tokenize=tokenize)
        except ValueError as error:
            raise errors.UserError(str(error)) from None
        results.append(("BLEU_" + case, score, signature))
    return results


def _summary_event(values, wall_time, step):
    summary = tf.compat.v1.Summary(value=[
        tf.compat.v1.Summary.Value(tag=tag, simple_value=value) for tag, value in values])
    return tf.compat.v1.Event(summary=summary, wall_time=wall_time, step=step)


def _wait_for_dir(transl_dir, wait_minutes):
    exit_time = time.time() + wait_minutes * 60
    while not tf.io.gfile.isdir(transl_dir):
        if time.time() > exit_time:
            raise errors.UserError("--translations_dir %s does not exist" % transl_dir)
        logging.info("Translation dir %s does not exist, waiting till %s.", transl_dir,
                     time.asctime(time.localtime(exit_time)))
        time.sleep(10)


def score_translations_dir(transl_dir, reference, event_dir, variant="both", tag_suffix="",
                           min_steps=-1, wait_minutes=0, report_zero=None, tokenize="13a"):
    """Score each step-stamped file of `transl_dir`; events into `event_dir`.

    Returns [(steps, [(tag, score, signature)])] for the files scored.
    """
    _wait_for_dir(transl_dir, wait_minutes)
    tf.io.gfile.makedirs(event_dir)
    last_step_file = os.path.join(event_dir, "last_evaluated_step.txt")
    if min_steps == -1:
        min_steps = 0
        if tf.io.gfile.exists(last_step_file):
            with tf.io.gfile.GFile(last_step_file) as f:
                min_steps = int(f.read()) + 1
    if report_zero is None:
        report_zero = min_steps == 0
    reference_lines = read_lines(reference)
    scored = []
    with tf.Graph().as_default():  # FileWriter is graph-mode only.
        writer = tf.compat.v1.summary.FileWriter(event_dir)
        for stepfile in bleu_hook.stepfiles_iterator(transl_dir, wait_minutes, min_steps,
                                                     path_suffix=""):
            if report_zero:
                files = [os.path.join(transl_dir, f) for f in tf.io.gfile.listdir(transl_dir)]
                start_time = min(os.path.getmtime(f) for f in files if os.path.isfile(f))
                writer.add_event(_summary_event(
                    [(tag + tag_suffix, 0.0) for tag in
                     ("BLEU_" + case for case in VARIANTS[variant])], start_time, 0))
                report_zero = False
            results = bleu_scores(reference_lines, read_lines(stepfile.filename), variant,
                                  tokenize)
            for tag, score, signature in results:
                print("%s: %s = %6.2f  (sacrebleu %s)" % (stepfile.filename, tag, score,
                                                          signature))
            writer.add_event(_summary_event([(tag + tag_suffix, score)
                                             for tag, score, _ in results],
                                            stepfile.mtime, stepfile.steps))
            writer.flush()
            with tf.io.gfile.GFile(last_step_file, "w") as f:
                f.write("%d\n" % stepfile.steps)
            scored.append((stepfile.steps, results))
        writer.close()
    return scored


def main(argv):
    cli.reject_extra_args(argv, "t2t-bleu")
    logging.set_verbosity(logging.INFO)
    if not FLAGS.reference:
        raise errors.UserError("give --reference (the reference translation file)")
    reference = os.path.expanduser(FLAGS.reference)
    if FLAGS.translation:
        if FLAGS.translations_dir:
            raise errors.UserError("give either --translation or --translations_dir, not both")
        results = bleu_scores(read_lines(reference),
                              read_lines(os.path.expanduser(FLAGS.translation)),
                              FLAGS.bleu_variant, FLAGS.tokenize)
        for tag, score, signature in results:
            print("%s = %6.2f  (sacrebleu %s)" % (tag, score, signature))
        return 0
    if not FLAGS.translations_dir:
        raise errors.UserError("give --translation (one file) or --translations_dir (a folder "
                               "of step-stamped files)")
    if not FLAGS.event_dir:
        raise errors.UserError("--translations_dir needs --event_dir for its events")
    score_translations_dir(
        os.path.expanduser(FLAGS.translations_dir), reference,
        os.path.expanduser(FLAGS.event_dir), FLAGS.bleu_variant, FLAGS.tag_suffix,
        FLAGS.min_steps, FLAGS.wait_minutes, FLAGS.report_zero, FLAGS.tokenize)
    return 0


def console_main():
    """Entry point of the `t2t-bleu` console script."""
    cli.run_main(main, "t2t-bleu", doc=__doc__)


if __name__ == "__main__":
    console_main()
