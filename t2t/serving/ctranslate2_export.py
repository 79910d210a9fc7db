"""Export a t2t Transformer checkpoint as a CTranslate2 model (float32, int16 or int8).

    path = export_ctranslate2("transformer", hparams, "/train/model.ckpt-500",
                              "/train/export/ctranslate2", "transformer_multi30k",
                              quantization="int8")
    # /train/export/ctranslate2: model.bin, config.json, shared_vocabulary.json (CTranslate2),
    # t2t_model.json, hparams.json and the problem's vocabulary files (t2t)

    translator = ctranslate2.Translator(path)   # an int8 export: load_translator(path)
    translator.translate_batch([["12", "7", "1"]], beam_size=4)   # tokens are t2t ids

`t2t.load(path)` decodes it with the problem's own encoders. CTranslate2 is the C++ engine
OpenNMT, fairseq and Marian models export to; it has no converter for T2T models, so this
module maps one onto its `TransformerSpec`:

- T2T's layer order: pre-norm (layer_preprocess_sequence "n", postprocess "da", with a
  final layer norm per stack) or post-norm ("" and "dan"); its layer-norm epsilon.
- Attention: q, k and v kernels (no biases) fused as CTranslate2 expects; heads and
  widths from the hparams; the decoder's encoder-decoder attention likewise.
- Embeddings: the (sharded) symbol-modality matrices, shared or separate for inputs,
  targets and softmax, times sqrt(hidden_size) as T2T's `sqrt_depth` mode does.
- Positions: T2T's timing signal (or learned position embeddings) as explicit tables; the
  target-space embedding, a constant T2T adds to every encoder position, is folded into the
  encoder's table. The decoder starts from a zero vector, as T2T's shifted targets do.
- Tokens are the t2t ids written as decimal strings ("0" is PAD, "1" is EOS).

What CTranslate2 cannot represent (another model than the Transformer, relative or local
attention, other layer orders, norms or feed-forward layers, decoder-only models) is a
one-line `UserError` naming it, raised by `check_convertible` before any work.
"""
import dataclasses
import os
import re
import sys
import threading

import numpy as np
import tensorflow as tf
from absl import logging

from t2t.core import atomic_files
from t2t.core import errors
from t2t.core import registry
from t2t.layers import common_attention
from t2t.model import decoding_assets
from t2t.model import model_hparams
from t2t.training import trainer_lib

# CTranslate2's weight types; the integer ones quantize the weights (per row) at export.
QUANTIZATIONS = ("float32", "int8", "int8_float32", "int16", "float16", "bfloat16",
                 "int8_float16", "int8_bfloat16")
# Rows of the position tables: inputs are cut to this length and outputs stop at it.
MAX_POSITIONS = 1024
EXPORT_NAME = "ctranslate2"
_EMBEDDING = re.compile(r"^(.*?/symbol_modality_\d+_\d+)/(shared|input_emb|target_emb|softmax)/"
                        r"weights_(\d+)$")


@dataclasses.dataclass(frozen=True)
class TransformerLayout:
    """The shape of a t2t Transformer as CTranslate2 sees it (read from hparams)."""
    scope: str
    num_encoder_layers: int
    num_decoder_layers: int
    num_heads: int
    hidden_size: int
    pre_norm: bool
    norm_epsilon: float
    positions: str                 # "timing" or "emb"
    scale_embeddings: bool
    target_space_id: int           # folded into the encoder positions; -1: none
    max_length: int


def _problem_has_inputs(hparams):
    p_hparams = model_hparams.attached_problem_hparams(hparams, "the CTranslate2 export")
    modality = p_hparams.modality
    return "inputs" in modality, modality


