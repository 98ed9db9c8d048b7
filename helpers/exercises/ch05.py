"""Notebook 05: masking."""

import numpy as np
import torch

from helpers.checks import exercise

TOKENS = [[4, 9, 2, 0], [7, 0, 0, 0]]  # the batch of exercise 05.4 (pad id 0)


def _bool_array(answer) -> np.ndarray:
    """The answer as a numpy bool array (lists, numpy or torch; 0/1 accepted)."""
    arr = np.asarray(answer.detach().cpu() if isinstance(answer, torch.Tensor) else answer)
    if arr.dtype != bool:
        if not np.isin(arr, (0, 1)).all():
            raise ValueError("a mask holds only True/False (or 1/0)")
        arr = arr.astype(bool)
    return arr


def _reference_attention(q, k, v, allowed) -> torch.Tensor:
    """softmax(q kᵀ/√d_k) v over the allowed keys (True = may attend); a row with none is 0."""
    scores = (q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5).masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v


def _attention_cases():
    """Inputs the checker chooses: batch axes, n_q ≠ n_k, d_v ≠ d_k, masks with empty rows."""
    g = torch.Generator().manual_seed(5)
    for batch, n_q, n_k, d_k, d_v in (((2,), 4, 4, 3, 5), ((3, 2), 5, 7, 4, 2), ((), 1, 6, 2, 3), ((2,), 6, 3, 8, 8)):
        q = torch.randn(*batch, n_q, d_k, generator=g, dtype=torch.float64)
        k = torch.randn(*batch, n_k, d_k, generator=g, dtype=torch.float64)
        v = torch.randn(*batch, n_k, d_v, generator=g, dtype=torch.float64)
        allowed = torch.rand(*batch, n_q, n_k, generator=g) > 0.45
        allowed[..., 0, :] = False  # the first query row of every matrix sees nothing
        yield q, k, v, allowed


@exercise("05.1", hint="scores = q kᵀ/√d_k; put -inf where the mask is False; softmax over the keys; then turn the NaN of an empty row into 0 before multiplying by v.")
def _attend_with_mask(answer) -> bool | str:
    if not callable(answer):
        return "the answer is the function itself: check(\"05.1\", attend_with_mask)."
    for q, k, v, allowed in _attention_cases():
        got = answer(q.clone(), k.clone(), v.clone(), allowed.clone())
        if isinstance(got, tuple):
            return "return only the output tensor, not a tuple."
        if got is None:
            return "attend_with_mask returns None: finish the function and return the output."
        got = torch.as_tensor(got, dtype=torch.float64)
        want = _reference_attention(q, k, v, allowed)
        if got.shape != want.shape:
            return f"for q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)} your output has shape {tuple(got.shape)}; it should be (..., n_q, d_v)."
        if torch.allclose(got, want, atol=1e-8):
            continue
        empty = ~allowed.any(-1)  # (..., n_q) rows that may see nothing
        if torch.isnan(got[empty]).any():
            return "a query row with no allowed key gives NaN: that row must come out as zeros."
        if torch.isnan(got).any():
            return "your output holds NaN in rows that do see keys: fill blocked scores with -inf only where the mask is False."
        both = ~empty & (~allowed).any(-1)  # rows that see something under the mask and under its inverse
        if torch.allclose(got[both], _reference_attention(q, k, v, ~allowed)[both], atol=1e-8):
            return "True in the mask means *may attend*: you blocked the allowed keys and kept the others."
        if not torch.allclose(got[empty], torch.zeros_like(got[empty])):
            return "a query row with no allowed key must come out as zeros, not as an average of the values."
        unscaled = _reference_attention(q * k.shape[-1] ** 0.5, k, v, allowed)
        if torch.allclose(got, unscaled, atol=1e-8):
            return "close: the scores need dividing by √d_k."
        return False
    return True


def _reference_prefix_lm(prefix_lengths: torch.Tensor, n: int) -> torch.Tensor:
    """(B, 1, n, n): query i may see key j if j <= i, or if both are inside the prefix."""
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    inside = (i < prefix_lengths[:, None, None]) & (j < prefix_lengths[:, None, None])  # (B, n, n)
    return ((j <= i) | inside)[:, None]


