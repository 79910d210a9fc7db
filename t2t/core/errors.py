"""Exceptions that mean "the user asked for something wrong", not "t2t has a bug".

The command-line programs print the one-line message of a `UserError` (and of the
registry's unknown/duplicate-name errors), exit with code 2 and show no traceback.
Any other exception keeps its traceback, so bugs (and errors inside a user's own
`--t2t_usr_dir` code) stay debuggable.
"""


class UserError(ValueError):
    """Bad input from the user: a flag, a name, a file. The message says the fix."""


class UserCodeError(UserError):
    """The user's own module failed while being imported (`--module_import`, `--t2t_usr_dir`).

    The message is one line naming the module; `details` is the user's part of the
    traceback (their frames and the exception; no t2t or importlib frames), which the
    programs print under that line.
    """

    def __init__(self, message, details=""):
        super().__init__(message)
        self.details = details
