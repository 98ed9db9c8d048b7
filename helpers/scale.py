"""Attention at scale (notebook 09): cost accounting, a KV cache, and blockwise attention.

- :data:`LLAMA2_7B` and :func:`flops_per_token`: where a decoder's FLOPs go for one token;
  :func:`attention_share` (the n × n part only) and :func:`attention_sublayer_share`
  (the whole attention sublayer: Q, K, V, O projections plus the n × n part).
- :func:`score_matrix_bytes`, :func:`kv_cache_bytes`: memory of the n × n scores and of
  the cached keys and values.
- :class:`KVCache`: keys and values of the tokens decoded so far, grown one step at a time.
- :func:`blockwise_attention`: softmax(Q Kᵀ/√d_k) V one block of keys at a time with an
  online softmax (the idea behind FlashAttention); never holds more than a block of scores.
- :func:`peak_memory`: measure the bytes of tensors a call has alive at once (plumbing).

Conventions: a FLOP is one multiply or one add, so a multiply-add counts 2.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

from .i18n import translate as tr


@dataclass(frozen=True)
class DecoderShape:
    """The sizes that decide a decoder-only Transformer's cost."""

    name: str
    d_model: int
    n_layers: int
    n_heads: int
    d_ff: int
    vocab: int
    n_kv_heads: int | None = None  # None = as many as n_heads (no grouped-query attention)
    gated_mlp: bool = True  # SwiGLU: three d_model × d_ff matrices instead of two

    @property
    def d_k(self) -> int:
        """Width of one head (d_k = d_v)."""
        return self.d_model // self.n_heads

    @property
    def kv_heads(self) -> int:
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads

    def parameters(self) -> int:
        """Weights: token embeddings, per layer attention + MLP + 2 RMSNorms, final norm, LM head."""
        kv_width = self.kv_heads * self.d_k
        attention = 2 * self.d_model * self.d_model + 2 * self.d_model * kv_width  # W_Q, W_O, W_K, W_V
        mlp = (3 if self.gated_mlp else 2) * self.d_model * self.d_ff
        per_layer = attention + mlp + 2 * self.d_model
        return self.vocab * self.d_model + self.n_layers * per_layer + self.d_model + self.d_model * self.vocab


LLAMA2_7B = DecoderShape("Llama 2-7B", d_model=4096, n_layers=32, n_heads=32, d_ff=11008, vocab=32000)


def flops_per_token(context: int, shape: DecoderShape = LLAMA2_7B) -> dict[str, int]:
    """FLOPs to process one token that attends to ``context`` keys (itself included).

    Returns:
        {"Q, K, V, O projections", "MLP", "attention scores q·k", "attention weights × V",
        "LM head"}, each summed over all layers. Softmax, norms and the residual adds are
        left out (a few FLOPs per score or feature: under 1% here).
    """
    if not isinstance(context, int) or isinstance(context, bool) or context < 1:
        raise ValueError(tr(f"context must be a positive integer number of keys, got {context!r}"))
    d, L = shape.d_model, shape.n_layers
    kv_width = shape.kv_heads * shape.d_k
    return {
        "Q, K, V, O projections": L * 2 * (2 * d * d + 2 * d * kv_width),
        "MLP": L * 2 * (3 if shape.gated_mlp else 2) * d * shape.d_ff,
        "attention scores q·k": L * 2 * context * d,  # every head: n keys × d_k, h heads
        "attention weights × V": L * 2 * context * d,
        "LM head": 2 * d * shape.vocab,
    }


def attention_share(context: int, shape: DecoderShape = LLAMA2_7B) -> float:
    """Fraction of :func:`flops_per_token` spent in the n × n part (scores and weights × V)."""
    parts = flops_per_token(context, shape)
    return (parts["attention scores q·k"] + parts["attention weights × V"]) / sum(parts.values())


def attention_sublayer_share(context: int, shape: DecoderShape = LLAMA2_7B) -> float:
    """Fraction of :func:`flops_per_token` spent in the whole attention sublayer.

    That is the Q, K, V, O projections plus the n × n part: what a profiler that groups
    the work by module reports as "attention".
    """
    parts = flops_per_token(context, shape)
    sublayer = parts["Q, K, V, O projections"] + parts["attention scores q·k"] + parts["attention weights × V"]
    return sublayer / sum(parts.values())


def score_matrix_bytes(n: int, n_heads: int = 1, bytes_per_value: int = 4, batch: int = 1) -> int:
    """Bytes of one layer's n × n attention scores for every head (what FlashAttention never stores)."""
    return batch * n_heads * n * n * bytes_per_value


def kv_cache_bytes(n_tokens: int, shape: DecoderShape = LLAMA2_7B, bytes_per_value: int = 2, batch: int = 1) -> int:
    """Bytes of cached keys and values: 2 (K and V) × layers × KV heads × d_k per token."""
    return 2 * shape.n_layers * shape.kv_heads * shape.d_k * bytes_per_value * n_tokens * batch


