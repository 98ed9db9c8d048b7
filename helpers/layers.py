"""The Transformer's layers, small enough to read in one sitting (notebooks 06 and 07 build them).

    MultiHeadAttention  h heads of scaled dot-product attention side by side, then W_O
    FeedForward         d_model -> d_ff -> d_model, applied to each position on its own
    LayerNorm, RMSNorm  per-token normalisation over the features
    EncoderBlock        self-attention + FFN, each wrapped in a residual and a norm
    DecoderBlock        masked self-attention + cross-attention + FFN

Conventions: batch first, x is (B, n, d_model). Masks are boolean with **True = may
attend** (as ``helpers.scaled_dot_product_attention``), broadcastable to the scores'
shape (B, h, n_q, n_k): ``causal_mask(n)`` is (n, n), ``padding_mask(tokens)`` is
(B, 1, 1, n). PyTorch's ``nn.MultiheadAttention`` and ``nn.Transformer*Layer`` use the
opposite convention (True = blocked); the ``from_torch`` class methods copy their
weights, and the tests check every layer equal to its PyTorch counterpart.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .attention import scaled_dot_product_attention
from .i18n import translate as tr

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}  # gelu = the exact erf form, as PyTorch's default


def _check_input(x, d_model: int, name: str, ndim: int | None = None) -> None:
    """Raise a clear error unless ``x`` is a floating tensor whose last dimension is d_model."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(tr(f"{name} must be a torch tensor, got {type(x).__name__}"))
    if not x.is_floating_point():
        raise TypeError(tr(f"{name} must be a floating-point tensor, got dtype {x.dtype}"))
    if ndim is not None and x.ndim != ndim:
        raise ValueError(
            f"{name} must have shape (B, n, d_model={d_model}), got shape {tuple(x.shape)}"
            + ("; add a batch dimension with x.unsqueeze(0)" if x.ndim == ndim - 1 else "")
        )
    if x.ndim == 0 or x.shape[-1] != d_model:
        raise ValueError(tr(f"{name} must end in d_model={d_model} features, got shape {tuple(x.shape)}"))


def _check_dims(**dims: int) -> None:
    for name, value in dims.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(tr(f"{name} must be a positive integer, got {value!r}"))


def _activation_name(activation) -> str:
    """'relu' or 'gelu' for a string, a function or a module PyTorch's layers accept."""
    if isinstance(activation, str) and activation in ACTIVATIONS:
        return activation
    if activation is F.relu or isinstance(activation, nn.ReLU):
        return "relu"
    if activation is F.gelu or (isinstance(activation, nn.GELU) and activation.approximate == "none"):
        return "gelu"
    raise ValueError(tr(f"activation must be 'relu' or 'gelu' (exact), got {activation!r}"))


def _copy_(target: nn.Parameter | None, source: torch.Tensor | None, name: str) -> None:
    if (target is None) != (source is None):
        raise ValueError(tr(f"{name}: one module has a bias and the other has not"))
    if target is not None:
        with torch.no_grad():
            target.copy_(source)


# --- multi-head attention ----------------------------------------------------------


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, n, d_model) -> (B, h, n, d_k): cut the features into h slices of d_k = d_model / h."""
    B, n, d_model = x.shape
    return x.view(B, n, num_heads, d_model // num_heads).transpose(1, 2)  # (B, h, n, d_k)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, h, n, d_k) -> (B, n, h·d_k): put the heads' outputs side by side again."""
    B, h, n, d_k = x.shape
    return x.transpose(1, 2).reshape(B, n, h * d_k)  # (B, n, d_model)


