"""The settings of one multi-head attention layer, as a frozen spec.

T2T's `multihead_attention` takes 38 arguments; most are settings that stay the same for
every call of a layer. They live here, checked once when the spec is made:

    config = MultiheadAttentionConfig(total_key_depth=16, total_value_depth=16,
                                      output_depth=16, num_heads=4)
    y = common_attention.multihead_attention_with_config(x, None, bias, config)   # [B, L, 16]

    config = MultiheadAttentionConfig.from_hparams(hparams)     # a Transformer layer's settings
    config = dataclasses.replace(config, attention_type="dot_product")

    MultiheadAttentionConfig(16, 16, 16, num_heads=3)
    # ValueError: MultiheadAttentionConfig: total_key_depth (16) must be divisible by
    #   num_heads (3)
"""
import dataclasses
import numbers
from typing import Callable, Optional, Tuple, Union

SUPPORTED_ATTENTION_TYPES = (
    "dot_product", "dot_product_relative", "dot_product_relative_v2",
    "dot_product_unmasked_relative_v2", "local_within_block_mask_right",
    "local_relative_mask_right", "local_mask_right", "local_unmasked", "masked_dilated_1d",
    "unmasked_dilated_1d")
# Attention types whose per-position cache exists (fast decoding); as T2T's.
CACHED_ATTENTION_TYPES = ("dot_product", "dot_product_relative")
_NEED_MAX_RELATIVE_POSITION = ("dot_product_relative", "dot_product_relative_v2",
                               "dot_product_unmasked_relative_v2")
_PADDINGS = ("VALID", "SAME", "LEFT")


def _comma_separated_ints(text):
    return tuple(int(part) for part in str(text).split(",") if part.strip())


