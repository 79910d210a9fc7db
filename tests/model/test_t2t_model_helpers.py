"""T2T's t2t_model helpers: log_* once per text in eager mode, composed custom getters."""
import pytest
import tensorflow as tf
from absl import logging

from t2t.model import t2t_model

_v1 = tf.compat.v1


@pytest.mark.parametrize("name,level", [("log_info", "info"), ("log_warn", "warning"),
                                        ("log_debug", "debug")])
def test_logs_every_time_in_graph_mode_once_in_eager(monkeypatch, name, level):
    seen = []
    monkeypatch.setattr(logging, level, lambda *args: seen.append(args))
    log = getattr(t2t_model, name)
    text = "Building %s for %s" % (name, id(seen))
    log(text, 1)
    log(text, 1)
    log(text, 2)
    with tf.Graph().as_default():
        log(text, 1)
    assert seen == [(text, 1), (text, 2), (text, 1)]


def test_set_custom_getter_compose_keeps_the_existing_getter():
    calls = []

    def getter_named(tag):
        def getter(getter_fn, *args, **kwargs):
            calls.append(tag)
            return getter_fn(*args, **kwargs) * 2.0
        return getter

    with tf.Graph().as_default():
        with _v1.variable_scope("m", custom_getter=getter_named("inner")):
            t2t_model.set_custom_getter_compose(getter_named("outer"))
            value = _v1.get_variable("v", [], initializer=_v1.constant_initializer(3.0))
            t2t_model.set_custom_getter_compose(None)  # nothing to add: unchanged
            assert _v1.get_variable_scope().custom_getter is not None
        with _v1.Session() as sess:
            sess.run(_v1.global_variables_initializer())
            assert sess.run(value) == 12.0  # both getters doubled it
    assert calls == ["outer", "inner"]
