"""Metrics: T2T's metric functions by name, the EVAL/eager metric ops built from them,
BLEU (approximate and sacrebleu) and ROUGE.
"""