class MultiHeadAttention(nn.Module):
    """h heads of attention, each on its own d_k = d_model / h slice of the projections.

    Args:
        d_model: features per token in and out.
        num_heads: h; must divide d_model.
        bias: whether W_Q, W_K, W_V and W_O have biases.
        dropout: probability of dropping an attention weight while training.

    Parameters: 4 · d_model² weights (+ 4 · d_model biases), whatever h is.
    """

    def __init__(self, d_model: int, num_heads: int, bias: bool = True, dropout: float = 0.0) -> None:
        super().__init__()
        _check_dims(d_model=d_model, num_heads=num_heads)
        if d_model % num_heads:
            divisors = [h for h in range(1, d_model + 1) if d_model % h == 0]
            raise ValueError(
                tr(f"d_model={d_model} is not divisible by num_heads={num_heads}: each head takes "
                f"d_model / num_heads features; num_heads can be one of {divisors}")
            )
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.dropout = dropout
        self.w_q = nn.Linear(d_model, d_model, bias=bias)  # all h query projections at once
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)  # mixes the h heads' outputs

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attend from ``query`` to ``key``/``value``; self-attention is ``mha(x, x, x)``.

        Args:
            query: (B, n_q, d_model). key, value: (B, n_k, d_model).
            mask: bool, True = may attend, broadcastable to (B, h, n_q, n_k), e.g.
                (n_q, n_k) or (B, 1, 1, n_k); a 3-D mask is read as (B, n_q, n_k).

        Returns:
            output (B, n_q, d_model) and weights (B, h, n_q, n_k). A query whose keys are
            all blocked gets zero weights (its output is W_O's bias), never NaN.
        """
        for name, t in (("query", query), ("key", key), ("value", value)):
            _check_input(t, self.d_model, name, ndim=3)
        if key.shape != value.shape or query.shape[0] != key.shape[0]:
            raise ValueError(
                tr("key and value must have the same shape (B, n_k, d_model) and the same batch B as "
                f"query; got query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}")
            )
        if mask is not None and not isinstance(mask, torch.Tensor):
            raise TypeError(tr(f"mask must be a bool torch tensor (True = may attend), got {type(mask).__name__}"))
        if mask is not None and mask.ndim == 3:
            mask = mask.unsqueeze(1)  # (B, n_q, n_k) -> (B, 1, n_q, n_k): same for every head
        q = split_heads(self.w_q(query), self.num_heads)  # (B, h, n_q, d_k)
        k = split_heads(self.w_k(key), self.num_heads)  # (B, h, n_k, d_k)
        v = split_heads(self.w_v(value), self.num_heads)  # (B, h, n_k, d_k)
        out, weights = scaled_dot_product_attention(q, k, v, mask=mask)  # (B, h, n_q, d_k), (B, h, n_q, n_k)
        if self.training and self.dropout > 0:
            weights = F.dropout(weights, self.dropout)
            out = weights @ v
        return self.w_o(merge_heads(out)), weights  # (B, n_q, d_model), (B, h, n_q, n_k)

    @classmethod
    def from_torch(cls, m: nn.MultiheadAttention) -> MultiHeadAttention:
        """The same layer as ``m``, weights copied (``in_proj_weight`` is W_Q, W_K, W_V stacked)."""
        if not isinstance(m, nn.MultiheadAttention):
            raise TypeError(tr(f"expected nn.MultiheadAttention, got {type(m).__name__}"))
        if not m._qkv_same_embed_dim or m.bias_k is not None or m.add_zero_attn:
            raise ValueError(tr("only nn.MultiheadAttention with kdim = vdim = embed_dim, no add_bias_kv and no add_zero_attn"))
        ref = m.out_proj.weight
        mine = cls(m.embed_dim, m.num_heads, bias=m.in_proj_bias is not None, dropout=m.dropout)
        mine.to(device=ref.device, dtype=ref.dtype)
        w_q, w_k, w_v = m.in_proj_weight.chunk(3)  # each (d_model, d_model)
        b_q, b_k, b_v = m.in_proj_bias.chunk(3) if m.in_proj_bias is not None else (None, None, None)
        for lin, w, b in ((mine.w_q, w_q, b_q), (mine.w_k, w_k, b_k), (mine.w_v, w_v, b_v), (mine.w_o, ref, m.out_proj.bias)):
            _copy_(lin.weight, w, "MultiheadAttention weight")
            _copy_(lin.bias, b, "MultiheadAttention")
        return mine.train(m.training)


# --- feed-forward and norms --------------------------------------------------------


class FeedForward(nn.Module):
    """Position-wise MLP: d_model -> d_ff -> activation -> d_model, each token on its own.

    Args:
        d_model: features in and out. d_ff: hidden width (4 · d_model in the 2017 paper).
        activation: "relu" (2017) or "gelu" (BERT, GPT, ViT).
        dropout: on the hidden activations while training.
    """

    def __init__(self, d_model: int, d_ff: int, activation: str = "relu", dropout: float = 0.0, bias: bool = True) -> None:
        super().__init__()
        _check_dims(d_model=d_model, d_ff=d_ff)
        self.d_model, self.activation = d_model, _activation_name(activation)
        self.up = nn.Linear(d_model, d_ff, bias=bias)
        self.down = nn.Linear(d_ff, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., d_model) -> (..., d_model)."""
        _check_input(x, self.d_model, "x")
        hidden = ACTIVATIONS[self.activation](self.up(x))  # (..., d_ff)
        return self.down(self.dropout(hidden))  # (..., d_model)

    @classmethod
    def from_torch(cls, linear1: nn.Linear, linear2: nn.Linear, activation="relu") -> FeedForward:
        """The same MLP as ``linear2(activation(linear1(x)))`` (e.g. a TransformerEncoderLayer's)."""
        mine = cls(linear1.in_features, linear1.out_features, _activation_name(activation), bias=linear1.bias is not None)
        if linear2.in_features != linear1.out_features or linear2.out_features != linear1.in_features:
            raise ValueError(tr(f"linear2 {tuple(linear2.weight.shape)} does not undo linear1 {tuple(linear1.weight.shape)}"))
        mine.to(device=linear1.weight.device, dtype=linear1.weight.dtype)
        for lin, ref in ((mine.up, linear1), (mine.down, linear2)):
            _copy_(lin.weight, ref.weight, "FeedForward weight")
            _copy_(lin.bias, ref.bias, "FeedForward")
        return mine


class LayerNorm(nn.Module):
    """Normalise each token's d_model features to mean 0, variance 1, then scale and shift.

    y = (x - mean) / sqrt(var + eps) · weight + bias, with the biased variance (divide by
    d_model), as ``nn.LayerNorm``.
    """

    def __init__(self, d_model: int, eps: float = 1e-5, bias: bool = True) -> None:
        super().__init__()
        _check_dims(d_model=d_model)
        self.d_model, self.eps = d_model, eps
        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
        self.bias = nn.Parameter(torch.zeros(d_model)) if bias else None  # beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., d_model) -> (..., d_model)."""
        _check_input(x, self.d_model, "x")
        mean = x.mean(dim=-1, keepdim=True)  # (..., 1)
        var = x.var(dim=-1, keepdim=True, unbiased=False)  # (..., 1)
        y = (x - mean) / torch.sqrt(var + self.eps) * self.weight
        return y if self.bias is None else y + self.bias

    @classmethod
    def from_torch(cls, m: nn.LayerNorm) -> LayerNorm:
        """The same norm as a 1-D ``nn.LayerNorm`` (no affine = weight 1, bias 0)."""
        if len(m.normalized_shape) != 1:
            raise ValueError(tr(f"only a LayerNorm over the last dimension, got normalized_shape {m.normalized_shape}"))
        mine = cls(m.normalized_shape[0], eps=m.eps, bias=m.bias is not None or m.weight is None)
        if m.weight is not None:
            mine.to(device=m.weight.device, dtype=m.weight.dtype)
            _copy_(mine.weight, m.weight, "LayerNorm weight")
            _copy_(mine.bias, m.bias, "LayerNorm")
        return mine


class RMSNorm(nn.Module):
    """LayerNorm without the mean: divide by the root mean square, then scale (Llama).

    y = x / sqrt(mean(x²) + eps) · weight. No bias, no centring: cheaper, and it works as well.
    """

    def __init__(self, d_model: int, eps: float = 1e-6) -> None:
        super().__init__()
        _check_dims(d_model=d_model)
        self.d_model, self.eps = d_model, eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., d_model) -> (..., d_model)."""
        _check_input(x, self.d_model, "x")
        rms = torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)  # (..., 1)
        return x / rms * self.weight

    @classmethod
    def from_torch(cls, m: nn.RMSNorm) -> RMSNorm:
        """The same norm as a 1-D ``nn.RMSNorm`` (its eps=None means the dtype's machine epsilon)."""
        if len(m.normalized_shape) != 1:
            raise ValueError(tr(f"only an RMSNorm over the last dimension, got normalized_shape {m.normalized_shape}"))
        dtype = m.weight.dtype if m.weight is not None else torch.get_default_dtype()
        mine = cls(m.normalized_shape[0], eps=m.eps if m.eps is not None else torch.finfo(dtype).eps)
        if m.weight is not None:
            mine.to(device=m.weight.device, dtype=dtype)
            _copy_(mine.weight, m.weight, "RMSNorm weight")
        return mine


# --- Transformer blocks ------------------------------------------------------------


class EncoderBlock(nn.Module):
    """Self-attention then FFN, each added back to its input (residual) and normalised.

    norm_first=False (post-norm, 2017):  x = norm1(x + attn(x));  x = norm2(x + ffn(x))
    norm_first=True  (pre-norm, modern): x = x + attn(norm1(x));  x = x + ffn(norm2(x))

    After a forward pass, ``attn_weights`` holds the attention weights (B, h, n, n), detached.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        norm_first: bool = False,
        activation: str = "relu",
        dropout: float = 0.0,
        eps: float = 1e-5,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, bias=bias, dropout=dropout)
        self.ffn = FeedForward(d_model, d_ff, activation, dropout=dropout, bias=bias)
        self.norm1 = LayerNorm(d_model, eps=eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=eps, bias=bias)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.attn_weights: torch.Tensor | None = None

    def _attend(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        out, weights = self.self_attn(x, x, x, mask=mask)  # (B, n, d_model), (B, h, n, n)
        self.attn_weights = weights.detach()
        return self.dropout1(out)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, n, d_model), mask broadcastable to (B, h, n, n), True = may attend -> (B, n, d_model)."""
        _check_input(x, self.self_attn.d_model, "x", ndim=3)
        if self.norm_first:
            x = x + self._attend(self.norm1(x), mask)
            x = x + self.dropout2(self.ffn(self.norm2(x)))
        else:
            x = self.norm1(x + self._attend(x, mask))
            x = self.norm2(x + self.dropout2(self.ffn(x)))
        return x

    @classmethod
    def from_torch(cls, layer: nn.TransformerEncoderLayer) -> EncoderBlock:
        """The same block as ``layer``: weights, norm_first, activation, eps and dropout copied.

        The copy is batch first whatever ``layer.batch_first`` says, and takes masks with
        True = may attend (``~src_mask``; ``~src_key_padding_mask[:, None, None, :]``).
        """
        if not isinstance(layer, nn.TransformerEncoderLayer):
            raise TypeError(tr(f"expected nn.TransformerEncoderLayer, got {type(layer).__name__}"))
        attn = MultiHeadAttention.from_torch(layer.self_attn)
        mine = cls(
            attn.d_model, attn.num_heads, layer.linear1.out_features, norm_first=layer.norm_first,
            activation=_activation_name(layer.activation), dropout=layer.dropout.p, eps=layer.norm1.eps,
            bias=layer.linear1.bias is not None,
        )
        mine.self_attn = attn
        mine.ffn = FeedForward.from_torch(layer.linear1, layer.linear2, mine.ffn.activation)
        mine.ffn.dropout.p = layer.dropout.p
        mine.norm1, mine.norm2 = LayerNorm.from_torch(layer.norm1), LayerNorm.from_torch(layer.norm2)
        return mine.train(layer.training)


class DecoderBlock(nn.Module):
    """Masked self-attention, cross-attention to the encoder's output, FFN; residual + norm each.

    Cross-attention takes its queries from the decoder (x) and its keys and values from
    ``memory``, the encoder's output. norm_first as in :class:`EncoderBlock` (memory is not
    normalised here: in a pre-norm model the encoder's final norm does that).

    After a forward pass, ``self_attn_weights`` (B, h, n, n) and ``cross_attn_weights``
    (B, h, n, m) hold the attention weights, detached.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        norm_first: bool = False,
        activation: str = "relu",
        dropout: float = 0.0,
        eps: float = 1e-5,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, bias=bias, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, bias=bias, dropout=dropout)
        self.ffn = FeedForward(d_model, d_ff, activation, dropout=dropout, bias=bias)
        self.norm1 = LayerNorm(d_model, eps=eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=eps, bias=bias)
        self.norm3 = LayerNorm(d_model, eps=eps, bias=bias)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)
        self.self_attn_weights: torch.Tensor | None = None
        self.cross_attn_weights: torch.Tensor | None = None

    def _self_attend(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        out, weights = self.self_attn(x, x, x, mask=mask)  # (B, n, d_model), (B, h, n, n)
        self.self_attn_weights = weights.detach()
        return self.dropout1(out)

    def _cross_attend(self, x: torch.Tensor, memory: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        out, weights = self.cross_attn(x, memory, memory, mask=mask)  # (B, n, d_model), (B, h, n, m)
        self.cross_attn_weights = weights.detach()
        return self.dropout2(out)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        self_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Run the block.

        Args:
            x: the decoder's tokens (B, n, d_model).
            memory: the encoder's output (B, m, d_model).
            self_mask: broadcastable to (B, h, n, n), True = may attend; ``causal_mask(n)``
                for a decoder that must not see the future.
            memory_mask: broadcastable to (B, h, n, m), e.g. ``padding_mask(source)``.

        Returns:
            (B, n, d_model).
        """
        d_model = self.self_attn.d_model
        _check_input(x, d_model, "x", ndim=3)
        _check_input(memory, d_model, "memory", ndim=3)
        if self.norm_first:
            x = x + self._self_attend(self.norm1(x), self_mask)
            x = x + self._cross_attend(self.norm2(x), memory, memory_mask)
            x = x + self.dropout3(self.ffn(self.norm3(x)))
        else:
            x = self.norm1(x + self._self_attend(x, self_mask))
            x = self.norm2(x + self._cross_attend(x, memory, memory_mask))
            x = self.norm3(x + self.dropout3(self.ffn(x)))
        return x

    @classmethod
    def from_torch(cls, layer: nn.TransformerDecoderLayer) -> DecoderBlock:
        """The same block as ``layer`` (``self_attn``, ``multihead_attn``, FFN, three norms)."""
        if not isinstance(layer, nn.TransformerDecoderLayer):
            raise TypeError(tr(f"expected nn.TransformerDecoderLayer, got {type(layer).__name__}"))
        self_attn = MultiHeadAttention.from_torch(layer.self_attn)
        mine = cls(
            self_attn.d_model, self_attn.num_heads, layer.linear1.out_features, norm_first=layer.norm_first,
            activation=_activation_name(layer.activation), dropout=layer.dropout.p, eps=layer.norm1.eps,
            bias=layer.linear1.bias is not None,
        )
        mine.self_attn = self_attn
        mine.cross_attn = MultiHeadAttention.from_torch(layer.multihead_attn)
        mine.ffn = FeedForward.from_torch(layer.linear1, layer.linear2, mine.ffn.activation)
        mine.ffn.dropout.p = layer.dropout.p
        mine.norm1, mine.norm2, mine.norm3 = (LayerNorm.from_torch(n) for n in (layer.norm1, layer.norm2, layer.norm3))
        return mine.train(layer.training)
