"""T2T's module-level helpers of `t2t_model.py`: logging once in eager mode, and composing
custom variable getters (`t2t_model` re-exports them under T2T's names).

    log_info("Building %s", "body")      # graph mode: every call; eager: once per text
    set_custom_getter_compose(my_getter)   # wraps the scope's getter, does not replace it
"""
import functools

import tensorflow as tf
from absl import logging

_already_logged = set()


def _eager_log(log_fn, *args):
    # A model is rebuilt at every eager call; its build lines would repeat each step.
    if tf.executing_eagerly():
        if args in _already_logged:
            return
        _already_logged.add(args)
    log_fn(*args)


def log_debug(*args):
    """`logging.debug(*args)`; in eager mode only the first time these args come."""
    _eager_log(logging.debug, *args)


def log_info(*args):
    """`logging.info(*args)`; in eager mode only the first time these args come."""
    _eager_log(logging.info, *args)


def log_warn(*args):
    """`logging.warning(*args)`; in eager mode only the first time these args come."""
    _eager_log(logging.warning, *args)


def _compose_custom_getters(getter_a, getter_b):
    """One custom getter running `getter_b` around `getter_a` (either may be None)."""
    if not getter_a:
        return getter_b
    if not getter_b:
        return getter_a

    def getter_fn(getter, *args, **kwargs):
        return getter_b(functools.partial(getter_a, getter), *args, **kwargs)

    return getter_fn


def set_custom_getter_compose(custom_getter):
    """Add `custom_getter` to the current variable scope, around the getter it has.

        def cast_to_bf16(getter, *args, **kwargs):
            return tf.cast(getter(*args, **kwargs), tf.bfloat16)
        set_custom_getter_compose(cast_to_bf16)   # an existing getter still runs inside
    """
    scope = tf.compat.v1.get_variable_scope()
    scope.set_custom_getter(_compose_custom_getters(scope.custom_getter, custom_getter))
