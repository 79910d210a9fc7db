"""t2t-decoder's file and terminal decoding with a loaded `TrainedModel` (any engine).

    model = t2t.load("~/t2t_train/m30k", engine="ctranslate2")
    settings = settings_from_decode_hparams(decoding.decode_hparams("beam_size=4,alpha=0.6"))
    decode_file(model, "test.en", "test.de", settings, batch_size=32)
    # test.de: one decode per line of test.en, in its order; the log ends with
    # "decode test.en done: 1,000 sentences, 12,514 tokens, ... 4.1 s"

Only the decode hparams an engine has an equivalent for are taken; any other one set away
from its default is a one-line error naming it (`unsupported_decode_hparams`).
"""
import os

from t2t.core import atomic_files
from t2t.core import errors
from t2t.core.progress import Progress
from t2t.decoding import decoding
import t2t.inference.tf_engines as tf_engines

# The decode hparams that map onto DecodeSettings or the file's layout.
SUPPORTED = ("beam_size", "alpha", "extra_length", "return_beams", "write_beam_scores",
             "batch_size", "max_input_size", "delimiter", "log_results", "decode_to_file",
             "decode_reference", "decode_in_memory", "decode_timeout_mins",
             "summaries_log_dir", "shards", "shard_id", "num_samples")


def unsupported_decode_hparams(decode_hp, engine):
    """UserError naming decode hparams set away from T2T's defaults that `engine` lacks."""
    defaults = decoding.decode_hparams().values()
    values = decode_hp.values()
    unsupported = sorted(name for name, value in values.items()
                         if name not in SUPPORTED and value != defaults.get(name))
    if unsupported:
        raise errors.UserError(
            "--decode_hparams %s have no equivalent in the %s engine; it takes %s" % (
                ", ".join("%s=%s" % (n, values[n]) for n in unsupported), engine,
                ", ".join(n for n in SUPPORTED[:7])))
    if decode_hp.shards > 1:
        raise errors.UserError("--decode_shards is for the TensorFlow engine; the %s engine "
                               "decodes a file in one process" % engine)


def settings_from_decode_hparams(decode_hp):
    """DecodeSettings of T2T decode hparams (return_beams: every beam)."""
    return tf_engines.DecodeSettings(
        beam_size=decode_hp.beam_size, alpha=decode_hp.alpha,
        nbest=decode_hp.beam_size if decode_hp.return_beams else 1,
        extra_length=decode_hp.extra_length)


def format_hypotheses(hypotheses, write_scores):
    """One output line: the hypotheses tab-separated, each with "\\t<score>" when asked."""
    return "\t".join("%s\t%.2f" % (h.text, h.score) if write_scores else h.text
                     for h in hypotheses)


def decode_file(model, filename, decode_to_file, settings, batch_size=32, delimiter="\n",
                write_scores=False):
    """Decode every record of `filename` into `decode_to_file` (atomically), in order.

    Returns the output lines.
    """
    with open(filename, encoding="utf-8") as handle:
        records = handle.read().split(delimiter)
    if records and not records[-1]:
        records.pop()  # the delimiter ending the last record
    if not records:
        raise errors.UserError("%s has no lines to decode" % filename)
    progress = Progress("decode %s" % os.path.basename(filename), unit="sentences",
                        total=len(records))
    decoded = model.decode([record.strip() for record in records], nbest=settings.nbest,
                           beam_size=settings.beam_size, alpha=settings.alpha,
                           extra_length=settings.extra_length, batch_size=batch_size,
                           progress=progress)
    lines = [format_hypotheses(hypotheses, write_scores) for hypotheses in decoded]
    seconds = max(progress.seconds, 1e-9)
    progress.done(**{"sentences/s": len(lines) / seconds,
                     "tokens/s": progress.extra.get("tokens", 0) / seconds})
    with atomic_files.atomic_write(decode_to_file, "w") as out:
        out.write("".join(line + delimiter for line in lines))
    return lines


def decode_typed_lines(model, settings, read_line=input, say=print):
    """Decode lines typed in a terminal until "q" or end of input; returns how many."""
    count = 0
    for _, line in decoding.typed_lines(read_line):
        hypotheses = model.decode([line], nbest=settings.nbest, beam_size=settings.beam_size,
                                  alpha=settings.alpha, extra_length=settings.extra_length)[0]
        say(format_hypotheses(hypotheses, False).replace("\t", "\n"))
        count += 1
    return count
