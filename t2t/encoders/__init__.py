"""Vocabularies: T2T's text encoders (subword, byte, token, class label), the invertible
tokenizer, the fast subword-vocabulary builder, and the same encoders as TensorFlow ops
(`graph_ops`) for SavedModels, SeqIO's `T2TVocabulary` and TF Hub preprocessors.
"""
