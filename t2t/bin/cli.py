"""Shared helpers for the command-line programs (t2t-datagen, t2t-trainer, t2t-decoder).

A program defines its flags with absl, then hands its `main` to `run_main`:

    from absl import flags
    from t2t.utils import cli

    cli.define_common_flags(random_seed_default=429459)

    def main(argv):
        cli.apply_common_flags(flags.FLAGS.t2t_usr_dir, flags.FLAGS.registry_help)
        ...

    def console_main():
        cli.run_main(main, "t2t-datagen", doc=__doc__)

What the user sees when something goes wrong:

    $ t2t-datagen --problem=algorithmic_revers_binary40
    t2t-datagen: error: algorithmic_revers_binary40 never registered with registry problems; ...
    $ echo $?
    2

A user error (`UserError`, an unknown or duplicate registry name, a bad flag value) is ONE
line on stderr and exit code 2, as argparse does for usage errors; a user's module failing
on import (`UserCodeError`) is that line followed by the user's own frames only. Anything
else is a bug and keeps its full traceback (exit code 1).
Ctrl-C ends with exit code 130 and a one-line message instead of a traceback.
TensorFlow's C++ start-up lines are hidden by `import t2t` itself (`t2t.core.tf_notices`),
which every program runs before it imports TensorFlow.
"""
import os
import sys
import textwrap

from absl import app, flags

from t2t.core import errors, registry, usr_dir

# Exceptions whose message is the whole story: printed as one line, no traceback.
USER_ERRORS = (errors.UserError, registry.UnknownNameError, registry.DuplicateNameError)

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130


def one_line(message) -> str:
    """`message` squeezed onto one line (the CLI contract is one line per error).

    >>> one_line("bad value\\n  try --x=1\\n")
    'bad value try --x=1'
    """
    return " ".join(part.strip() for part in str(message).splitlines() if part.strip())


def exit_with_user_error(program_name, error):
    """Print `<program>: error: <message>` to stderr and exit with code 2 (under the line,
    the user's own traceback for a `UserCodeError`)."""
    sys.stderr.write("%s: error: %s\n" % (program_name, one_line(error)))
    details = getattr(error, "details", "")
    if details:
        sys.stderr.write(details if details.endswith("\n") else details + "\n")
    sys.stderr.flush()
    sys.exit(EXIT_USER_ERROR)


def reject_extra_args(argv, program_name, accepted="only --flags"):
    """A user error for words left on the command line after flag parsing.

    >>> reject_extra_args(["t2t-bleu"], "t2t-bleu")          # nothing left: fine
    >>> reject_extra_args(["t2t-bleu", "out.txt"], "t2t-bleu")
    Traceback (most recent call last):
    UserError: unexpected arguments out.txt; t2t-bleu takes only --flags
    """
    if len(argv) > 1:
        raise errors.UserError("unexpected arguments %s; %s takes %s" % (
            " ".join(argv[1:]), program_name, accepted))


def _make_flags_parser(program_name):
    """absl's default parser exits 1 with a multi-line 'FATAL' banner; ours is one line, exit 2."""

    def parse(argv):
        try:
            return flags.FLAGS(argv)
        except flags.Error as error:
            exit_with_user_error(program_name, "%s (see --helpfull)" % one_line(error))

    return parse


HELP_ARGS = ("-h", "-?", "-help", "--help", "--helpshort", "--helpfull")


def _flag_usage(flag, help_override=None):
    name = ("--[no]%s" % flag.name) if flag.boolean else "--%s" % flag.name
    default = flag.default_as_str
    text = (help_override or flag.help or "").strip()
    if default and default != "''" and default != "None":
        text += " (default: %s)" % default
    return "  %s\n%s" % (name, textwrap.fill(text, width=96, initial_indent="      ",
                                             subsequent_indent="      "))


def help_text(program_name, doc, show_all=False, flag_names=None):
    """The program's description (its module docstring) and its own flags, sorted.

    Flags other modules define (absl's logging verbosity, TensorFlow's TPU switches) are
    listed only with `show_all` (--helpfull). With `flag_names` (a program that defines
    the trainer's flags but reads only some, as t2t-decoder and t2t-exporter) only those
    are listed, unless `show_all`; a dict gives a flag the program's own help text
    ({"output_dir": "The training folder ...", "model": None}: None keeps the shared one).
    """
    overrides = flag_names if isinstance(flag_names, dict) else {}
    own = {}
    for module, module_flags in flags.FLAGS.flags_by_module_dict().items():
        # `python -m t2t.bin.x` registers the program's flags under its file name.
        mine = module.startswith("t2t.") or os.path.basename(module).startswith("t2t")
        if show_all or mine:
            for flag in module_flags:
                if show_all or flag_names is None or flag.name in flag_names:
                    own[flag.name] = flag
    lines = [textwrap.dedent(doc or program_name).strip(), "", "Flags of %s:" % program_name]
    lines += [_flag_usage(own[name], overrides.get(name)) for name in sorted(own)]
    if not show_all and flag_names is not None:
        lines += [""] + textwrap.wrap(
            "--helpfull also lists the flags %s accepts so that one command line serves "
            "several programs, but ignores (the trainer's), and those of absl and "
            "TensorFlow." % program_name, width=96)
    elif not show_all:
        lines += ["", "--helpfull also lists the flags of absl (--verbosity, --logtostderr, "
                  "...) and TensorFlow."]
    return "\n".join(lines) + "\n"


def _maybe_print_help(argv, program_name, doc, flag_names=None):
    """`--help` (and -h, --helpshort, --helpfull): print the help text and exit 0."""
    for arg in argv[1:]:
        if arg == "--":
            return
        if arg in HELP_ARGS:
            sys.stdout.write(help_text(program_name, doc, show_all=arg == "--helpfull",
                                       flag_names=flag_names))
            sys.stdout.flush()
            sys.exit(0)


