"""How examples are stored and streamed: sharded TFRecord writing and shuffling
(`generator_utils`), packing, and the input pipeline with length bucketing and token-based
batches (`data_reader`).
"""
