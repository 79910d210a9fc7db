"""Vocabularies: T2T's text encoders (subword, byte, token, class label), the invertible
tokenizer and the fast subword-vocabulary builder.
"""