def check_convertible(model_name, hparams):
    """The TransformerLayout of `model_name` with `hparams`; a one-line UserError naming the
    first thing CTranslate2 cannot represent."""
    from t2t.models import transformer
    cls = registry.model(model_name)
    if cls is not transformer.Transformer:
        raise errors.UserError(
            "--export_format=ctranslate2 converts the Transformer (--model=transformer); "
            "%s (%s) has no CTranslate2 equivalent" % (model_name, cls.__name__))
    has_inputs, modality = _problem_has_inputs(hparams)
    if not has_inputs:
        raise errors.UserError("--export_format=ctranslate2 converts encoder-decoder "
                               "Transformers; this problem has no inputs (a language model)")
    for feature in ("inputs", "targets"):
        if modality.get(feature) != "symbol":
            raise errors.UserError("--export_format=ctranslate2 needs symbol %s; this "
                                   "problem's are %s" % (feature, modality.get(feature)))
    sequences = (hparams.layer_preprocess_sequence, hparams.layer_postprocess_sequence)
    orders = {("n", "da"): True, ("", "dan"): False, ("none", "dan"): False}
    if sequences not in orders:
        raise errors.UserError(
            "CTranslate2 has pre-norm (layer_preprocess_sequence=n, "
            "layer_postprocess_sequence=da) and post-norm (''/dan) Transformers; this "
            "model has %r/%r" % sequences)
    checks = [
        ("norm_type", hparams.get("norm_type", "layer"), ("layer",)),
        ("ffn_layer", hparams.get("ffn_layer", "dense_relu_dense"),
         ("dense_relu_dense", "conv_hidden_relu")),
        ("self_attention_type", hparams.get("self_attention_type", "dot_product"),
         ("dot_product",)),
        ("pos", hparams.get("pos", "timing"), ("timing", "emb")),
        ("multiply_embedding_mode", hparams.get("multiply_embedding_mode", "sqrt_depth"),
         ("sqrt_depth", "none", "")),
        ("attention_key_channels", hparams.get("attention_key_channels") or 0,
         (0, hparams.hidden_size)),
        ("attention_value_channels", hparams.get("attention_value_channels") or 0,
         (0, hparams.hidden_size)),
        ("attention_variables_3d", bool(hparams.get("attention_variables_3d")), (False,)),
        ("unidirectional_encoder", bool(hparams.get("unidirectional_encoder")), (False,)),
        ("proximity_bias", bool(hparams.get("proximity_bias")), (False,)),
        ("prepend_mode", hparams.get("prepend_mode", "none") or "none", ("none",)),
    ]
    for name, value, allowed in checks:
        if value not in allowed:
            raise errors.UserError(
                "CTranslate2 cannot represent %s=%r (it has %s); this model cannot be "
                "exported with --export_format=ctranslate2" % (
                    name, value, " or ".join(repr(a) for a in allowed)))
    for name in ("bottom", "top", "loss"):
        if hparams.get(name):
            raise errors.UserError("CTranslate2 cannot represent custom modality %s "
                                   "functions (hparams.%s=%r)" % (name, name,
                                                                 hparams.get(name)))
    p_hparams = model_hparams.attached_problem_hparams(hparams, "the CTranslate2 export")
    use_target_space = hparams.get("use_target_space_embedding", True)
    return TransformerLayout(
        scope=model_name,  # the model's variable scope
        num_encoder_layers=hparams.get("num_encoder_layers") or hparams.num_hidden_layers,
        num_decoder_layers=hparams.get("num_decoder_layers") or hparams.num_hidden_layers,
        num_heads=hparams.num_heads, hidden_size=hparams.hidden_size,
        pre_norm=orders[sequences], norm_epsilon=float(hparams.norm_epsilon),
        positions=hparams.get("pos", "timing"),
        scale_embeddings=hparams.get("multiply_embedding_mode", "sqrt_depth") == "sqrt_depth",
        target_space_id=int(p_hparams.target_space_id) if use_target_space else -1,
        max_length=int(hparams.get("max_length") or 0))


