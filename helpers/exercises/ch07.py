"""Notebook 07 (the Transformer block): checkers. None of them prints the expected answer."""

import math

import torch
import torch.nn.functional as F

from helpers.checks import exercise, number, whole_number

SWIGLU_SHAPES = [  # (batch dims, d_model, d_ff): the checker's choice, d_ff never equal to d_model
    ((3,), 4, 12),
    ((2, 5), 8, 20),
    ((1, 3, 2), 6, 16),
    ((7,), 16, 44),
]
PRE_POST_SETTING = {"depth": 20, "gain": 3.0}  # 07.4: a stack the notebook never ran


@exercise("07.1", hint="a path is a choice of which layers it goes through; count the ways to choose 2 of 6.")
def _paths_through_two(answer):
    value = whole_number(answer)
    if value == 2**6:
        return "that is every path; only those through exactly 2 layers count."
    if value == 6 * 5:
        return "that counts ordered pairs; a path through layers 2 and 5 is the same path as through 5 and 2."
    return value == math.comb(6, 2)


def _swiglu_reference(x, w1, w2, w3):
    """W₂(SiLU(W₁x) ⊙ W₃x) with nn.Linear's weight layout: (..., d_model) -> (..., d_model)."""
    return (F.silu(x @ w1.T) * (x @ w3.T)) @ w2.T


def _swiglu_mistake(x, w1, w2, w3, got):
    """A specific hint if ``got`` is a common wrong SwiGLU, else None."""
    gate, value = x @ w1.T, x @ w3.T
    mistakes = {
        "the SiLU belongs on the w1 branch (the gate); the w3 branch enters without an activation.":
            (value * torch.sigmoid(value) * gate) @ w2.T,
        "SiLU(z) is z · sigmoid(z), not sigmoid(z) alone.": (torch.sigmoid(gate) * value) @ w2.T,
        "the activation is SiLU (z · sigmoid(z)), not ReLU.": (F.relu(gate) * value) @ w2.T,
        "the activation is SiLU (z · sigmoid(z)), not GELU.": (F.gelu(gate) * value) @ w2.T,
        "the gate is missing: multiply SiLU(w1 x) elementwise by w3 x before w2.": F.silu(gate) @ w2.T,
        "the SiLU is missing: apply it to w1 x before multiplying by w3 x.": (gate * value) @ w2.T,
    }
    for hint, wrong in mistakes.items():
        if torch.allclose(got, wrong, rtol=1e-4, atol=1e-5):
            return hint
    return None


@exercise("07.2", hint="SiLU(x @ w1.T) times (x @ w3.T) elementwise, then @ w2.T; no biases.")
def _swiglu(answer):
    if not callable(answer):
        return "pass the function itself: check(\"07.2\", my_swiglu)."
    g = torch.Generator().manual_seed(2023)
    for batch, d_model, d_ff in SWIGLU_SHAPES:
        x = torch.randn(*batch, d_model, generator=g, dtype=torch.float64)
        w1, w3 = (torch.randn(d_ff, d_model, generator=g, dtype=torch.float64) / d_model**0.5 for _ in range(2))
        w2 = torch.randn(d_model, d_ff, generator=g, dtype=torch.float64) / d_ff**0.5
        got = answer(x.clone(), w1.clone(), w2.clone(), w3.clone())
        if not isinstance(got, torch.Tensor):
            return f"return a torch tensor; got {type(got).__name__}."
        if tuple(got.shape) != tuple(x.shape):
            return f"for x of shape {tuple(x.shape)} the output must have the same shape; yours is {tuple(got.shape)}."
        got = got.to(torch.float64)
        if not torch.allclose(got, _swiglu_reference(x, w1, w2, w3), rtol=1e-4, atol=1e-5):  # float32 math passes
            return _swiglu_mistake(x, w1, w2, w3, got) or False
    return True


@exercise("07.3", hint="attention 4·d² + 4·d, FFN two linear maps with biases (d → d_ff → d), two LayerNorms of 2·d each.")
def _bert_block_params(answer):
    value, d, d_ff = whole_number(answer), 768, 3072
    attention, ffn, norms = 4 * d * d + 4 * d, 2 * d * d_ff + d_ff + d, 2 * 2 * d
    if value == attention + ffn:
        return "add the two LayerNorms: each has a γ and a β of d_model numbers."
    if value == 4 * d * d + 2 * d * d_ff:
        return "those are the weight matrices only; add the biases and the LayerNorms."
    if value == attention:
        return "that is the attention sublayer alone; the FFN is bigger."
    return value == attention + ffn + norms


def _gradient_ratios(depth: int, gain: float) -> tuple[float, float]:
    """(pre-norm / post-norm gradient RMS at block 1, the same at block L) for one stack."""
    from helpers.explorers.depth import layer_scales  # imported here: it loads the widgets

    _, post = layer_scales(depth, False, gain)
    _, pre = layer_scales(depth, True, gain)
    return float(pre[0] / post[0]), float(pre[-1] / post[-1])


def _near(value: float, target: float) -> bool:
    return math.isclose(value, target, rel_tol=0.01)


@exercise("07.4", hint="run layer_scales(20, norm_first, 3.0) for both placements; divide pre-norm's block-1 gradient RMS by post-norm's.")
def _pre_over_post(answer):
    value = number(answer)
    depth, gain = PRE_POST_SETTING["depth"], PRE_POST_SETTING["gain"]
    at_block_1, at_block_l = _gradient_ratios(depth, gain)
    if _near(value, at_block_1):
        return True
    if value != 0 and _near(1 / value, at_block_1):
        return "that is post-norm's gradient divided by pre-norm's: divide the other way."
    if _near(value, at_block_l):
        return "that compares the top block; the question asks about block 1, the first entry of each array."
    if _near(value, _gradient_ratios(32, gain)[0]):
        return "that is the 32-block stack: the gradient at block 1 depends on how many blocks sit above it, so build 20."
    if _near(value, _gradient_ratios(depth, 1.0)[0]):
        return "that is branch gain 1; the question's branches write with gain 3."
    return False
