"""TF Hub export of t2t text encoders (`t2t-exporter --export_as_tfhub`).

* `bert_pack`: BERT input packing (round-robin truncation, [CLS] A [SEP] B [SEP]) in TF ops.
* `preprocessor`: the preprocessor SavedModel (in-graph subword tokenization + packing).
* `encoder`: the encoder and text-embedding SavedModels, running the model's own graph code
  on TF2 variables restored from a checkpoint.
* `export`: writes the three under one export folder.

    from t2t.hub import export
    export.export_tfhub("transformer_encoder_mlm", hparams, "/train", "/train/export/hub")
"""
