"""Llama's decoder block at any size (notebook 11 builds it): SwiGLU, grouped-query attention, RoPE.

    SwiGLU                  W_2 (SiLU(W_1 x) ⊙ W_3 x), three matrices, no biases
    repeat_kv               (B, h_kv, n, d_k) -> (B, h_kv · n_rep, n, d_k): each K/V head serves n_rep query heads
    GroupedQueryAttention   h query heads share h_kv key/value heads; RoPE on queries and keys
    LlamaBlock              x + attn(RMSNorm(x)), then x + SwiGLU(RMSNorm(x)): pre-norm, no biases

Conventions as :mod:`helpers.layers`: batch first, x is (B, n, d_model), masks are boolean
with True = may attend, broadcastable to (B, h, n_q, n_k). The norm is
:class:`helpers.RMSNorm`, the rotation :func:`helpers.position.rope`, the cache
:class:`helpers.scale.KVCache`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .attention import scaled_dot_product_attention
from .i18n import translate as tr
from .layers import RMSNorm, _check_dims, _check_input, merge_heads, split_heads
from .position import rope
from .scale import KVCache


class SwiGLU(nn.Module):
    """Llama's feed-forward: down(SiLU(gate(x)) ⊙ up(x)), d_model -> d_ff -> d_model, no biases.

    Parameters: 3 · d_model · d_ff (Llama 2-7B: d_ff = 11008 ≈ 8/3 · 4096, rounded up to a
    multiple of 256, so that three matrices cost about what two of 4 · d_model would).
    """

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        _check_dims(d_model=d_model, d_ff=d_ff)
        self.d_model = d_model
        self.gate = nn.Linear(d_model, d_ff, bias=False)  # W_1 in Meta's code
        self.up = nn.Linear(d_model, d_ff, bias=False)  # W_3
        self.down = nn.Linear(d_ff, d_model, bias=False)  # W_2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., d_model) -> (..., d_model)."""
        _check_input(x, self.d_model, "x")
        return self.down(F.silu(self.gate(x)) * self.up(x))  # the gate decides, feature by feature


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """(B, h_kv, n, d_k) -> (B, h_kv · n_rep, n, d_k): key/value head g serves query heads g·n_rep .. g·n_rep + n_rep - 1.

    The same order as ``repeat_interleave`` along the heads (and as PyTorch's
    ``F.scaled_dot_product_attention(..., enable_gqa=True)``).
    """
    if not isinstance(x, torch.Tensor) or x.ndim != 4:
        raise ValueError(tr(f"x must be a (B, h_kv, n, d_k) tensor, got {getattr(x, 'shape', type(x).__name__)}"))
    _check_dims(n_rep=n_rep)
    B, h_kv, n, d_k = x.shape
    return x[:, :, None].expand(B, h_kv, n_rep, n, d_k).reshape(B, h_kv * n_rep, n, d_k)


class GroupedQueryAttention(nn.Module):
    """h query heads, h_kv key/value heads (h_kv divides h), RoPE, no biases.

    h_kv = h is ordinary multi-head attention (Llama 2-7B), h_kv = 1 multi-query attention;
    in between, each key/value head is shared by h / h_kv query heads, which shrinks W_K, W_V
    and the KV cache by that factor.

    After a forward pass, ``attn_weights`` holds the weights (B, h, n_q, n_k), detached.
    """

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int, rope_base: float = 10000.0) -> None:
        super().__init__()
        _check_dims(d_model=d_model, num_heads=num_heads, num_kv_heads=num_kv_heads)
        if d_model % num_heads or num_heads % num_kv_heads or (d_model // num_heads) % 2:
            raise ValueError(
                tr(f"need num_heads={num_heads} to divide d_model={d_model} into an even d_k (RoPE rotates pairs), "
                f"and num_kv_heads={num_kv_heads} to divide num_heads")
            )
        self.d_model, self.num_heads, self.num_kv_heads = d_model, num_heads, num_kv_heads
        self.d_k, self.rope_base = d_model // num_heads, rope_base
        self.w_q = nn.Linear(d_model, num_heads * self.d_k, bias=False)
        self.w_k = nn.Linear(d_model, num_kv_heads * self.d_k, bias=False)  # h_kv heads only
        self.w_v = nn.Linear(d_model, num_kv_heads * self.d_k, bias=False)
        self.w_o = nn.Linear(num_heads * self.d_k, d_model, bias=False)
        self.attn_weights: torch.Tensor | None = None

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        positions: torch.Tensor | None = None,
        cache: KVCache | None = None,
        zero_heads: Sequence[int] = (),
    ) -> torch.Tensor:
        """Self-attention of x's tokens (to the cached ones too, if a cache is given).

        Args:
            x: (B, n_q, d_model), the new tokens.
            mask: bool, True = may attend, broadcastable to (B, h, n_q, n_k) where n_k counts
                the cached tokens plus the new ones; None = every key.
            positions: (n_q,) RoPE positions of the new tokens; default: they follow the
                cached ones (len(cache) .. len(cache) + n_q - 1).
            cache: a :class:`helpers.scale.KVCache` that receives the new keys (rotated) and
                values, h_kv heads, before they are shared out.
            zero_heads: query heads whose output is set to zero before W_O (an ablation).

        Returns:
            (B, n_q, d_model).
        """
        _check_input(x, self.d_model, "x", ndim=3)
        start = len(cache) if cache is not None else 0
        if positions is None:
            positions = torch.arange(start, start + x.shape[1])
        q = rope(split_heads(self.w_q(x), self.num_heads), positions, self.rope_base)  # (B, h, n_q, d_k)
        k = rope(split_heads(self.w_k(x), self.num_kv_heads), positions, self.rope_base)  # (B, h_kv, n_q, d_k)
        v = split_heads(self.w_v(x), self.num_kv_heads)  # (B, h_kv, n_q, d_k)
        if cache is not None:
            k, v = cache.append(k, v)  # (B, h_kv, n_k, d_k)
        n_rep = self.num_heads // self.num_kv_heads
        out, weights = scaled_dot_product_attention(q, repeat_kv(k, n_rep), repeat_kv(v, n_rep), mask=mask)
        self.attn_weights = weights.detach()  # (B, h, n_q, n_k)
        if zero_heads:
            keep = torch.ones(self.num_heads, 1, 1, dtype=out.dtype)
            keep[list(zero_heads)] = 0
            out = out * keep
        return self.w_o(merge_heads(out))  # (B, n_q, d_model)


class LlamaBlock(nn.Module):
    """x = x + attn(RMSNorm(x));  x = x + SwiGLU(RMSNorm(x)). Pre-norm, RoPE, GQA, no biases.

    Parameters: 2 · d_model² + 2 · d_model · h_kv · d_k (attention) + 3 · d_model · d_ff
    (SwiGLU) + 2 · d_model (the norms' gains).
    """

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int, d_ff: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps=eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads)
        self.ffn_norm = RMSNorm(d_model, eps=eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        positions: torch.Tensor | None = None,
        cache: KVCache | None = None,
        zero_heads: Sequence[int] = (),
    ) -> torch.Tensor:
        """x (B, n_q, d_model) -> (B, n_q, d_model); the other arguments as :class:`GroupedQueryAttention`."""
        x = x + self.attn(self.attn_norm(x), mask, positions, cache, zero_heads)
        return x + self.ffn(self.ffn_norm(x))
