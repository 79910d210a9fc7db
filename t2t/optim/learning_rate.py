"""Learning-rate schedules, as T2T 1.15.7's `utils/learning_rate.py`.

`learning_rate_schedule(hparams)` multiplies the factors named in the `*`-separated
`hparams.learning_rate_schedule` string, each a function of the global step. With
`hparams.learning_rate_warmup_steps = 8000` and `hidden_size = 512`:

    hparams.learning_rate_schedule = "constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size"
    hparams.learning_rate_constant = 2.0
    lr = learning_rate_schedule(hparams)   # a float32 scalar tensor
    # step 4000:  2.0 * (4000/8000) * 8000**-0.5 * 512**-0.5  = 4.94e-4
    # step 32000: 2.0 * 1.0 * 32000**-0.5 * 512**-0.5         = 4.94e-4

The schedule "legacy" (the default) is `legacy_learning_rate_schedule`: a warmup then the
decay named by `hparams.learning_rate_decay_scheme`, times `hparams.learning_rate` (and
times 0.002 for Adam-family optimizers). With `learning_rate_decay_scheme="noam"` it is
the Transformer paper's schedule; e.g. lr 0.1, warmup 4000, hidden 512 gives
`0.1 * 5000 * 0.002 * 512**-0.5 * min((s+1) * 4000**-1.5, (s+1)**-0.5)`.

Everything here builds graph tensors reading `tf.compat.v1.train.get_or_create_global_step()`.
"""
import math

import tensorflow as tf

from t2t.core.log_once import info_once

# Factor names understood by `learning_rate_factor`, for messages.
LEARNING_RATE_FACTORS = (
    "constant", "linear_warmup", "linear_decay", "cosdecay", "single_cycle_cos_decay",
    "multi_cycle_cos_decay", "rsqrt_decay", "rsqrt_normalized_decay", "exp_decay",
    "rsqrt_hidden_size", "legacy")
DECAY_SCHEMES = ("none", "noam", "exp", "piecewise", "cosine", "cyclelinear10x", "sqrt")


def _global_step(hparams):
    """The global step as float32, divided by the accumulation steps of a multistep optimizer.

    With `optimizer_multistep_accumulate_steps = 4` the optimizer applies one update every
    4 global steps, so schedules see step / 4 (as T2T).
    """
    step = tf.cast(tf.compat.v1.train.get_or_create_global_step(), tf.float32)
    multiplier = (hparams.get("optimizer_multistep_accumulate_steps")
                  if hparams is not None else None)
    if not multiplier:
        return step
    info_once("Dividing global step by %d for multi-step optimizer.", multiplier)
    return step / float(multiplier)


def _train_steps(name, hparams):
    train_steps = hparams.get("train_steps")
    if not train_steps:
        raise ValueError("learning rate factor %r needs hparams.train_steps; add it with "
                         "hparams.add_hparam('train_steps', N)" % name)
    return float(train_steps)


