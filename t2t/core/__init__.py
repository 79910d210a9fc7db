"""Foundations every other package uses: the registry, HParams, user errors, progress lines,
the user plugin folder (`usr_dir`), atomic file writes and resumable downloads.

Imports nothing else from t2t.
"""
