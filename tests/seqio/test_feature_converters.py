"""Feature converters: seqio's docstring/README arrays, validations and exact features."""
import pytest
import tensorflow as tf

from t2t import seqio
from t2t.seqio.test_utils import assert_dataset, create_default_dataset

ENC_DEC_X = [{"inputs": [7, 8, 5, 1], "targets": [3, 9, 1]},
             {"inputs": [8, 4, 9, 3, 1], "targets": [4, 1]}]


def test_encdec_packed_readme_example():
    ds = create_default_dataset(ENC_DEC_X)
    converted = seqio.EncDecFeatureConverter(pack=True)(ds, {"inputs": 10, "targets": 7})
    assert_dataset(converted, {
        "encoder_input_tokens": [7, 8, 5, 1, 8, 4, 9, 3, 1, 0],
        "encoder_segment_ids": [1, 1, 1, 1, 2, 2, 2, 2, 2, 0],
        "encoder_positions": [0, 1, 2, 3, 0, 1, 2, 3, 4, 0],
        "decoder_target_tokens": [3, 9, 1, 4, 1, 0, 0],
        "decoder_input_tokens": [0, 3, 9, 0, 4, 0, 0],
        "decoder_loss_weights": [1, 1, 1, 1, 1, 0, 0],
        "decoder_segment_ids": [1, 1, 1, 2, 2, 0, 0],
        "decoder_positions": [0, 1, 2, 0, 1, 0, 0]})


def test_encdec_unpacked_and_bos_id():
    ds = create_default_dataset(ENC_DEC_X[:1])
    converted = seqio.EncDecFeatureConverter(pack=False, bos_id=5)(
        ds, {"inputs": 6, "targets": 5})
    assert_dataset(converted, {
        "encoder_input_tokens": [7, 8, 5, 1, 0, 0],
        "decoder_target_tokens": [3, 9, 1, 0, 0],
        "decoder_input_tokens": [5, 3, 9, 1, 0],
        "decoder_loss_weights": [1, 1, 1, 0, 0]})
    assert converted.element_spec["encoder_input_tokens"].shape == [6]


def test_encdec_first_fit_packing():
    x = [{"inputs": [7, 8, 5, 1], "targets": [3, 9, 1]},
         {"inputs": [8, 4, 9, 3, 5, 1], "targets": [4, 4, 4, 1]},
         {"inputs": [2, 1], "targets": [6, 1]}]
    converted = seqio.EncDecFeatureConverter(pack=True, use_custom_packing_ops=True)(
        create_default_dataset(x), {"inputs": 8, "targets": 6})
    rows = list(converted.as_numpy_iterator())
    # First-fit-decreasing: the largest example (2nd) opens a row, the 1st does not fit
    # beside it, the 3rd does. Rows come in the order of their first example.
    assert rows[0]["encoder_input_tokens"].tolist() == [7, 8, 5, 1, 0, 0, 0, 0]
    assert rows[1]["encoder_input_tokens"].tolist() == [8, 4, 9, 3, 5, 1, 2, 1]
    assert rows[1]["decoder_input_tokens"].tolist() == [0, 4, 4, 4, 0, 6]
    assert rows[1]["decoder_segment_ids"].tolist() == [1, 1, 1, 1, 2, 2]


def test_lm_packed_docstring_example():
    ds = create_default_dataset([{"targets": [3, 9, 1]}, {"targets": [4, 1]}],
                                feature_names=("targets",))
    assert_dataset(seqio.LMFeatureConverter(pack=True)(ds, {"targets": 6}), {
        "decoder_target_tokens": [3, 9, 1, 4, 1, 0],
        "decoder_input_tokens": [0, 3, 9, 0, 4, 0],
        "decoder_loss_weights": [1, 1, 1, 1, 1, 0],
        "decoder_positions": [0, 1, 2, 0, 1, 0],
        "decoder_segment_ids": [1, 1, 1, 2, 2, 0]})


