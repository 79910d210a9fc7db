"""What a decoder input must be: UTF-8 text, ids the model's vocabulary holds, and a length
the model was trained on; each check ends in one line that names the input and the fix.

    read_text_lines("in.txt")       # ["ab", "c"]; a latin-1 file:
    # UserError: in.txt line 2: not UTF-8 (byte 0xe9 at column 4); convert it to UTF-8,
    # e.g. iconv -f latin1 -t utf-8 in.txt > in.utf8.txt
    text_of(b"caf\\xc3\\xa9", "input 3")                                # "café"
    encode_input(text_encoder.TextEncoder(), "0 1 1", vocab_size=4)   # [2, 3, 3]
    check_inputs(["0 1", "0 7"], text_encoder.TextEncoder(), 4, "in.txt")
    # UserError: in.txt line 2: token '7' is outside the vocabulary; inputs are ...
    input_length_limit(hparams, decode_hp)    # (128, "hparams.max_length=128: training ...")
    limit_input_lengths([[5] * 300, [6, 7]], hparams, decode_hp, "in.txt")
    # ([[5] * 300, [6, 7]], "in.txt: 1 of 2 inputs are longer than the 128 ids ...")

Every function works on plain Python values (no Estimator, no input_fn). These checks run
before any model work; `t2t.decoding.decoding` uses them.
"""
import math
import numbers
import os

import tensorflow as tf
from absl import logging

from t2t.core import errors
from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.model import model_hparams
from t2t.search import beam_search

_CONVERT_HINT = "convert it to UTF-8, e.g. iconv -f latin1 -t utf-8"


def check_search_settings(beam_size, alpha, stopping_bound="max_length"):
    """Refuse a beam size or length penalty no search uses, in one line (UserError): the one
    check of t2t-decoder's --decode_hparams (every engine), t2t-exporter's and t2t.load's.

        check_search_settings(4, 0.6)     # fine
        check_search_settings(0, 0.6)     # UserError: beam_size=0: give a whole number of
                                          # hypotheses, 1 (greedy) or more
        check_search_settings(4, -1)      # UserError: alpha=-1: give the length penalty's ...
        check_search_settings(4, 0.6, "current_lenght")
        # UserError: stopping_bound='current_lenght': did you mean current_length? ...

    T2T decoded greedily with a beam size below 1 and took a negative alpha (which favours
    ever longer outputs).
    """
    if (isinstance(beam_size, bool) or not isinstance(beam_size, numbers.Real)
            or not float(beam_size).is_integer() or beam_size < 1):
        raise errors.UserError("beam_size=%r: give a whole number of hypotheses, 1 (greedy) "
                               "or more" % (beam_size,))
    if (isinstance(alpha, bool) or not isinstance(alpha, numbers.Real)
            or not math.isfinite(alpha) or alpha < 0):
        raise errors.UserError("alpha=%r: give the length penalty's exponent, 0 (none) or more "
                               "(T2T's default: 0.6)" % (alpha,))
    if stopping_bound not in beam_search.STOPPING_BOUNDS:
        close = registry.closest_names(str(stopping_bound), beam_search.STOPPING_BOUNDS, n=1)
        raise errors.UserError(
            "stopping_bound=%r: %suse max_length (T2T's exact search) or current_length (a "
            "sentence ends once its best finished hypothesis beats every alive one at its "
            "current length)" % (stopping_bound, "did you mean %s? " % close[0] if close else ""))


def _not_utf8_reason(data, error):
    """"line N: not UTF-8 (byte 0x.. at column C)" for a UnicodeDecodeError of `data`."""
    start = error.start
    line = data.count(b"\n", 0, start) + 1
    line_start = data.rfind(b"\n", 0, start) + 1
    column = len(data[line_start:start].decode("utf-8", "replace")) + 1
    return line, "not UTF-8 (byte 0x%02x at column %d)" % (data[start], column)


def read_text_lines(path, delimiter="\n"):
    """The records of text file `path` split on `delimiter`, in order, the empty one after a
    final delimiter dropped; UserError naming the line, byte and column of non-UTF-8 text.

        read_text_lines("in.txt")              # "ab\\nc\\n" -> ["ab", "c"]
        read_text_lines("latin1.txt")
        # UserError: latin1.txt line 2: not UTF-8 (byte 0xe9 at column 4); convert it to
        # UTF-8, e.g. iconv -f latin1 -t utf-8 latin1.txt > latin1.utf8.txt

    Records keep their spaces (callers strip them). The line is counted in newlines
    whatever the delimiter, as an editor shows it.
    """
    records = read_text(path).split(delimiter)
    if records and not records[-1]:
        records.pop()  # The delimiter ending the last record.
    return records