class KVCache:
    """The keys and values of every token decoded so far, for one attention layer.

    Shapes are (B, h, n, d_k); each :meth:`append` adds the new tokens' keys and values
    along n and returns everything cached so far, ready for the new queries to attend to.
    """

    def __init__(self) -> None:
        self.keys: torch.Tensor | None = None
        self.values: torch.Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.keys is None else self.keys.shape[-2]

    def append(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Add k, v of shape (B, h, n_new, d_k); return all keys and values (B, h, n, d_k)."""
        if k.ndim != 4 or k.shape != v.shape:
            raise ValueError(tr(f"k and v must both have shape (B, h, n_new, d_k); got {tuple(k.shape)} and {tuple(v.shape)}"))
        if self.keys is None:
            self.keys, self.values = k, v
        else:
            if k.shape[:2] != self.keys.shape[:2] or k.shape[-1] != self.keys.shape[-1]:
                raise ValueError(tr(f"new keys {tuple(k.shape)} do not match the cache's (B, h, n, d_k) = {tuple(self.keys.shape)}"))
            self.keys = torch.cat([self.keys, k], dim=-2)
            self.values = torch.cat([self.values, v], dim=-2)
        return self.keys, self.values

    @property
    def nbytes(self) -> int:
        """Bytes held by the cached keys and values."""
        if self.keys is None:
            return 0
        return self.keys.numel() * self.keys.element_size() + self.values.numel() * self.values.element_size()


def blockwise_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_size: int = 128, causal: bool = False
) -> torch.Tensor:
    """softmax(Q Kᵀ/√d_k) V computed one (query block, key block) tile at a time.

    For each block of queries it keeps, per query, the running maximum row_max of the
    scores seen so far, the running sum denom of exp(score - row_max), and the running
    weighted sum acc of the values. A new key block with a larger maximum rescales denom
    and acc by exp(row_max - new_max), because
    Σ exp(s - new_max) = exp(row_max - new_max) · Σ exp(s - row_max). At the end, output = acc / denom. Memory beyond q, k, v and the output
    is O(block_size²) per (batch, head), never O(n²).

    Args:
        q: (..., n_q, d_k); k: (..., n_k, d_k); v: (..., n_k, d_v).
        block_size: rows and columns of one tile of scores.
        causal: query i sees keys 0..i only (n_q must equal n_k); key blocks entirely in the
            future are skipped, which halves the work.

    Returns:
        (..., n_q, d_v), equal to the plain computation up to float rounding.
    """
    if not all(isinstance(t, torch.Tensor) for t in (q, k, v)):
        raise TypeError(tr("q, k and v must be torch tensors"))
    if q.ndim < 2 or q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(tr(f"need q (..., n_q, d_k), k (..., n_k, d_k), v (..., n_k, d_v); got q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"))
    if not isinstance(block_size, int) or block_size < 1:
        raise ValueError(tr(f"block_size must be a positive integer, got {block_size!r}"))
    n_q, n_k = q.shape[-2], k.shape[-2]
    if causal and n_q != n_k:
        raise ValueError(tr(f"causal blockwise attention needs n_q == n_k, got {n_q} and {n_k}"))
    scale = 1.0 / math.sqrt(q.shape[-1])
    out = q.new_empty((*q.shape[:-1], v.shape[-1]))
    for i in range(0, n_q, block_size):
        q_blk = q[..., i : i + block_size, :] * scale
        rows = q_blk.shape[-2]
        row_max = q.new_full((*q_blk.shape[:-1], 1), -math.inf)  # running max per query
        denom = q.new_zeros((*q_blk.shape[:-1], 1))  # running sum of exp(score - row_max)
        acc = q.new_zeros((*q_blk.shape[:-1], v.shape[-1]))  # running sum of exp(score - row_max) · v
        last_key = min(n_k, i + rows) if causal else n_k
        for j in range(0, last_key, block_size):
            s = q_blk @ k[..., j : j + block_size, :].transpose(-2, -1)  # (..., rows, cols): one tile
            if causal and j + s.shape[-1] > i:  # the tile crosses the diagonal
                qi = torch.arange(i, i + rows)[:, None]
                kj = torch.arange(j, j + s.shape[-1])[None, :]
                s = s.masked_fill(kj > qi, -math.inf)
            new_max = torch.maximum(row_max, s.amax(dim=-1, keepdim=True))
            p = torch.exp(s - new_max)  # this tile's unnormalised weights
            rescale = torch.exp(row_max - new_max)  # shrink what was summed under the old maximum
            denom = denom * rescale + p.sum(dim=-1, keepdim=True)
            acc = acc * rescale + p @ v[..., j : j + block_size, :]
            row_max = new_max
        out[..., i : i + block_size, :] = acc / denom
    return out


class _PeakMemory(TorchFunctionMode):
    """Count the storage bytes of tensors created inside the mode, alive at the same time."""

    def __init__(self) -> None:
        super().__init__()
        self._refs: dict[int, int] = {}
        self._sizes: dict[int, int] = {}
        self.current = 0
        self.peak = 0

    def _release(self, key: int) -> None:
        self._refs[key] -= 1
        if self._refs[key] == 0:
            self.current -= self._sizes.pop(key)
            del self._refs[key]

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {a.untyped_storage().data_ptr() for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)}
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                storage = t.untyped_storage()
                key = storage.data_ptr()
                if key not in self._refs and key in inputs:
                    continue  # a view of memory allocated before the call (e.g. a slice of an input)
                if key not in self._refs:  # a new allocation (views share their base's storage)
                    self._refs[key], self._sizes[key] = 0, storage.nbytes()
                    self.current += storage.nbytes()
                    self.peak = max(self.peak, self.current)
                self._refs[key] += 1
                weakref.finalize(t, self._release, key)
        return out


def peak_memory(fn, *args, **kwargs) -> tuple[object, int]:
    """Run ``fn(*args, **kwargs)``; return its result and the peak bytes of tensors it had alive.

    Counts every tensor PyTorch allocates during the call (intermediates included, inputs
    excluded), freed when the last tensor using its memory is garbage. Deterministic, and
    the same on any machine: it counts allocations, not what the operating system reports.
    A fused C++ kernel is one operation to it, so its internal buffers are not seen.
    """
    with _PeakMemory() as meter:
        result = fn(*args, **kwargs)
    return result, meter.peak
