"""Data generation for `t2t-datagen`: which problems to generate, parallel jobs, seeds and
the summary.
"""
