"""A usr dir's modules that call TensorFlow 1.x names (`tf.flags`, `tf.logging`, `tf.gfile`,
`tf.app`) import unchanged: rewritten in memory by t2t-port's rules, their files and line
numbers kept; and the rules themselves keep every line where they stand."""
import ast
import logging
import os
import traceback

import pytest

from t2t.core import errors, tf1_rules, usr_dir
from tests.core.test_usr_dir import cleanup, make_usr_dir  # noqa: F401  (fixture)

# As T2T-era usr dirs write it (bAbI-T2T, SearchQA-T2T): TF 1.x names at module level.
_TF1_MODULE = '''import tensorflow as tf

flags = tf.flags
FLAGS = flags.FLAGS
flags.DEFINE_string("tf1_import_test_{n}", "x", "a flag of the user's")
tf.logging.info("registering")
HERE_EXISTS = tf.gfile.Exists(__file__)
RUN = tf.app.run
APP_FLAGS = tf.app.flags
SPEC = {{"targets": tf.VarLenFeature(tf.int64)}}  # a problem's example_reading_spec


def SPEC_OF():
    return tf.sparse.to_dense(tf.io.parse_single_example(
        tf.train.Example().SerializeToString(), {{"x": tf.VarLenFeature(tf.int64)}})["x"])


def fails():
    return tf.gfile.Exists(
        1 / 0)
'''


def test_tf1_calls_import_unchanged_with_their_lines(tmp_path, cleanup, caplog):
    n = os.getpid()
    folder, name = make_usr_dir(tmp_path, {"__init__.py": "from . import tf1_problems\n",
                                           "tf1_problems.py": _TF1_MODULE.format(n=n)})
    before = {f: open(os.path.join(folder, f)).read() for f in os.listdir(folder)}
    with caplog.at_level(logging.INFO):
        package = usr_dir.import_usr_dir(folder)
    module = package.tf1_problems
    from absl import flags
    assert module.APP_FLAGS is module.flags
    assert flags.FLAGS["tf1_import_test_%d" % n].default == "x"  # defined in absl's FLAGS
    assert module.HERE_EXISTS is True
    import tensorflow as tf
    assert module.RUN is tf.compat.v1.app.run
    assert module.SPEC == {"targets": tf.io.VarLenFeature(tf.int64)}
    # The folder is as it was: no file changed, no bytecode cache written.
    assert {f: open(os.path.join(folder, f)).read() for f in os.listdir(folder)} == before
    assert module.__file__ == os.path.join(folder, "tf1_problems.py")
    # The user's traceback points at their real line (20: `1 / 0)`).
    with pytest.raises(ZeroDivisionError) as caught:
        module.fails()
    frame = traceback.extract_tb(caught.value.__traceback__)[-1]
    assert (frame.filename, frame.lineno) == (module.__file__, 20)
    # What recompiles from source (autograph, in a problem's tf.data map) reads the rewrite.
    import inspect
    assert "tf.io.gfile.exists(" in inspect.getsource(module.fails)
    spec = tf.data.Dataset.range(1).map(lambda _: module.SPEC_OF())
    assert spec.element_spec.dtype == tf.int64
    said = [r.getMessage() for r in caplog.records if "rewrite in memory" in r.getMessage()]
    assert said == ["%s: TF 1.x calls run through t2t-port's rewrite in memory; "
                    "`t2t-port DIR --in_place` makes it permanent" % module.__file__]


def test_code_without_tf1_calls_and_broken_code_import_as_python_does(tmp_path, cleanup):
    folder, _ = make_usr_dir(tmp_path, {"__init__.py": "from . import plain\n",
                                        "plain.py": "import tensorflow as tf\nX = tf.constant(3)\n"})
    assert int(usr_dir.import_usr_dir(folder).plain.X) == 3
    folder, _ = make_usr_dir(tmp_path, {"__init__.py": "import tensorflow as tf\n"
                                                       "flags = tf.flags\nx = (\n"})
    with pytest.raises(errors.UserCodeError) as caught:
        usr_dir.import_usr_dir(folder)
    assert "has a syntax error" in str(caught.value)
    assert "__init__.py\", line 3" in caught.value.details


def test_rules_keep_lines_and_leave_compat_v1_code_alone():
    text = ("import tensorflow as tf\nimport tensorflow.compat.v1 as v1\n"
            "a = (tf.gfile\n     .Exists('x'))\nb = tf.logging.warn; c = v1.logging.warn\n")
    ported, notes = tf1_rules.port_tf1_text(text, keep_lines=True)
    # The name over two lines stays (its lines kept); the one-line one is rewritten.
    assert ported.splitlines()[2:4] == text.splitlines()[2:4]
    assert ported.splitlines()[4] == "b = tf.compat.v1.logging.warn; c = v1.logging.warn"
    assert notes == [(5, "renamed tf.logging to tf.compat.v1.logging")]
    assert tf1_rules.port_tf1_text(text)[0].splitlines()[2] == "a = (tf.io.gfile.exists('x'))"
    plain = "import tensorflow.compat.v1 as tf\ntf.logging.info('x')\n"
    assert tf1_rules.port_tf1_text(plain, ast.parse(plain)) == (plain, [])