@dataclasses.dataclass(frozen=True)
class MultiheadAttentionConfig:
    """Everything about a multi-head attention layer except its input tensors.

    Attributes:
      total_key_depth, total_value_depth: q/k and v depths over all heads.
      output_depth: channels of the layer's output.
      num_heads: heads; both depths must be divisible by it.
      dropout_rate: dropout on the attention weights, in [0, 1).
      attention_type: one of SUPPORTED_ATTENTION_TYPES (T2T's strings; the relative ones
        but "local_relative_mask_right" need max_relative_position) or a callable
        f(q, k, v, **kwargs) on per-head tensors.
      max_relative_position: clipping distance of relative position embeddings.
      heads_share_relative_embedding, add_relative_to_values: the "*relative_v2" and
        "local_relative_mask_right" options (one embedding for all heads; relative
        embeddings added to the values too).
      block_length: query block of the local and dilated types; block_width: how far
        "local_unmasked" looks to each side, and the dilated types' memory block size.
      gap_size, num_memory_blocks: the dilated types' gap and memory blocks per side.
      q_filter_width, kv_filter_width, q_padding, kv_padding: 1-D convolutions instead of
        dense projections when the widths are > 1 (padding "VALID", "SAME" or "LEFT").
      image_shapes: for attention-weight image summaries of image models.
      make_image_summary: write attention-weight image summaries.
      dropout_broadcast_dims: dimensions over which the dropout mask is shared.
      vars_3d: 3-D q/k/v/output kernels ([depth, heads, depth/heads]).
      hard_attention_k: keep only the k largest attention weights (0: all).
      gumbel_noise_weight: Gumbel noise added to the attention logits while training.
      activation_dtype, weight_dtype: "float32", or "float16"/"bfloat16" activations.
      name: the variable scope of the layer (T2T's default "multihead_attention").
    """
    total_key_depth: int
    total_value_depth: int
    output_depth: int
    num_heads: int
    dropout_rate: float = 0.0
    attention_type: Union[str, Callable] = "dot_product"
    max_relative_position: Optional[int] = None
    heads_share_relative_embedding: bool = False
    add_relative_to_values: bool = False
    block_length: int = 128
    block_width: int = 128
    gap_size: int = 0
    num_memory_blocks: int = 2
    q_filter_width: int = 1
    kv_filter_width: int = 1
    q_padding: str = "VALID"
    kv_padding: str = "VALID"
    image_shapes: Optional[tuple] = None
    make_image_summary: bool = True
    dropout_broadcast_dims: Optional[Tuple[int, ...]] = None
    vars_3d: bool = False
    hard_attention_k: int = 0
    gumbel_noise_weight: float = 0.0
    activation_dtype: str = "float32"
    weight_dtype: str = "float32"
    name: str = "multihead_attention"

    def __post_init__(self):
        def fail(what):
            raise ValueError("MultiheadAttentionConfig: %s" % what)

        for field in ("total_key_depth", "total_value_depth", "output_depth", "num_heads"):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                fail("%s must be a positive int, got %r" % (field, value))
        for field in ("total_key_depth", "total_value_depth"):
            if getattr(self, field) % self.num_heads:
                fail("%s (%d) must be divisible by num_heads (%d)" % (
                    field, getattr(self, field), self.num_heads))
        if isinstance(self.dropout_rate, numbers.Real) and not 0.0 <= self.dropout_rate < 1.0:
            fail("dropout_rate must be in [0, 1), got %r" % (self.dropout_rate,))
        if not callable(self.attention_type) and (
                self.attention_type not in SUPPORTED_ATTENTION_TYPES):
            fail("attention_type %r is not supported in t2t; use one of %s or a callable" % (
                self.attention_type, ", ".join(SUPPORTED_ATTENTION_TYPES)))
        if (self.attention_type in _NEED_MAX_RELATIVE_POSITION and
                not self.max_relative_position):
            fail("attention_type %r needs max_relative_position > 0, got %r" % (
                self.attention_type, self.max_relative_position))
        for field in ("block_length", "block_width", "num_memory_blocks"):
            if not isinstance(getattr(self, field), int) or getattr(self, field) < 1:
                fail("%s must be a positive int, got %r" % (field, getattr(self, field)))
        if not isinstance(self.gap_size, int) or self.gap_size < 0:
            fail("gap_size must be an int >= 0, got %r" % (self.gap_size,))
        for field in ("q_filter_width", "kv_filter_width"):
            if getattr(self, field) < 1:
                fail("%s must be >= 1, got %r" % (field, getattr(self, field)))
        for field in ("q_padding", "kv_padding"):
            if getattr(self, field) not in _PADDINGS:
                fail("%s must be one of %s, got %r" % (field, ", ".join(_PADDINGS),
                                                       getattr(self, field)))
        if self.hard_attention_k < 0:
            fail("hard_attention_k must be >= 0, got %r" % (self.hard_attention_k,))
        if self.dropout_broadcast_dims is not None:
            object.__setattr__(self, "dropout_broadcast_dims",
                               tuple(int(d) for d in self.dropout_broadcast_dims))

    @property
    def key_depth_per_head(self) -> int:
        return self.total_key_depth // self.num_heads

    @classmethod
    def from_hparams(cls, hparams, attention_type=None, **overrides):
        """A Transformer layer's attention settings from its hparams.

        Depths are `attention_key_channels` / `attention_value_channels` (or `hidden_size`),
        the output `hidden_size`, heads `num_heads`, dropout `attention_dropout`, the type
        `self_attention_type` unless `attention_type` is given; `overrides` replace fields.

            MultiheadAttentionConfig.from_hparams(transformer_tiny()).num_heads    # 4
        """
        get = hparams.get
        settings = dict(
            total_key_depth=get("attention_key_channels") or hparams.hidden_size,
            total_value_depth=get("attention_value_channels") or hparams.hidden_size,
            output_depth=hparams.hidden_size,
            num_heads=hparams.num_heads,
            dropout_rate=get("attention_dropout", 0.0),
            attention_type=attention_type or get("self_attention_type", "dot_product"),
            max_relative_position=get("max_relative_position") or None,
            heads_share_relative_embedding=bool(get("heads_share_relative_embedding")),
            add_relative_to_values=bool(get("add_relative_to_values")),
            dropout_broadcast_dims=_comma_separated_ints(
                get("attention_dropout_broadcast_dims") or "") or None,
            vars_3d=get("attention_variables_3d", False),
            hard_attention_k=get("hard_attention_k", 0),
            gumbel_noise_weight=get("gumbel_noise_weight", 0.0),
            activation_dtype=get("activation_dtype", "float32"),
            weight_dtype=get("weight_dtype", "float32"))
        settings.update(overrides)
        return cls(**settings)
