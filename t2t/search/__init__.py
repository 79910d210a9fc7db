"""Decoding algorithms over a `symbols_to_logits_fn`: beam search and sampling.
"""