def learning_rate_factor(name, step_num, hparams):
    """One factor of the schedule, a float or a float32 scalar tensor.

    Args:
      name: a factor name, e.g. "linear_warmup" (see `LEARNING_RATE_FACTORS`).
      step_num: float32 scalar tensor, the (possibly multistep-adjusted) global step.
      hparams: HParams with the `learning_rate_*` fields of `basic_params1`.

    Example: with warmup 100, `learning_rate_factor("linear_warmup", 25., hp)` is 0.25 and
    `learning_rate_factor("rsqrt_decay", 25., hp)` is 100**-0.5 = 0.1.
    """
    warmup_steps = float(hparams.learning_rate_warmup_steps)
    if name == "constant":
        info_once("Base learning rate: %f", hparams.learning_rate_constant)
        return hparams.learning_rate_constant
    if name == "linear_warmup":
        return tf.minimum(1.0, step_num / warmup_steps)
    if name == "linear_decay":
        remaining = (_train_steps(name, hparams) - step_num) / hparams.learning_rate_decay_steps
        return tf.minimum(1.0, tf.maximum(0.0, remaining))
    if name == "cosdecay":  # OpenAI GPT: 1 during warmup, then cosine over decay_steps.
        in_warmup = tf.cast(step_num <= warmup_steps, tf.float32)
        decayed = 0.5 * (1.0 + tf.cos(math.pi * step_num / hparams.learning_rate_decay_steps))
        return in_warmup + (1.0 - in_warmup) * decayed
    if name == "single_cycle_cos_decay":
        # From 1 when warmup ends down to 0 at train_steps.
        train_steps = _train_steps(name, hparams)
        if train_steps <= warmup_steps:
            raise ValueError("single_cycle_cos_decay needs hparams.train_steps (%d) above "
                             "hparams.learning_rate_warmup_steps (%d)" %
                             (train_steps, warmup_steps))
        step = tf.maximum(step_num, warmup_steps) - warmup_steps
        return tf.cos(step * math.pi / (train_steps - warmup_steps)) / 2.0 + 0.5
    if name == "multi_cycle_cos_decay":
        # From 1 when warmup ends; one half-cycle every learning_rate_decay_steps.
        step = tf.maximum(step_num, warmup_steps) - warmup_steps
        return tf.cos(step * math.pi / hparams.learning_rate_decay_steps) / 2.0 + 0.5
    if name == "rsqrt_decay":
        return tf.math.rsqrt(tf.maximum(step_num, warmup_steps))
    if name == "rsqrt_normalized_decay":
        return math.sqrt(warmup_steps) * tf.math.rsqrt(tf.maximum(step_num, warmup_steps))
    if name == "exp_decay":
        progress = tf.maximum((step_num - warmup_steps) / hparams.learning_rate_decay_steps, 0.0)
        if hparams.learning_rate_decay_staircase:
            progress = tf.floor(progress)
        return tf.pow(float(hparams.learning_rate_decay_rate), progress)
    if name == "rsqrt_hidden_size":
        return hparams.hidden_size ** -0.5
    if name == "legacy":
        return legacy_learning_rate_schedule(hparams)
    raise ValueError("unknown learning rate factor %r in learning_rate_schedule; use factors "
                     "from: %s" % (name, ", ".join(LEARNING_RATE_FACTORS)))


def learning_rate_schedule(hparams):
    """The learning rate: the product of the factors in `hparams.learning_rate_schedule`.

    `hparams.learning_rate_minimum`, when set, is a floor on the result.

    Example: "constant*rsqrt_decay" with constant 2.0 and warmup 100 is 2.0 * 0.1 = 0.2 for
    steps up to 100 and 2.0 * 400**-0.5 = 0.1 at step 400.
    """
    step_num = _global_step(hparams)
    names = [name.strip() for name in hparams.learning_rate_schedule.split("*") if name.strip()]
    ret = tf.constant(1.0)
    for name in names:
        ret *= learning_rate_factor(name, step_num, hparams)
    minimum = hparams.get("learning_rate_minimum")
    if minimum:
        info_once("Applying learning rate minimum: %f", float(minimum))
        ret = tf.maximum(ret, float(minimum))
    return ret


def _optimizer_correction(hparams):
    # Adam-family optimizers were tuned with learning rates 500x smaller than SGD's.
    return 0.002 if "adam" in str(hparams.optimizer).lower() else 1.0


def legacy_learning_rate_schedule(hparams):
    """Backwards-compatible schedule: warmup, then `learning_rate_decay_scheme`.

    Returns `ret * correction * hparams.learning_rate` where `correction` is 0.002 for Adam
    optimizers and 1 otherwise, and `ret` is

    - "noam": `5000 * hidden_size**-0.5 * min((s+1) * warmup**-1.5, (s+1)**-0.5)`;
    - any other scheme: the exponential warmup `0.01**((warmup - s) / warmup)` before
      `warmup` steps, then `_learning_rate_decay(hparams, warmup)`.

    Example: scheme "none", warmup 100, lr 0.1, optimizer "sgd": 0.1 * 0.01 = 0.001 at step 0,
    0.1 * 0.1 = 0.01 at step 50, 0.1 from step 100 on.
    """
    step_num = _global_step(hparams)
    warmup_steps = float(hparams.learning_rate_warmup_steps)
    if hparams.learning_rate_decay_scheme == "noam":
        ret = 5000.0 * hparams.hidden_size ** -0.5 * tf.minimum(
            (step_num + 1) * warmup_steps ** -1.5, (step_num + 1) ** -0.5)
    else:
        warmup = _learning_rate_warmup(hparams.learning_rate_warmup_steps, hparams=hparams)
        decay = _learning_rate_decay(hparams, hparams.learning_rate_warmup_steps)
        ret = tf.where(step_num < warmup_steps, warmup, decay)
    info_once("Base learning rate: %f", hparams.learning_rate)
    return ret * _optimizer_correction(hparams) * hparams.learning_rate