def test_prefix_lm_packed_docstring_example():
    converted = seqio.PrefixLMFeatureConverter(pack=True)(
        create_default_dataset(ENC_DEC_X), {"inputs": 7, "targets": 8})
    assert_dataset(converted, {
        "decoder_target_tokens": [7, 8, 5, 1, 3, 9, 1, 8, 4, 9, 3, 1, 4, 1, 0],
        "decoder_input_tokens": [0, 7, 8, 5, 1, 3, 9, 0, 8, 4, 9, 3, 1, 4, 0],
        "decoder_loss_weights": [0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0],
        "decoder_positions": [0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0],
        "decoder_segment_ids": [1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 0],
        "decoder_causal_attention": [1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0]})


def test_prefix_lm_unpacked_long_inputs_docstring_example():
    ds = create_default_dataset([{"inputs": [9, 4, 6, 1], "targets": [3, 9, 1]}])
    converted = seqio.PrefixLMFeatureConverter(pack=False)(ds, {"inputs": 10, "targets": 4})
    assert_dataset(converted, {
        "decoder_target_tokens": [9, 4, 6, 1, 3, 9, 1, 0, 0, 0, 0, 0, 0, 0],
        "decoder_input_tokens": [0, 9, 4, 6, 1, 3, 9, 1, 0, 0, 0, 0, 0, 0],
        "decoder_loss_weights": [0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
        "decoder_causal_attention": [1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]})


def test_prefix_lm_loss_on_all_tokens_and_empty_inputs():
    ds = create_default_dataset([{"inputs": [], "targets": [3, 9, 1]}])
    converted = seqio.PrefixLMFeatureConverter(pack=True, loss_on_targets_only=False)(
        ds, {"inputs": 2, "targets": 4})
    row = next(converted.as_numpy_iterator())
    assert row["decoder_target_tokens"].tolist() == [3, 9, 1, 0, 0, 0]
    assert row["decoder_loss_weights"].tolist() == [1, 1, 1, 0, 0, 0]
    assert row["decoder_causal_attention"].tolist() == [1, 0, 0, 0, 0, 0]


def test_prefix_suffix_lm_unpacked():
    x = [{"inputs": [9, 4, 6, 1], "targets": [3, 9], "suffixes": [2, 1]}]
    ds = create_default_dataset(x, feature_names=("inputs", "targets", "suffixes"))
    converted = seqio.DecoderFeatureConverter(pack=False)(
        ds, {"inputs": 5, "targets": 4, "suffixes": 3})
    assert_dataset(converted, {
        "decoder_target_tokens": [9, 4, 6, 1, 3, 9, 2, 1, 0, 0, 0, 0],
        "decoder_input_tokens": [0, 9, 4, 6, 1, 3, 9, 2, 1, 0, 0, 0],
        "decoder_loss_weights": [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0],
        "decoder_causal_attention": [1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
        "target_suffix_weights": [0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0]})
    # Without suffixes the targets count as the suffix.
    x = [{"inputs": [9, 4, 6, 1], "targets": [2, 1], "suffixes": []}]
    ds = create_default_dataset(x, feature_names=("inputs", "targets", "suffixes"))
    row = next(seqio.PrefixSuffixLMFeatureConverter(pack=False)(
        ds, {"inputs": 5, "targets": 4, "suffixes": 3}).as_numpy_iterator())
    assert row["target_suffix_weights"].tolist() == [0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0]


def test_decoder_dispatches_on_task_features():
    converter = seqio.DecoderFeatureConverter(pack=False)
    lm = converter(create_default_dataset([{"targets": [3, 1]}], feature_names=("targets",)),
                   {"targets": 3})
    assert set(lm.element_spec) == {"decoder_target_tokens", "decoder_input_tokens",
                                    "decoder_loss_weights"}
    prefix = converter(create_default_dataset(ENC_DEC_X), {"inputs": 5, "targets": 3})
    assert "decoder_causal_attention" in prefix.element_spec
    assert converter.get_model_feature_lengths({"inputs": 5, "targets": 3})[
        "decoder_target_tokens"] == 8


def test_encoder_mlm_readme_example():
    x = [{"inputs": [8, 9, 9, 3, 4, 1], "targets": [8, 7, 4, 3, 4, 1]},
         {"inputs": [8, 3, 9, 1], "targets": [8, 3, 6, 1]}]
    converted = seqio.EncoderFeatureConverter(pack=True, mask_id=9)(
        create_default_dataset(x), {"inputs": 11, "targets": 11})
    assert_dataset(converted, {
        "encoder_input_tokens": [8, 9, 9, 3, 4, 1, 8, 3, 9, 1, 0],
        "encoder_target_tokens": [8, 7, 4, 3, 4, 1, 8, 3, 6, 1, 0],
        "encoder_segment_ids": [1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 0],
        "encoder_positions": [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 0],
        "encoder_loss_weights": [0, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0]})


def test_passthrough_converter_and_passthrough_features():
    ds = create_default_dataset(ENC_DEC_X)
    assert seqio.PassThroughFeatureConverter()(ds, {"anything": 1}) is ds
    with pytest.raises(ValueError, match="Packing is incompatible with pass-through"):
        seqio.EncDecFeatureConverter(pack=True, passthrough_features={
            "idx": seqio.FeatureConverter.FeatureSpec(dtype=tf.int32)})
    x = [{"inputs": [7, 1], "targets": [3, 1], "idx": [4]}]
    converter = seqio.EncDecFeatureConverter(pack=False, passthrough_features={
        "idx": seqio.FeatureConverter.FeatureSpec(dtype=tf.int32)})
    out = converter(create_default_dataset(x, feature_names=("inputs", "targets", "idx")),
                    {"inputs": 3, "targets": 3, "idx": 2})
    assert next(out.as_numpy_iterator())["idx"].tolist() == [4, 0]


def test_validations():
    converter = seqio.EncDecFeatureConverter(pack=False)
    ds = create_default_dataset(ENC_DEC_X)
    with pytest.raises(ValueError, match="task_feature_lengths contains extra features"):
        converter(ds, {"inputs": 10, "targets": 7, "other": 3})
    with pytest.raises(ValueError, match="task_feature_lengths is missing features"):
        converter(ds, {"inputs": 10})
    int64 = create_default_dataset(ENC_DEC_X, output_types={"inputs": tf.int64,
                                                            "targets": tf.int32})
    with pytest.raises(ValueError, match="incorrect type for feature 'inputs'.*Got int64"):
        converter(int64, {"inputs": 10, "targets": 7})
    # Lengths are checked when the data flows: an input longer than its task length fails.
    too_long = converter(ds, {"inputs": 4, "targets": 7})
    with pytest.raises(tf.errors.InvalidArgumentError, match="has length not less than or equal to the expected length of 4"):
        list(too_long.as_numpy_iterator())
    unchecked = seqio.EncDecFeatureConverter(pack=False, apply_length_check=False)
    assert len(list(unchecked(ds, {"inputs": 4, "targets": 7}).as_numpy_iterator())) == 2


def test_ragged_strict_length_check_in_seqio_wording():
    from t2t.seqio import feature_converters

    def checked(row_limits, length):
        x = tf.RaggedTensor.from_row_limits(list(range(1, row_limits[-1] + 1)), row_limits)
        ds = tf.data.Dataset.from_tensors({"inputs": x})
        return feature_converters._check_lengths(ds, {"inputs": length}, {"inputs": 1},
                                                 strict=True, error_label="initial")

    assert next(iter(checked([2, 4, 6], 2)))["inputs"].shape == [3, None]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Strict length check requires all RaggedTensor dimensions to be "
                             r"equal, got\] \[2 2 3\]"):
        next(iter(checked([2, 4, 7], 3)))


def test_prepacked_converters():
    x = [{"inputs": [7, 8, 1, 0], "targets": [3, 1, 4, 1], "inputs_positions": [0, 1, 2, 0],
          "inputs_segment_ids": [1, 1, 1, 0], "targets_positions": [0, 1, 0, 1],
          "targets_segment_ids": [1, 1, 2, 2]}]
    names = tuple(x[0])
    with pytest.raises(ValueError, match="'pack=True' is not allowed"):
        seqio.PrePackedEncDecFeatureConverter(pack=True)
    out = seqio.PrePackedEncDecFeatureConverter(pack=False)(
        create_default_dataset(x, feature_names=names),
        {k: 4 for k in names})
    assert next(out.as_numpy_iterator())["decoder_input_tokens"].tolist() == [0, 3, 0, 4]
