"""t2t-port's run: which files, their ported text, the diff, writing in place, the summary.

    code = run(["my_usr_dir"], out=sys.stdout, err=sys.stderr)
    # stdout: a unified diff of every file that changes (nothing is written);
    # stderr: "my_usr_dir/model.py:12: common_layers.x is not in t2t; closest: y", ...,
    #         then "t2t-port: 3 files scanned, 2 to change, 1 name missing in t2t ..."

With `in_place` the changed files are replaced atomically (`backup` keeps `<file>.orig`).
Exit codes: 0; 1 when a file did not parse (it is named with its line, and skipped); a path
that does not exist or is not Python is a `UserError` before any work.
"""
import ast
import collections
import difflib
import os
import shutil

from t2t.core import atomic_files, errors
from t2t.porting import imports, names, tf_calls

PortedText = collections.namedtuple("PortedText", "text notes missing tf_way")
SKIPPED_DIRS = ("__pycache__", ".git", ".hg", ".svn", ".tox", ".venv", "venv")


def python_files(paths):
    """The .py files of `paths` (files, or folders walked in name order); UserError for a
    path that does not exist or is not Python."""
    files = []
    for path in paths:
        if not os.path.exists(path):
            raise errors.UserError("%s does not exist; give a .py file or a folder of them"
                                   % path)
        if os.path.isdir(path):
            for folder, dirs, names_ in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS
                                 and not d.startswith("."))
                files += [os.path.join(folder, n) for n in sorted(names_) if n.endswith(".py")]
        elif path.endswith(".py"):
            files.append(path)
        else:
            raise errors.UserError("%s is not a Python file; give .py files or folders of "
                                   "them" % path)
    return list(dict.fromkeys(files))


def port_text(text, tf_upgrade="auto"):
    """PortedText of `text` (SyntaxError when it does not parse): T2T imports to t2t's,
    then TensorFlow 1.x calls (tf_calls' `how`), then the name check on the result."""
    ported = imports.port_imports(text, ast.parse(text))
    ported, notes, tf_way = tf_calls.port_tf_calls(ported, how=tf_upgrade)
    return PortedText(ported, notes, names.missing_names(ported), tf_way)


def unified_diff(path, old, new):
    return "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                        new.splitlines(keepends=True), path, path))


def write_in_place(path, text, backup=False):
    """Replace `path` by `text` atomically (its permissions kept); `<path>.orig` first."""
    if backup:
        shutil.copy2(path, path + ".orig")
    with atomic_files.atomic_output_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        shutil.copymode(path, tmp)


def _plural(count, word):
    return "%d %s%s" % (count, word, "" if count == 1 else "s")


def run(paths, tf_upgrade="auto", in_place=False, backup=False, out=None, err=None):
    """Port `paths`; the diff (or the writes) to `out`, notes and the summary to `err`.
    Returns the exit code."""
    files = python_files(paths)
    changed, missing, broken, ways = 0, 0, [], set()
    for path in files:
        try:
            with open(path, encoding="utf-8", newline="") as f:
                old = f.read()
            result = port_text(old, tf_upgrade)
        except SyntaxError as error:
            broken.append(path)
            err.write("%s:%s: does not parse (%s); skipped\n" % (path, error.lineno, error.msg))
            continue
        except UnicodeDecodeError as error:
            broken.append(path)
            err.write("%s: does not parse (not UTF-8: %s); skipped\n" % (path, error.reason))
            continue
        for lineno, note in result.notes:
            err.write("%s:%d: %s\n" % (path, lineno, note))
        for lineno, message in result.missing:
            err.write("%s:%d: %s\n" % (path, lineno, message))
        missing += len(result.missing)
        ways.add(result.tf_way)
        if result.text != old:
            changed += 1
            if in_place:
                write_in_place(path, result.text, backup)
            else:
                out.write(unified_diff(path, old, result.text))
    ways.discard(None)
    err.write("t2t-port: %s scanned, %s %s, %s missing in t2t%s%s\n" % (
        _plural(len(files), "file"), changed, "changed" if in_place else "to change",
        _plural(missing, "name"),
        "; TensorFlow calls by " + " and ".join(sorted(ways)) if ways else "",
        "; %s skipped (does not parse)" % _plural(len(broken), "file") if broken else ""))
    out.flush()
    err.flush()
    return 1 if broken else 0
