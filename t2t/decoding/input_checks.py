"""What a decoder input must be: ids the model's vocabulary holds, with one-line reasons.

    encode_input(text_encoder.TextEncoder(), "0 1 1", vocab_size=4)   # [2, 3, 3]
    check_inputs(["0 1", "0 7"], text_encoder.TextEncoder(), 4, "in.txt")
    # UserError: in.txt line 2: token '7' is outside the vocabulary; inputs are ...

`t2t.decoding.decoding` re-exports these names.
"""
from t2t.core import errors
from t2t.encoders import text_encoder


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
    """UserError naming the first record of `inputs` (in file order) that cannot be encoded.

        check_inputs(["0 1", "0 7"], text_encoder.TextEncoder(), 4, "in.txt")
        # UserError: in.txt line 2: token '7' is outside the vocabulary; inputs are ...
    """
    what = "line" if delimiter == "\n" else "record"
    for number, text in enumerate(inputs, 1):
        try:
            encode_input(vocabulary, text, vocab_size)
        except ValueError as error:
            raise errors.UserError("%s %s %d: %s" % (source, what, number, error)) from None
