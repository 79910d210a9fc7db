"""Training and evaluation with `tf.estimator`: run configs (devices, TF_CONFIG, TPU), the
experiment schedules, `trainer_lib` that wires Problem + model + hparams, and checkpoint
averaging.
"""
