"""Notebook 05: masking."""

import numpy as np
import torch

from helpers.checks import exercise


def _reference_attention(q, k, v, allowed) -> torch.Tensor:
    """softmax(q kᵀ/√d_k) v over the allowed keys (True = may attend); a row with none is 0."""
    scores = (q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5).masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v


def _attention_cases():
    """Inputs the checker chooses: batch axes, n_q ≠ n_k, d_v ≠ d_k, masks with empty rows, and
    masks that broadcast: a (B, 1, n_k) padding mask and an (n_q, n_k) causal mask shared by the batch."""
    g = torch.Generator().manual_seed(5)
    for batch, n_q, n_k, d_k, d_v in (((2,), 4, 4, 3, 5), ((3, 2), 5, 7, 4, 2), ((), 1, 6, 2, 3), ((2,), 6, 3, 8, 8)):
        q = torch.randn(*batch, n_q, d_k, generator=g, dtype=torch.float64)
        k = torch.randn(*batch, n_k, d_k, generator=g, dtype=torch.float64)
        v = torch.randn(*batch, n_k, d_v, generator=g, dtype=torch.float64)
        allowed = torch.rand(*batch, n_q, n_k, generator=g) > 0.45
        allowed[..., 0, :] = False  # the first query row of every matrix sees nothing
        yield q, k, v, allowed
    q, k, v = (torch.randn(3, 5, d, generator=g, dtype=torch.float64) for d in (4, 4, 6))
    real = torch.tensor([5, 3, 0])  # real tokens per sequence; the last sequence is all pads
    yield q, k, v, (torch.arange(5) < real[:, None])[:, None, :]  # (B, 1, n_k): a padding mask
    q, k, v = (torch.randn(2, 4, d, generator=g, dtype=torch.float64) for d in (3, 3, 2))
    yield q, k, v, torch.ones(4, 4, dtype=torch.bool).tril()  # (n_q, n_k): one causal mask for the batch


def _uses_fused_attention(answer, q, k, v, allowed) -> bool:
    """True if the answer calls F.scaled_dot_product_attention or helpers' version (05.1 forbids both)."""
    import torch.nn.functional as F

    import helpers
    import helpers.attention

    called = []
    saved = F.scaled_dot_product_attention, helpers.scaled_dot_product_attention, helpers.attention.scaled_dot_product_attention

    def spy(original):
        def wrapped(*args, **kwargs):
            called.append(True)
            return original(*args, **kwargs)
        return wrapped

    try:
        F.scaled_dot_product_attention = spy(saved[0])
        helpers.scaled_dot_product_attention = helpers.attention.scaled_dot_product_attention = spy(saved[1])
        answer(q.clone(), k.clone(), v.clone(), allowed.clone())
    finally:
        F.scaled_dot_product_attention, helpers.scaled_dot_product_attention, helpers.attention.scaled_dot_product_attention = saved
    return bool(called)


@exercise("05.1", hint="block the scores of the keys a query may not see the way this notebook does, and decide what a row with nothing to see must give: zeros, not NaN.",
          code_hint="scores.masked_fill(~allowed, float('-inf')), torch.softmax(..., dim=-1), then .nan_to_num(0.0) before @ v.")
def _attend_with_mask(answer) -> bool | str:
    if not callable(answer):
        return "the answer is the function itself: answer = attend_with_mask (no brackets)."
    for q, k, v, allowed in _attention_cases():
        try:
            got = answer(q.clone(), k.clone(), v.clone(), allowed.clone())
        except Exception:
            if allowed.shape != (*q.shape[:-1], k.shape[-2]):  # a mask that only broadcasts
                return (f"your function fails on a mask of shape {tuple(allowed.shape)} with q {tuple(q.shape)}: the mask only "
                        "broadcasts to (..., n_q, n_k), as a padding mask or a causal mask shared by the batch does. "
                        "Use operations that broadcast, not indexing with a mask of another shape.")
            raise
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
        allowed = allowed.expand(*want.shape[:-1], k.shape[-2])  # (..., n_q, n_k), for the diagnosis
        empty = ~allowed.any(-1)  # (..., n_q) rows that may see nothing
        if torch.isnan(got[empty]).any():
            return "a query row with no allowed key gives NaN: that row must come out as zeros."
        if torch.isnan(got).any():
            return "your output holds NaN in rows that do see keys: fill blocked scores with -inf only where the mask is False."
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        added = torch.softmax(scores + allowed.double(), dim=-1) @ v  # the mask used as a 0/1 float and added
        if torch.allclose(got[~empty], added[~empty], atol=1e-8):
            return ("your function adds the mask to the scores as 0/1 numbers, so a blocked key keeps much of its weight "
                    "(the 0/1 float trap of this notebook): set the blocked scores to -inf instead.")
        zeroed_after = (torch.softmax(scores, dim=-1) * allowed) @ v  # blocked after the softmax: rows no longer sum to 1
        if torch.allclose(got[~empty], zeroed_after[~empty], atol=1e-8):
            return "blocking after the softmax leaves rows that no longer sum to 1: block the scores before it."
        both = ~empty & (~allowed).any(-1)  # rows that see something under the mask and under its inverse
        if torch.allclose(got[both], _reference_attention(q, k, v, ~allowed)[both], atol=1e-8):
            return "True in the mask means *may attend*: you blocked the allowed keys and kept the others."
        if not torch.allclose(got[empty], torch.zeros_like(got[empty])):
            return "a query row with no allowed key must come out as zeros, not as an average of the values."
        unscaled = _reference_attention(q * k.shape[-1] ** 0.5, k, v, allowed)
        if torch.allclose(got, unscaled, atol=1e-8):
            return "close: the scores need dividing by √d_k."
        return False
    if _uses_fused_attention(answer, *next(_attention_cases())):
        return ("right numbers, but the exercise asks you to write the attention yourself, without helpers or "
                "F.scaled_dot_product_attention: scores, the mask, softmax, the weighted sum.")
    return True


