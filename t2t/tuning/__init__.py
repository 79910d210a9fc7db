"""Hyperparameter search on Optuna (`t2t-trainer --hparams_range=...`; extra `t2t-toolkit[tune]`).

`search_space` turns a registered `RangedHParams` into Optuna suggestions; `autotune`
runs the study: each trial is a normal t2t-trainer run in `<output_dir>/trial_<n>`.
"""
