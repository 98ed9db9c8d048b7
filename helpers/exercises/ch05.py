"""Notebook 05: masking."""

import numpy as np
import torch

from helpers.checks import exercise

TOKENS = [[4, 9, 2, 0], [7, 0, 0, 0]]  # the batch of exercises 05.2 and 05.4 (pad id 0)


def _bool_array(answer) -> np.ndarray:
    """The answer as a numpy bool array (lists, numpy or torch; 0/1 accepted)."""
    arr = np.asarray(answer.detach().cpu() if isinstance(answer, torch.Tensor) else answer)
    if arr.dtype != bool:
        if not np.isin(arr, (0, 1)).all():
            raise ValueError("a mask holds only True/False (or 1/0)")
        arr = arr.astype(bool)
    return arr


@exercise("05.1", hint="row i is query i; it may attend to keys 0..i, so True on and below the diagonal.")
def _causal_5(answer) -> bool | str:
    got = _bool_array(answer)
    want = np.tril(np.ones((5, 5), bool))
    if got.shape != want.shape:
        return f"your mask has shape {got.shape}; 5 tokens need a 5 × 5 mask."
    if np.array_equal(got, want.T):
        return "that is the transpose: rows are queries, and a query may look back (left), not ahead."
    if np.array_equal(got, ~want):
        return "that marks the blocked cells; here True means *may attend*."
    if np.array_equal(got, np.tril(np.ones((5, 5), bool), -1)):
        return "may a token attend to itself?"
    return bool(np.array_equal(got, want))


@exercise("05.2", hint="compare the ids with the pad id, then add two size-1 dimensions for heads and queries.")
def _padding_mask(answer) -> bool | str:
    got = _bool_array(answer)
    real = np.asarray(TOKENS) != 0
    if got.shape == real.shape:
        if np.array_equal(got, real):
            return "right values; now give it the shape (B, 1, 1, L) so it broadcasts over heads and queries."
        return "the question asks for the shape (B, 1, 1, L), with True where a query may attend (a real token)."
    if got.shape == (2, 1, 4, 1):
        return "that shape puts the pads on the query axis; they belong on the key axis (the last one)."
    if got.shape != (2, 1, 1, 4):
        return f"your mask has shape {got.shape}; the question asks for (B, 1, 1, L) = (2, 1, 1, 4)."
    if np.array_equal(got[:, 0, 0], ~real):
        return "True should mean *may attend*: a real token, not a pad."
    return bool(np.array_equal(got[:, 0, 0], real))


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