def _not_bool(mask: torch.Tensor, convention: str) -> str:
    """The hint for a mask that is not bool (05.2 and 05.4); ``convention`` says what True means there."""
    if mask.is_floating_point() and bool(((mask == 0) | (mask == float("-inf"))).all()):
        return (f"the exercise asks for a bool mask ({convention}); yours is an additive float mask "
                "(0 or -inf, added to the scores). Return the bool mask itself.")
    return ("return a bool tensor: PyTorch adds a float mask to the scores instead of blocking with it "
            "(a 0/1 float mask blocks nothing: this notebook's trap), and an integer mask is an error.")


def _reference_prefix_lm(prefix_lengths: torch.Tensor, n: int) -> torch.Tensor:
    """(B, 1, n, n): query i may see key j if j <= i, or if both are inside the prefix."""
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    inside = (i < prefix_lengths[:, None, None]) & (j < prefix_lengths[:, None, None])  # (B, n, n)
    return ((j <= i) | inside)[:, None]


@exercise("05.2", hint="start from the causal triangle; then, for each sequence b, open the block of queries and keys both before prefix_lengths[b]; add the head axis.")
def _prefix_lm_mask(answer) -> bool | str:
    if not callable(answer):
        return "the answer is the function itself: answer = prefix_lm_mask (no brackets)."
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
        if got.dtype != torch.bool:
            return _not_bool(got, "True = may attend")
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


def leak_candidates() -> dict[str, torch.Tensor]:
    """Exercise 05.3's five 6 × 6 masks (True = may attend), exactly as the notebook builds them."""
    n6 = torch.ones(6, 6, dtype=torch.bool)
    pos = torch.arange(6)
    return {
        "A": n6.tril(),
        "B": n6.tril() | ((pos[:, None] < 3) & (pos[None, :] < 3)),
        "C": n6.tril(diagonal=-1),
        "D": n6.tril() & (torch.tensor([3, 3, 3, 3, 0, 0]) != 0),
        "E": n6.tril(diagonal=1) & n6.triu(diagonal=-1),
    }


def _leaking_rows() -> dict[str, list[int]]:
    """Letter -> the output rows that may read a later input (an allowed key right of the diagonal)."""
    rows = {letter: mask.triu(diagonal=1).any(-1).nonzero()[:, 0].tolist() for letter, mask in leak_candidates().items()}
    return {letter: found for letter, found in rows.items() if found}


@exercise("05.3", hint="a row leaks when it allows a key to the right of the diagonal: read each mask row by row, then confirm with dependence(mask).")
def _which_leak(answer) -> bool | str:
    if not isinstance(answer, dict):
        return 'give a dict from each leaking mask\'s letter to the list of its leaking rows, such as {"A": [2, 3]}.'
    try:
        given = {str(k).strip().upper(): sorted(int(r) for r in np.asarray(v).reshape(-1)) for k, v in answer.items()}
    except (TypeError, ValueError):
        return "each value should be a list of row numbers, such as [2, 3]."
    if not set(given) <= set("ABCDE"):
        return "use the letters A to E."
    given = {letter: rows for letter, rows in given.items() if rows}  # an empty list says "no leak", as leaving it out does
    right = _leaking_rows()
    if set(given) - set(right):
        return "one of your letters does not leak: check each of its rows for an allowed key to the right of the diagonal."
    if set(given) != set(right):
        return "some mask that leaks is missing: read every row of every mask, not only the masks that look causal."
    for letter in sorted(right):
        if given[letter] != right[letter]:
            return f"the masks are right; for {letter}, look again at which rows allow a key to the right of the diagonal (the last row has no later key)."
    return True