@exercise("05.2", hint="start from the causal triangle; then, for each sequence b, open the block of queries and keys both before prefix_lengths[b]; add the head axis.")
def _prefix_lm_mask(answer) -> bool | str:
    if not callable(answer):
        return "the answer is the function itself: check(\"05.2\", prefix_lm_mask)."
    g = torch.Generator().manual_seed(7)
    for B, n in ((3, 6), (1, 1), (4, 9), (2, 5)):
        lengths = torch.randint(0, n + 1, (B,), generator=g)
        lengths[0] = n if B > 1 else lengths[0]  # one sequence that is all prefix
        if B > 2:
            lengths[1] = 0  # and one with no prefix at all (plain causal)
        got = answer(lengths.clone(), n)
        if got is None:
            return "prefix_lm_mask returns None: finish the function and return the mask."
        got = torch.as_tensor(np.asarray(got.detach().cpu() if isinstance(got, torch.Tensor) else got))
        want = _reference_prefix_lm(lengths, n)
        if got.shape == want.shape[:1] + want.shape[2:]:
            return f"your mask for B = {B}, n = {n} has shape {tuple(got.shape)}: add the head axis, (B, 1, n, n), so it broadcasts over heads."
        if got.shape != want.shape:
            return f"for B = {B}, n = {n} your mask has shape {tuple(got.shape)}; it should be (B, 1, n, n)."
        got = got.to(torch.bool)
        if torch.equal(got, want):
            continue
        if torch.equal(got, ~want):
            return "True should mean *may attend*; your mask marks the blocked cells."
        if torch.equal(got, want.transpose(-2, -1)):
            return "that is the transpose: rows are queries, and after the prefix a query may look back (left), not ahead."
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        if torch.equal(got, causal.expand_as(want)) and not torch.equal(want, causal.expand_as(want)):
            return "that is the plain causal mask: inside the prefix every token should also see the later prefix tokens."
        leak = got & ~want
        if leak.any():
            return "some query sees a key that comes after the prefix and after itself: a prefix token may look ahead only inside the prefix."
        return "some allowed pairs are blocked: compare a sequence with prefix length 0 (plain causal) and one that is all prefix."
    return True


@exercise("05.3", hint="compute leaks(masks[letter]) for each letter; a mask leaks if it allows a key to the right of the diagonal.")
def _which_leak(answer) -> bool | str:
    if isinstance(answer, str):
        answer = {answer}
    given = {str(a).strip().upper() for a in answer}
    if not given <= set("ABCDE"):
        return "use the letters A to E."
    if "B" in given:
        return "B sees strictly the past: missing the present is not a leak from the future."
    if "E" in given:
        return "E adds a padding mask to the causal one: can blocking more keys open the future?"
    return given == {"C", "D"}


@exercise("05.4", hint="nn.MultiheadAttention's key_padding_mask is (B, L), and True there means: ignore this key.")
def _key_padding_mask(answer) -> bool | str:
    got = _bool_array(answer)
    pads = np.asarray(TOKENS) == 0
    if got.shape == (2, 1, 1, 4):
        return "nn.MultiheadAttention wants key_padding_mask as (B, L), without the size-1 dimensions."
    if got.shape != pads.shape:
        return f"your mask has shape {got.shape}; key_padding_mask is (B, L) = (2, 4)."
    if np.array_equal(got, ~pads):
        return "that is the helpers / F.scaled_dot_product_attention convention; nn.MultiheadAttention's is the opposite."
    return bool(np.array_equal(got, pads))


@exercise("05.5", hint="a row is fully masked when none of the keys up to its own position is a real token.")
def _empty_rows(answer) -> bool | str:
    rows = sorted(int(r) for r in np.asarray(answer).reshape(-1))
    if rows == [5, 6, 7]:
        return "those are where right padding would put the pads; these pads are on the left."
    return rows == [0, 1, 2]