class _Checkpoint:
    """The checkpoint's float tensors by name, transposed for CTranslate2 where asked."""

    def __init__(self, path, scope):
        self.reader = tf.train.load_checkpoint(path)
        self.names = set(self.reader.get_variable_to_shape_map())
        self.scope = scope

    def get(self, name):
        full = "%s/%s" % (self.scope, name)
        if full not in self.names:
            raise errors.UserError("the checkpoint has no variable %s; it was not written by "
                                   "t2t's Transformer with these hparams" % full)
        return np.asarray(self.reader.get_tensor(full), dtype=np.float32)

    def has(self, name):
        return "%s/%s" % (self.scope, name) in self.names

    def kernel(self, name):
        """A dense kernel [in, out] as CTranslate2's [out, in]."""
        return np.ascontiguousarray(self.get(name).T)

    def embeddings(self):
        """{"shared"|"input_emb"|"target_emb"|"softmax": [vocab, depth]} of the modalities."""
        shards = {}
        for name in self.names:
            match = _EMBEDDING.match(name)
            if match and match.group(1).startswith(self.scope + "/"):
                shards.setdefault(match.group(2), {})[int(match.group(3))] = name
        return {kind: np.concatenate([np.asarray(self.reader.get_tensor(found[i]), np.float32)
                                      for i in sorted(found)], axis=0)
                for kind, found in shards.items()}


def timing_table(length, depth):
    """T2T's timing signal [length, depth], computed by t2t's own op (the same floats)."""
    return common_attention.get_timing_signal_1d(length, depth).numpy()[0]


def _position_tables(layout, checkpoint):
    """(encoder table, decoder table), each [MAX_POSITIONS, hidden_size]."""
    if layout.positions == "timing":
        encoder = decoder = timing_table(MAX_POSITIONS, layout.hidden_size)
    else:  # learned; T2T gives positions past max_length a zero embedding
        tables = []
        for name in ("body/inputs_positional_embedding", "body/targets_positional_embedding"):
            table = np.zeros([MAX_POSITIONS, layout.hidden_size], np.float32)
            learned = checkpoint.get(name).reshape(-1, layout.hidden_size)[:MAX_POSITIONS]
            table[:len(learned)] = learned
            tables.append(table)
        encoder, decoder = tables
    if layout.target_space_id >= 0 and checkpoint.has("body/target_space_embedding/kernel"):
        space = checkpoint.get("body/target_space_embedding/kernel")[layout.target_space_id]
        encoder = encoder + space[None, :]
    return encoder.astype(np.float32), decoder.astype(np.float32)


def _set_layer_norm(spec, checkpoint, scope):
    spec.gamma = checkpoint.get(scope + "/layer_norm/layer_norm_scale")
    spec.beta = checkpoint.get(scope + "/layer_norm/layer_norm_bias")


def _norm_scope(layout):
    """Where a sub-layer's layer norm lives: T2T's pre-norm normalises in layer_preprocess
    (scope "layer_prepostprocess"), its post-norm in layer_postprocess."""
    return "layer_prepostprocess" if layout.pre_norm else "layer_postprocess"


def _set_attention(spec, checkpoint, scope, self_attention, norm_scope):
    base = scope + "/multihead_attention/"
    q, k, v = (checkpoint.kernel(base + name + "/kernel") for name in ("q", "k", "v"))
    if self_attention:
        spec.linear[0].weight = np.concatenate([q, k, v], axis=0)
    else:
        spec.linear[0].weight = q
        spec.linear[1].weight = np.concatenate([k, v], axis=0)
    spec.linear[-1].weight = checkpoint.kernel(base + "output_transform/kernel")
    _set_layer_norm(spec.layer_norm, checkpoint, scope + "/" + norm_scope)


def _set_ffn(spec, checkpoint, scope, norm_scope):
    spec.linear_0.weight = checkpoint.kernel(scope + "/conv1/kernel")
    spec.linear_0.bias = checkpoint.get(scope + "/conv1/bias")
    spec.linear_1.weight = checkpoint.kernel(scope + "/conv2/kernel")
    spec.linear_1.bias = checkpoint.get(scope + "/conv2/bias")
    _set_layer_norm(spec.layer_norm, checkpoint, scope + "/" + norm_scope)


def _vocabulary(size):
    return [str(i) for i in range(size)]