def _reference_mha_mask(tokens: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B·h, n, n) bool, nn.MultiheadAttention's convention (True = blocked): pad keys or later keys."""
    n = tokens.shape[-1]
    future = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)  # (n, n)
    blocked = (tokens == 0)[:, None, :] | future  # (B, n, n)
    return blocked.repeat_interleave(num_heads, dim=0)  # all heads of sequence 0, then of sequence 1, ...


def _mha_cases():
    """Right-padded batches the checker chooses: every sequence has its own length, and h > 1."""
    g = torch.Generator().manual_seed(4)
    for B, n, heads in ((2, 5, 2), (3, 6, 4), (4, 7, 3), (1, 4, 1)):
        lengths = torch.randperm(n, generator=g)[:B] + 1  # distinct lengths 1..n
        tokens = torch.randint(1, 50, (B, n), generator=g)
        tokens[torch.arange(n)[None, :] >= lengths[:, None]] = 0  # pads on the right
        yield tokens, heads


@exercise("05.4", hint="build the blocked cells of one sequence, (n, n): a pad key, or a key after the query; then give every head of that sequence its own copy, sequence by sequence.")
def _mha_attn_mask(answer) -> bool | str:
    if not callable(answer):
        return "the answer is the function itself: answer = mha_attn_mask (no brackets)."
    for tokens, heads in _mha_cases():
        got = answer(tokens.clone(), heads)
        if got is None:
            return "mha_attn_mask returns None: finish the function and return the mask."
        got = torch.as_tensor(np.asarray(got.detach().cpu() if isinstance(got, torch.Tensor) else got))
        want = _reference_mha_mask(tokens, heads)
        B, n = tokens.shape
        if got.shape == (B, heads, n, n):
            return "nn.MultiheadAttention takes a 3-D attn_mask: merge the batch and head axes into one, (B·h, n, n)."
        if got.shape == (B, n, n) and heads > 1:
            return f"for B = {B} and h = {heads} your mask has shape {tuple(got.shape)}: attn_mask needs one (n, n) matrix per sequence *and* head, (B·h, n, n)."
        if got.shape != want.shape:
            return f"for B = {B}, h = {heads}, n = {n} your mask has shape {tuple(got.shape)}; it should be (B·h, n, n)."
        if got.dtype != torch.bool:
            return _not_bool(got, "True = blocked")
        if torch.equal(got, want):
            continue
        if torch.equal(got, ~want):
            return "that is the helpers / F.scaled_dot_product_attention convention (True = may attend); nn.MultiheadAttention's bool masks mean the opposite."
        per_sequence = want.view(B, heads, n, n)[:, 0]  # (B, n, n)
        if torch.equal(got, per_sequence.repeat(heads, 1, 1)):
            return "the right matrices in the wrong order: the B·h axis holds all heads of sequence 0 first, then all heads of sequence 1, and so on."
        future = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
        if torch.equal(got, ((tokens == 0)[:, None, :] | future.T).repeat_interleave(heads, dim=0)):
            return "that blocks the past and keeps the future: a query may see the keys before it, not after it."
        if torch.equal(got, ((tokens == 0)[:, None, :]).expand(B, n, n).repeat_interleave(heads, dim=0)):
            return "your mask blocks the pad keys but not the future: add the causal part."
        if torch.equal(got, future.expand(B * heads, n, n)):
            return "your mask blocks the future but not the pad keys: add the padding part."
        if torch.equal(got, ((tokens == 0)[:, :, None] | future).repeat_interleave(heads, dim=0)):
            return "you blocked the pad *queries* (rows); padding must block the pad *keys* (columns)."
        return False
    return True


@exercise("05.5", hint="write out the allowed keys of each query: inside its window (itself and the w − 1 before it) and a real token. A row is fully masked when that set is empty.")
def _empty_rows(answer) -> bool | str:
    if isinstance(answer, set | frozenset | range):
        answer = sorted(answer)
    if isinstance(answer, str) or not isinstance(answer, list | tuple | torch.Tensor | np.ndarray):
        return "give the row indices as whole numbers, in a set, list, tuple or tensor."
    flat = np.asarray(answer).reshape(-1)
    if flat.dtype == bool:
        return "give the indices of the fully masked rows, not one True/False per row: .nonzero() turns flags into indices."
    if not all(isinstance(r, int | np.integer) and not isinstance(r, bool | np.bool_) for r in flat.tolist()):
        return "give the row indices as whole numbers, in a set, list, tuple or tensor."
    rows = sorted(int(r) for r in flat)
    if rows == []:
        return "a right pad sees the real words before it only while they are inside its window: look at the last rows."
    if rows == [0, 1, 2, 3, 4, 5]:
        return "these pads are on the right: the real tokens come first."
    if rows == list(range(4, 10)):
        return "the first pads still have a real token inside their window: count w = 3 keys back from each."
    if rows in (list(range(5, 10)), list(range(7, 10))):
        return "off by one: the window of query i holds w = 3 keys, i − 2, i − 1 and i itself."
    return rows == list(range(6, 10))
