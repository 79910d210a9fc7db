"""Decoding with a trained model: from the dataset, a file or an interactive prompt, and
scoring (`decoding`).
"""