def transformer_spec(layout, checkpoint_path):
    """The CTranslate2 TransformerSpec of a t2t Transformer checkpoint (imports ctranslate2)."""
    from ctranslate2 import specs
    checkpoint = _Checkpoint(checkpoint_path, layout.scope)
    spec = specs.TransformerSpec.from_config(
        (layout.num_encoder_layers, layout.num_decoder_layers), layout.num_heads,
        pre_norm=layout.pre_norm)
    embeddings = checkpoint.embeddings()
    if "shared" in embeddings:
        source = target = softmax = embeddings["shared"]
        source = embeddings.get("input_emb", source)
    else:
        missing = sorted({"input_emb", "target_emb", "softmax"} - set(embeddings))
        if missing:
            raise errors.UserError("the checkpoint has no symbol-modality %s weights; it was "
                                   "not written by t2t's Transformer" % ", ".join(missing))
        source, target, softmax = (embeddings[k] for k in ("input_emb", "target_emb",
                                                            "softmax"))
    encoder_positions, decoder_positions = _position_tables(layout, checkpoint)
    norm = _norm_scope(layout)

    encoder = spec.encoder
    encoder.embeddings[0].weight = source
    encoder.scale_embeddings = layout.scale_embeddings
    encoder.position_encodings.encodings = encoder_positions
    for index, layer in enumerate(encoder.layer):
        scope = "body/encoder/layer_%d" % index
        _set_attention(layer.self_attention, checkpoint, scope + "/self_attention", True, norm)
        _set_ffn(layer.ffn, checkpoint, scope + "/ffn", norm)
    decoder = spec.decoder
    decoder.embeddings.weight = target
    decoder.scale_embeddings = layout.scale_embeddings
    decoder.start_from_zero_embedding = True
    decoder.position_encodings.encodings = decoder_positions
    decoder.projection.weight = softmax
    for index, layer in enumerate(decoder.layer):
        scope = "body/decoder/layer_%d" % index
        _set_attention(layer.self_attention, checkpoint, scope + "/self_attention", True, norm)
        _set_attention(layer.attention, checkpoint, scope + "/encdec_attention", False, norm)
        _set_ffn(layer.ffn, checkpoint, scope + "/ffn", norm)
    if layout.pre_norm:
        _set_layer_norm(encoder.layer_norm, checkpoint, "body/encoder/layer_prepostprocess")
        _set_layer_norm(decoder.layer_norm, checkpoint, "body/decoder/layer_prepostprocess")
    spec.config.layer_norm_epsilon = layout.norm_epsilon
    spec.config.unk_token = spec.config.bos_token = spec.config.decoder_start_token = "0"
    spec.config.eos_token = "1"
    spec.register_source_vocabulary(_vocabulary(len(source)))
    spec.register_target_vocabulary(_vocabulary(len(softmax)))
    return spec


def _quantization_error(quantization):
    close = registry.closest_names(str(quantization), QUANTIZATIONS, n=2)
    return errors.UserError("--quantization=%s is not a CTranslate2 weight type; %suse one of "
                            "%s" % (quantization, "did you mean %s? " % " or ".join(close)
                                    if close else "", ", ".join(QUANTIZATIONS)))


def check_quantization(quantization):
    if quantization not in QUANTIZATIONS:
        raise _quantization_error(quantization)
    return quantization


# How long CTranslate2's OpenMP threads (GNU libgomp) spin before they sleep, waiting for
# the next parallel region: long enough to bridge the gaps inside one decode, short enough
# (about 0.1 ms) to give the cores back soon after a batch. Measured side by side on the
# Multi30k model, float32, 2 threads (bench/ctranslate2_wait_policy.py): 268 sentences/s and
# 5.9 ms a sentence alone, against 108 and 51 ms with OMP_WAIT_POLICY=PASSIVE (a sleeping
# thread's wake-up costs more than a parallel region) and 276 and 6.2 ms spinning for good.
SPIN_COUNT = "10000"


def set_openmp_wait():
    """Give libgomp `SPIN_COUNT` (GOMP_SPINCOUNT) unless the user chose how its threads wait
    (OMP_WAIT_POLICY or GOMP_SPINCOUNT). libgomp reads them once, as it loads: this must
    run before the first import of ctranslate2."""
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT


