"""The modes a model function and an input function run in: `ModeKeys`.

The same strings as `ModeKeys`, so a mode from an Estimator compares equal to
t2t's and T2T code that passes either works; t2t's own code takes them from here because
TensorFlow 2.16+ has no `tf.estimator`.

>>> from t2t.core.modes import ModeKeys
>>> ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT
('train', 'eval', 'infer')
"""


class ModeKeys:
    """Standard names for model modes (`ModeKeys`'s values)."""
    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"

    @staticmethod
    def all():
        """The three modes, in training order."""
        return (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)
