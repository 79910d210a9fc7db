"""The optional model hparams the input pipeline reads, read once and checked: `InputSettings`.

T2T read these with a `getattr` and a default wherever they were needed, so that
an hparams set without them still worked. `InputSettings.from_hparams` does that reading
in one place, at the boundary (`data_reader.input_fn`, `preprocess_example_common`), and
checks each value there, so a wrong value fails with a message naming the hparam instead
of deep inside a tf.data graph. Every default is T2T's.

    hparams = common_hparams.basic_params1()   # batch_shuffle_size=512, prepend_mode="none"
    settings = InputSettings.from_hparams(hparams)
    settings.batch_shuffle_size                # 512
    settings.labels_feature_name               # "targets" (basic_params1 has no such hparam)
    InputSettings.from_hparams(None)           # every default: batch_shuffle_size 0, ...

    hparams.prepend_mode = "prepend_inputs"
    InputSettings.from_hparams(hparams)
    # ValueError: hparams.prepend_mode = 'prepend_inputs': expected one of 'none',
    #   'prepend_inputs_masked_attention', 'prepend_inputs_full_attention'

Hparams every set has (batch_size, min_length, max_length, min_length_bucket,
length_bucket_step, use_fixed_batch_size) are no settings: the pipeline reads them from
the hparams directly.
"""
import dataclasses
import numbers

import numpy as np

from t2t.core import errors

PREPEND_MODES = ("none", "prepend_inputs_masked_attention", "prepend_inputs_full_attention")
TOKEN_BATCHING = ("buckets", "sorted")


@dataclasses.dataclass(frozen=True)
class InputSettings:
    """The optional hparams of the input pipeline and the common preprocessing.

    | hparam                         | default   | what it does (who reads it)              |
    |--------------------------------|-----------|------------------------------------------|
    | pack_dataset                   | False     | pack examples into rows (Problem, input) |
    | eval_drop_long_sequences       | False     | eval drops examples over max_length too  |
    | batch_shuffle_size             | 0         | training shuffles this many batches; 0:  |
    |                                |           | no shuffling (input_fn)                  |
    | split_targets_chunk_length     | 0         | cut targets into chunks this long (0:    |
    |                                |           | off; input_fn)                           |
    | split_targets_max_chunks       | 100       | chunks per example, >= 1                 |
    | split_targets_strided_training | False     | training batches mix chunk numbers (TPU) |
    | labels_feature_name            | "targets" | the feature input_fn gives as labels     |
    | token_batching                 | "buckets" | "buckets" (T2T's) or "sorted" (batching) |
    | pad_batch                      | False     | TPU: fill the last batch with zeros      |
    | max_input_seq_length           | 0         | truncate inputs (preprocessing), TPU pad |
    |                                |           | width (batching); 0: no limit            |
    | max_target_seq_length          | 0         | the same for targets                     |
    | prepend_mode                   | "none"    | or "prepend_inputs_masked_attention" /   |
    |                                |           | "prepend_inputs_full_attention": targets |
    |                                |           | become "inputs 0 targets"                |
    | split_to_length                | 0         | cut examples into chunks this long (0:   |
    |                                |           | off; preprocessing)                      |

    A flag (bool) also takes 0 or 1; a count (int) takes no bool and no fraction. For flags
    and counts None reads as the default, as the `getattr` probes treated it (a None
    batch_shuffle_size did not shuffle). A value of another kind, a negative count or an
    unknown mode raises ValueError naming the hparam.
    """
    pack_dataset: bool = False
    eval_drop_long_sequences: bool = False
    batch_shuffle_size: int = 0
    split_targets_chunk_length: int = 0
    split_targets_max_chunks: int = dataclasses.field(default=100, metadata={"minimum": 1})
    split_targets_strided_training: bool = False
    labels_feature_name: str = "targets"
    token_batching: str = "buckets"
    pad_batch: bool = False
    max_input_seq_length: int = 0
    max_target_seq_length: int = 0
    prepend_mode: str = "none"
    split_to_length: int = 0

    @classmethod
    def from_hparams(cls, hparams):
        """The settings in `hparams` (any object; None gives every default).

        An hparam the object lacks takes its default, as T2T's probes did:
        `from_hparams(HParams(batch_size=4096))` is `InputSettings()`.
        """
        if hparams is None:
            return cls()
        return cls(**{field.name: getattr(hparams, field.name, field.default)
                      for field in dataclasses.fields(cls)})

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            checked = _CHECKS[field.type](field, value)
            if checked is not value:
                # Frozen: normalised values (None -> default, numpy ints -> int) are set
                # here once, before anyone can read them.
                object.__setattr__(self, field.name, checked)
        _one_of("prepend_mode", self.prepend_mode, PREPEND_MODES)
        _one_of("token_batching", self.token_batching, TOKEN_BATCHING)


def _fail(name, value, expected):
    raise errors.UserError("hparams.%s = %r: expected %s" % (name, value, expected))


def _flag(field, value):
    if value is None:
        return field.default
    # The probes took any object's truth value, but a string such as "false" is true.
    if isinstance(value, bool):
        return value
    if isinstance(value, (numbers.Integral, np.bool_)) and value in (0, 1):
        return bool(value)
    _fail(field.name, value, "True or False")


def _count(field, value):
    if value is None:
        return field.default
    minimum = field.metadata.get("minimum", 0)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= minimum:
        return value if type(value) is int else int(value)
    _fail(field.name, value, "an int >= %d" % minimum + (" (0: off)" if minimum == 0 else ""))


def _text(field, value):
    # No None here: for prepend_mode the probes' readers disagreed on what None meant
    # (preprocessing prepended, fast decoding did not).
    if isinstance(value, str) and value:
        return value
    _fail(field.name, value, "a non-empty string")


def _one_of(name, value, allowed):
    if value not in allowed:
        _fail(name, value, "one of " + ", ".join(repr(v) for v in allowed))


# `field.type` is the class itself (no `from __future__ import annotations` here).
_CHECKS = {bool: _flag, int: _count, str: _text}