def require_ctranslate2():
    """The ctranslate2 module; a one-line UserError naming the install when it is missing.

    Before the first import, the OpenMP threads' wait is set (`set_openmp_wait`).
    """
    if "ctranslate2" not in sys.modules:
        set_openmp_wait()
    try:
        import ctranslate2
    except ImportError:
        raise errors.UserError("the CTranslate2 engine needs the ctranslate2 package: pip "
                               "install 't2t-toolkit[ctranslate2]'") from None
    return ctranslate2


def load_translator(path, **kwargs):
    """`ctranslate2.Translator(path, **kwargs)`, built in a thread that ends once it is built.

        translator = load_translator("/train/export/ctranslate2", device="cpu",
                                     intra_threads=2, inter_threads=1)

    Loading an int8 model prepares its weights in an OpenMP parallel region of the loading
    thread, which leaves that thread a team of OpenMP threads for as long as it lives,
    beside the team of the translator's own worker that decodes. libgomp then counts more
    OpenMP threads than CPUs and spins only 100 turns before sleeping (1,000 under
    OMP_WAIT_POLICY=ACTIVE; its manual, GOMP_SPINCOUNT), so the decode's threads sleep
    through each short gap, and under ACTIVE the idle team also takes a core. Built in a passing thread, the model's load team ends with it. Measured
    on the Multi30k int8 export, 2 threads, an AMD EPYC with AVX-512 (docs/inference_benchmark.md):
    one sentence at beam 4 in 4.9-9.8 ms instead of 57-59 ms. float32 loads leave no team.
    """
    ctranslate2 = require_ctranslate2()
    built = {}

    def build():
        try:
            built["translator"] = ctranslate2.Translator(path, **kwargs)
        except BaseException as error:  # re-raised in the caller's thread
            built["error"] = error

    loader = threading.Thread(target=build, name="ctranslate2-load")
    loader.start()
    loader.join()
    if "error" in built:
        raise built["error"]
    return built["translator"]


def export_ctranslate2(model_name, hparams, checkpoint_path, export_dir, hparams_set,
                       quantization="float32", hparams_overrides="", t2t_usr_dir=""):
    """Write `checkpoint_path`'s Transformer as a CTranslate2 model folder `export_dir`.

    `hparams_set` (the registered set `hparams` came from), `hparams_overrides` and
    `t2t_usr_dir` are recorded in t2t_model.json for loading.

    The folder is written under a temporary name and renamed when complete (an existing
    one is replaced). Besides CTranslate2's files it holds `t2t_model.json`, `hparams.json`
    and the problem's vocabulary files, so `t2t.load(export_dir)` decodes text with it.
    Returns `export_dir`.
    """
    check_quantization(quantization)
    layout = check_convertible(model_name, hparams)
    ctranslate2 = require_ctranslate2()
    from ctranslate2.converters import converter as converter_lib

    class _T2TConverter(converter_lib.Converter):
        def _load(self):
            return transformer_spec(layout, checkpoint_path)

    logging.info("Converting %s (%s) to CTranslate2 with %s weights", checkpoint_path,
                 model_name, quantization)
    export_dir = os.path.abspath(os.path.expanduser(export_dir))
    with atomic_files.atomic_output_dir(export_dir) as tmp:
        _T2TConverter().convert(tmp, quantization=quantization, force=True)
        trainer_lib.save_metadata(tmp, hparams)
        problem_hparams = model_hparams.attached_problem_hparams(hparams, "the export")
        decoding_assets.save_decoding_assets(
            tmp, hparams, model_name, hparams_set,
            hparams_overrides=hparams_overrides, t2t_usr_dir=t2t_usr_dir, export=EXPORT_NAME,
            export_settings={"checkpoint": os.path.basename(checkpoint_path),
                             "quantization": quantization,
                             "ctranslate2_version": ctranslate2.__version__,
                             "max_positions": MAX_POSITIONS,
                             "max_length": layout.max_length,
                             "vocab_size": {k: int(v) for k, v in
                                            problem_hparams.vocab_size.items()}})
    logging.info("Exported %s to %s", checkpoint_path, export_dir)
    return export_dir