def run_main(main_fn, program_name, argv=None, doc=None, help_flags=None):
    """Parse flags and run `main_fn(argv)` as an absl app, mapping errors to exit codes.

    Args:
      main_fn: the program's main, called with the arguments left after flag parsing.
      program_name: shown at the start of error lines ("t2t-datagen").
      argv: the command line (default `sys.argv`), parsed into absl's `flags.FLAGS`.
      doc: the program's description for `--help` (its module docstring).
      help_flags: the names of the flags `--help` lists (default: every flag t2t defines);
        `--helpfull` lists all.

    Exit codes: what `main_fn` returns (None → 0, also for `--help`); 2 for a user error; 1
    with a traceback for any other exception; 130 on KeyboardInterrupt.
    """
    argv = list(sys.argv if argv is None else argv)
    _maybe_print_help(argv, program_name, doc, help_flags)

    def guarded_main(args):
        try:
            show_tensorflow_deprecations(flags.FLAGS["show_tf_deprecations"].value)
            return main_fn(args)
        except USER_ERRORS as error:
            exit_with_user_error(program_name, error)
        except KeyboardInterrupt:
            sys.stderr.write("%s: interrupted\n" % program_name)
            sys.stderr.flush()
            sys.exit(EXIT_INTERRUPTED)

    try:
        app.run(guarded_main, argv=argv, flags_parser=_make_flags_parser(program_name))
    except KeyboardInterrupt:
        # Ctrl-C during start-up (flag parsing, absl init) rather than inside main.
        sys.stderr.write("%s: interrupted\n" % program_name)
        sys.exit(EXIT_INTERRUPTED)


def show_tensorflow_deprecations(show=False):
    """Hide (default) or show TensorFlow's deprecation notices and its INFO lines.

    TF prints "Instructions for updating: ..." once per deprecated internal the Estimator
    touches (a dozen in one decode), through both its own logger and absl's; they bury the
    program's own progress lines. `--show_tf_deprecations` brings them back.
    """
    import tensorflow as tf
    from tensorflow.python.util import deprecation
    deprecation._PRINT_DEPRECATION_WARNINGS = bool(show)  # pylint: disable=protected-access
    logger = tf.get_logger()
    logger.setLevel("INFO" if show else "WARNING")
    # TF gave its logger a handler of its own when it was imported before absl's; lines
    # then came out twice ("WARNING:tensorflow:..." and absl's "W1125 ..."). absl's alone.
    if logging_handlers_of_root():
        for handler in list(logger.handlers):
            logger.removeHandler(handler)


def logging_handlers_of_root():
    import logging as std_logging
    return std_logging.getLogger().handlers


def define_once(define_fn, name, default, help_text, flag_values=None):
    """define_fn(name, default, help_text) unless `name` is already a flag.

    The trainer and decoder share flags (T2T wrapped definitions in try/except), and tests
    import several programs into one process; defining only what is missing keeps every
    program importable alongside the others.
    """
    flag_values = flag_values if flag_values is not None else flags.FLAGS
    if name not in flag_values:
        define_fn(name, default, help_text, flag_values=flag_values)


define_once(flags.DEFINE_bool, "show_tf_deprecations", False,
             "Show TensorFlow's deprecation notices and INFO lines (hidden by default).",
             flags.FLAGS)


def define_common_flags(random_seed_default=None, flag_values=None):
    """Define --t2t_usr_dir, --registry_help and --random_seed unless already defined."""
    flag_values = flag_values if flag_values is not None else flags.FLAGS
    define_once(flags.DEFINE_string, "t2t_usr_dir", "",
                 "Path to a folder with an __init__.py that imports your own modules; their "
                 "@registry.register_* decorators then make your problems, models and hparams "
                 "available to this program.", flag_values)
    define_once(flags.DEFINE_bool, "registry_help", False,
                 "Print every registered problem, model, hparams set and optimizer, then exit.",
                 flag_values)
    define_once(flags.DEFINE_integer, "random_seed", random_seed_default,
                 "Random seed for Python, numpy and TensorFlow.", flag_values)


def check_writable_dir(flag_name, path):
    """UserError unless folder `path` exists and is writable, or could be created.

    Nothing is created: the nearest existing ancestor must be a writable folder. Remote
    paths (gs://...) are left to the file system.

        check_writable_dir("--data_dir", "/etc/passwd/data")
        # UserError: --data_dir=/etc/passwd/data cannot be created: /etc/passwd is a file,
        # not a folder; give a folder you can write to
    """
    if not path or "://" in path:
        return
    path = os.path.abspath(os.path.expanduser(path))
    existing = path
    while not os.path.exists(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        existing = parent
    fix = "give a folder you can write to"
    if not os.path.isdir(existing):
        raise errors.UserError("%s=%s cannot be created: %s is a file, not a folder; %s" % (
            flag_name, path, existing, fix))
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "is not writable" if existing == path else (
            "cannot be created: %s is not writable" % existing)
        raise errors.UserError("%s=%s %s; %s" % (flag_name, path, what, fix))


def apply_common_flags(t2t_usr_dir="", registry_help=False, out=None):
    """Import the user's folder, and print the registry and exit 0 for --registry_help.

    The import happens first so `--registry_help` lists the user's registrations too.
    `usr_dir.UsrDirError` (missing folder, no `__init__.py`) is a user error: one line, exit 2
    under `run_main`; the user's own code failing is a `UserCodeError` (their frames only).
    """
    usr_dir.import_usr_dir(t2t_usr_dir)
    if registry_help:
        (out or sys.stdout).write(registry.help_string() + "\n")
        sys.exit(0)