def read_text(path):
    """The whole of text file `path`; a UserError as `read_text_lines` gives if not UTF-8."""
    with tf.io.gfile.GFile(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line, reason = _not_utf8_reason(data, error)
        stem, ext = os.path.splitext(path)
        raise errors.UserError("%s line %d: %s; %s %s > %s" % (
            path, line, reason, _CONVERT_HINT, path, stem + ".utf8" + (ext or ".txt"))
        ) from None


def text_of(value, where, fix=None):
    """`value` as str: a str as it is, bytes decoded as UTF-8; UserError naming `where` (and
    `fix`, what to do, if given).

        text_of("abc", "input 1")              # "abc"
        text_of(b"caf\\xc3\\xa9", "input 3")     # "café"
        text_of(b"caf\\xe9", "input 3")
        # UserError: input 3: not UTF-8 (byte 0xe9 at column 4); give str or UTF-8 bytes ...
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        data = bytes(value)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            line, reason = _not_utf8_reason(data, error)
            at = " line %d" % line if b"\n" in data else ""
            fix = fix or ("give str or UTF-8 bytes (bytes in another encoding: decode them "
                          "first, e.g. value.decode('latin-1'))")
            raise errors.UserError("%s%s: %s; %s" % (where, at, reason, fix)) from None
    raise errors.UserError("%s is a %s; give text (str, or UTF-8 bytes)" % (
        where, type(value).__name__))


def _input_vocab_size(hparams, feature):
    """How many ids the model's `feature` embedding holds (None if unknown)."""
    sizes = getattr(hparams.problem_hparams, "vocab_size", None) or {}
    size = sizes.get(feature) if isinstance(sizes, dict) else None
    if size is None:
        size = getattr(hparams.problem_hparams.vocabulary.get(feature), "vocab_size", None)
    return size


def _is_integer(token):
    try:
        int(token)
    except ValueError:
        return False
    return True


def encode_input(vocabulary, text, vocab_size=None):
    """The ids of one input; ValueError with a one-line reason for text the model cannot take.

    A plain `TextEncoder` (the algorithmic problems) reads space-separated integers, so its
    errors name the token:

        encode_input(text_encoder.TextEncoder(), "0 1 1", vocab_size=4)   # [2, 3, 3]
        encode_input(text_encoder.TextEncoder(), "0 x", vocab_size=4)
        # ValueError: token 'x' is not a number; inputs are space-separated tokens 0..1
        encode_input(text_encoder.TextEncoder(), "0 5", vocab_size=4)
        # ValueError: token '5' is outside the vocabulary; inputs are ... tokens 0..1
    """
    numeric = type(vocabulary) is text_encoder.TextEncoder  # pylint: disable=unidiomatic-typecheck
    reserved = vocabulary.num_reserved_ids if numeric else 0
    expected = ("inputs are space-separated tokens 0..%d" % (vocab_size - reserved - 1)
                if numeric and vocab_size else "")
    if numeric:
        for token in text.split():
            if not _is_integer(token):
                raise ValueError("token %r is not a number; %s" % (token, expected or
                                 "inputs are space-separated integers"))
    try:
        ids = vocabulary.encode(text)
    except (ValueError, KeyError, UnicodeError) as error:
        raise ValueError("cannot be encoded (%s)" % str(error).strip()) from None
    if vocab_size:
        for position, id_ in enumerate(ids):
            if not 0 <= id_ < vocab_size:
                if numeric:
                    raise ValueError("token %r is outside the vocabulary; %s" % (
                        text.split()[position], expected))
                raise ValueError("id %d is outside the vocabulary of %d ids" % (id_, vocab_size))
    return ids


def check_inputs(inputs, vocabulary, vocab_size, source, delimiter="\n"):
    """The ids of each of `inputs` (no EOS); UserError naming the first record (in file
    order) that cannot be encoded.

        check_inputs(["0 1", "0 3"], text_encoder.TextEncoder(), 4, "in.txt")  # [[2, 3], [2, 5]]
        check_inputs(["0 1", "0 7"], text_encoder.TextEncoder(), 4, "in.txt")
        # UserError: in.txt line 2: token '7' is outside the vocabulary; inputs are ...
    """
    what = "line" if delimiter == "\n" else "record"
    ids = []
    for number, text in enumerate(inputs, 1):
        try:
            ids.append(encode_input(vocabulary, text, vocab_size))
        except ValueError as error:
            raise errors.UserError("%s %s %d: %s" % (source, what, number, error)) from None
    return ids


# ---------------------------------------------------------------------------- lengths
# Lengths count ids with the EOS the decoder appends, as training examples (stored with
# EOS) and decode hparam max_input_size (cut to max_input_size - 1 ids, then EOS) do.
def trained_input_length(hparams):
    """(the longest input the model was trained on, in ids with EOS, or None; what sets it).

    Training drops examples longer than the problem's `max_length(hparams)`
    (`split_to_length`, else `max_length`, else `batch_size`: T2T's rule) and cuts inputs
    to `max_input_seq_length` when that is set; the smaller one holds.

        trained_input_length(transformer_multi30k hparams)
        # (128, "hparams.max_length=128: training dropped longer examples")
        trained_input_length(hparams with max_length 0)
        # (4096, "hparams.batch_size=4096 (max_length=0): training dropped longer examples")
    """
    candidates = []
    cut = hparams.get("max_input_seq_length") or 0
    if cut > 0:
        candidates.append((cut, "hparams.max_input_seq_length=%d: training cut inputs there"
                           % cut))
    problem = model_hparams.attached_problem(hparams)
    if problem is not None:
        longest = problem.max_length(hparams)
    else:
        longest = (hparams.get("split_to_length") or hparams.get("max_length") or
                   hparams.get("batch_size") or 0)
    if longest and longest > 0:
        for name in ("split_to_length", "max_length", "batch_size"):
            if hparams.get(name) == longest:
                what = "hparams.%s=%d" % (name, longest)
                if name == "batch_size":
                    what += " (max_length=0)"
                break
        else:
            what = "the problem's max_length, %d" % longest
        candidates.append((longest, what + ": training dropped longer examples"))
    if not candidates:
        return None, "no length limit in the hparams"
    return min(candidates, key=lambda candidate: candidate[0])


def input_length_limit(hparams, decode_hp):
    """(limit or None, what sets it): the decode hparam max_input_size when set (inputs are
    cut to it, as in T2T), else the length the model was trained on (`trained_input_length`;
    longer inputs are decoded in full, with a warning).

        input_length_limit(hp, decode_hparams("max_input_size=50"))
        # (50, "--decode_hparams=max_input_size=50")
        input_length_limit(hp, decode_hparams())
        # (128, "hparams.max_length=128: training dropped longer examples")
    """
    if decode_hp.get("max_input_size", -1) > 0:
        return decode_hp.max_input_size, "--decode_hparams=max_input_size=%d" % (
            decode_hp.max_input_size)
    return trained_input_length(hparams)


def _is_long(ids, limit):
    return limit is not None and len(ids) + 1 > limit  # + the EOS


def count_long_inputs(id_lists, limit):
    """How many id lists (without EOS) exceed `limit` ids once EOS is appended."""
    return sum(1 for ids in id_lists if _is_long(ids, limit))


def cut_long_inputs(id_lists, limit):
    """(the lists cut to limit - 1 ids, room for EOS; how many were cut). T2T's cut of
    decode hparam max_input_size: the first ids are kept.

        cut_long_inputs([[5, 6, 7, 8], [9]], 3)    # ([[5, 6], [9]], 1)
    """
    if limit is None or limit <= 0:
        return [list(ids) for ids in id_lists], 0
    cut = [list(ids[:limit - 1]) if _is_long(ids, limit) else list(ids) for ids in id_lists]
    return cut, count_long_inputs(id_lists, limit)


def long_inputs_warning(number_long, total, limit, what_sets_it, source, cut=False,
                        how_to_cut="--decode_hparams=max_input_size=%d"):
    """The one warning line for inputs longer than `limit` ids (EOS included).

        long_inputs_warning(1, 3, 128, "hparams.max_length=128: training dropped longer "
                            "examples", "in.txt")
        # "in.txt: 1 of 3 inputs are longer than the 128 ids (EOS included) the model was
        #  trained on (hparams.max_length=128: training dropped longer examples); they are
        #  decoded in full, slowly and likely badly; cut them with
        #  --decode_hparams=max_input_size=128"
        long_inputs_warning(1, 3, 50, "--decode_hparams=max_input_size=50", "in.txt", cut=True)
        # "in.txt: 1 of 3 inputs were cut to 50 ids (EOS included) by
        #  --decode_hparams=max_input_size=50"

    `how_to_cut` names the setting that cuts (`t2t.load(..., max_input_size=N)` in Python).
    """
    which = "the input" if total == 1 else "%d of %d inputs" % (number_long, total)
    if cut:
        return "%s: %s %s cut to %d ids (EOS included) by %s" % (
            source, which, "was" if total == 1 else "were", limit, what_sets_it)
    return ("%s: %s %s longer than the %d ids (EOS included) the model was trained on (%s); "
            "%s decoded in full, slowly and likely badly; cut %s with %s" % (
                source, which, "is" if total == 1 else "are", limit, what_sets_it,
                "it is" if total == 1 else "they are", "it" if total == 1 else "them",
                how_to_cut % limit))


def limit_input_lengths(id_lists, hparams, decode_hp, source):
    """(id lists to decode, the line or None), the line also logged (a warning, or info
    for max_input_size's cut). The id lists are without EOS.

    With decode hparam max_input_size the inputs are cut to it (T2T's behaviour) and the
    line says how many; without it, inputs longer than the model was trained on are
    decoded in full and the line says how many, at which limit, set by what, and how to
    cut them:

        limit_input_lengths([[5] * 300, [6, 7]], hparams, decode_hparams(), "in.txt")
        # ([[5] * 300, [6, 7]], "in.txt: 1 of 2 inputs are longer than the 128 ids ...")
    """
    limit, what_sets_it = input_length_limit(hparams, decode_hp)
    cuts = decode_hp.get("max_input_size", -1) > 0
    if cuts:
        id_lists, number_long = cut_long_inputs(id_lists, limit)
    else:
        number_long = count_long_inputs(id_lists, limit)
    if not number_long:
        return id_lists, None
    message = long_inputs_warning(number_long, len(id_lists), limit, what_sets_it, source,
                                  cut=cuts)
    if cuts:
        logging.info("%s", message)
    else:
        logging.warning("%s", message)
    return id_lists, message
