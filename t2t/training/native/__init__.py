"""The native TF2 training backend: `tf.function` steps, no `tf.estimator`.

`functions.NativeModelFunctions` runs the unchanged T2TModel code (bottom -> body -> top ->
loss, `optimize` with the v1 optimizers) in `tf.function`s whose variables keep
Estimator's names; `experiment.NativeExperiment` runs t2t's schedules on them with
Estimator's files (`model.ckpt-N`, `checkpoint`, `eval/` events); `strategies` picks the
`tf.distribute` strategy from --worker_gpu and TF_CONFIG.
"""
