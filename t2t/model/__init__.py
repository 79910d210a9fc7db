"""`T2TModel`: bottom -> body -> top -> loss through each feature's modality, the Estimator
specs it builds, its summaries, the generic (uncached) greedy and beam decoding, and the
problem/model hparams helpers.
"""