def _legacy_sqrt_decay(step):
    """Decay like 1 / sqrt(step), times 500 so that it is 1 at step 250000."""
    return 500.0 / tf.sqrt(tf.maximum(step, 1.0))


def _piecewise_learning_rate(step, boundaries, values):
    """Multiplier 1 before `boundaries[0]`, then `values[i]` from `boundaries[i]` on."""
    values = [1.0] + [float(v) for v in values]
    boundaries = [float(b) for b in boundaries]
    return tf.compat.v1.train.piecewise_constant(step, boundaries, values, name="piecewise_lr")


def _learning_rate_decay(hparams, warmup_steps=0):
    """Multiplier for `hparams.learning_rate_decay_scheme` after warmup.

    "exp": `decay_rate ** ((s - warmup) / decay_steps)` (floored if staircase);
    "cosine": `0.5 * (1 + cos(pi * p / cycle))` with p the position in a back-and-forth cycle
    of `learning_rate_cosine_cycle_steps`; "cyclelinear10x": linear between 0.3 and 3.3 over
    `warmup` steps; "sqrt": `500 / sqrt(max(s - warmup, 1))`; "piecewise": needs
    `hparams.learning_rate_boundaries` and `learning_rate_multiples`; "none": 1.
    """
    scheme = hparams.learning_rate_decay_scheme
    warmup_steps = float(warmup_steps)
    global_step = _global_step(hparams)
    if not scheme or scheme == "none":
        return tf.constant(1.0)
    info_once("Applying learning rate decay: %s.", scheme)
    if scheme == "exp":
        progress = (global_step - warmup_steps) / hparams.learning_rate_decay_steps
        if hparams.learning_rate_decay_staircase:
            progress = tf.floor(progress)
        return tf.pow(float(hparams.learning_rate_decay_rate), progress)
    if scheme == "piecewise":
        if "learning_rate_boundaries" not in hparams or "learning_rate_multiples" not in hparams:
            raise ValueError("learning_rate_decay_scheme 'piecewise' needs hparams."
                             "learning_rate_boundaries and learning_rate_multiples; add both")
        return _piecewise_learning_rate(global_step, hparams.learning_rate_boundaries,
                                        hparams.learning_rate_multiples)
    if scheme == "cosine":
        cycle_steps = float(hparams.learning_rate_cosine_cycle_steps)
        position = tf.math.floormod(global_step, 2 * cycle_steps)
        position = cycle_steps - tf.abs(cycle_steps - position)
        return 0.5 * (1.0 + tf.cos(math.pi * position / cycle_steps))
    if scheme == "cyclelinear10x":
        # Up and down linearly by 10x every warmup_steps.
        position = tf.math.floormod(global_step, 2 * warmup_steps)
        position = 1.0 - tf.abs((position - warmup_steps) / warmup_steps)  # 0 -> 1 -> 0.
        return (position + 0.1) * 3.0
    if scheme == "sqrt":
        return _legacy_sqrt_decay(global_step - warmup_steps)
    raise ValueError("unknown learning_rate_decay_scheme %r; use one of: %s" %
                     (scheme, ", ".join(DECAY_SCHEMES)))


def _learning_rate_warmup(warmup_steps, warmup_schedule="exp", hparams=None):
    """Warmup multiplier: "exp" goes from 0.01 at step 0 to 1 at `warmup_steps`.

    "exp": `0.01 ** ((warmup - s) / warmup)`; "linear": `0.35 + 0.65 * s / warmup`.
    `hparams` (optional) supplies the multistep step division.
    """
    if not warmup_steps:
        return tf.constant(1.0)
    info_once("Applying %s learning rate warmup for %d steps", warmup_schedule, warmup_steps)
    warmup_steps = float(warmup_steps)
    global_step = _global_step(hparams)
    if warmup_schedule == "exp":
        return tf.exp(math.log(0.01) / warmup_steps) ** (warmup_steps - global_step)
    if warmup_schedule == "linear":
        start = 0.35
        return ((1.0 - start) / warmup_steps) * global_step + start
    raise ValueError("unknown warmup_schedule %r; use 'exp' or 'linear'" % warmup_schedule)
