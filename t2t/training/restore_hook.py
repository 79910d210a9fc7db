"""RestoreHook: start some variables from another run's checkpoint, with scopes mapped.

T2T's `utils/restore_hook.py`: a `SessionRunHook` that, when the session is made, sets the
initial values of the graph's variables under `new_model_scope` from a checkpoint whose
names lack that prefix and start with `old_model_scope`:

    # graph variable "student/teacher/body/w"  <-  checkpoint variable "teacher/body/w"
    hook = RestoreHook("/runs/teacher/model.ckpt-5000", new_model_scope="student/",
                       old_model_scope="teacher/", exclude=["student/teacher/top"])
    estimator.train(input_fn, hooks=[hook])            # or a MonitoredSession's hooks

`include` / `exclude` are lists of scope patterns (matched at the start of the names, as
tf-slim's `get_variables_to_restore` matched them); None includes every global variable.
The variables are initialised from the checkpoint (`init_from_checkpoint`), so a session
that restores a checkpoint of its own (a resumed run) keeps that one's values.
"""
import tensorflow as tf
from absl import logging

_v1 = tf.compat.v1


def variables_to_restore(include=None, exclude=None):
    """Global variables matching a scope of `include` (all if None) and none of `exclude`.

        variables_to_restore(include=["body"], exclude=["body/top"])
    """
    for name, scopes in (("include", include), ("exclude", exclude)):
        if scopes is not None and not isinstance(scopes, (list, tuple)):
            raise TypeError("%s is provided but is not a list or a tuple." % name)
    if include is None:
        chosen = _v1.global_variables()
    else:
        chosen = [v for scope in include
                  for v in _v1.get_collection(_v1.GraphKeys.GLOBAL_VARIABLES, scope)]
    excluded = {id(v) for scope in exclude or ()
                for v in _v1.get_collection(_v1.GraphKeys.GLOBAL_VARIABLES, scope)}
    return [v for v in chosen if id(v) not in excluded]


class RestoreHook(_v1.train.SessionRunHook):
    """Restore variables from a checkpoint path (T2T's arguments and defaults)."""

    def __init__(self, checkpoint_path="", new_model_scope="", old_model_scope="",
                 include=None, exclude=None):
        self._checkpoint_path = checkpoint_path
        self._new_model_scope = new_model_scope
        self._old_model_scope = old_model_scope
        self._include = include
        self._exclude = exclude
        self._assignment_map = {}

    def begin(self):
        """Map "old_model_scope/x" in the checkpoint to the graph's
        "new_model_scope/old_model_scope/x" and initialise those variables from it."""
        assignment_map = {}
        for variable in variables_to_restore(self._include, self._exclude):
            name = variable.name
            if not name.startswith(self._new_model_scope):
                continue
            name = name[len(self._new_model_scope):]
            if name.startswith(self._old_model_scope):
                assignment_map[name.split(":")[0]] = variable
        self._assignment_map = assignment_map
        logging.info("restoring %d variables from checkpoint %s", len(assignment_map),
                     self._checkpoint_path)
        _v1.train.init_from_checkpoint(self._checkpoint_path, assignment_map)
