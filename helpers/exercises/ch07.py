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
PATH_SETTING = {"layers": 32, "a": 0.25}  # 07.1: L scalar residual layers f(x) = a · x


@exercise("07.1", hint="all paths through k layers together contribute (how many there are) × a^k; compare that total for neighbouring k.")
def _strongest_path_length(answer):
    value = whole_number(answer)
    layers, a = PATH_SETTING["layers"], PATH_SETTING["a"]
    if value == layers // 2:
        return "that is where most paths are; weigh each length by what its paths contribute, not by how many there are."
    if value == layers:
        return "the one path through every layer contributes a^L alone, a tiny number."
    if value == 0:
        return "the path through no layer contributes 1, but it is a single path; lengths with many paths add up to more."
    if value == round(layers * a):
        return "that is L · a; compare what length k contributes with what length k + 1 contributes."
    contribution = [math.comb(layers, k) * a**k for k in range(layers + 1)]
    return value == max(range(layers + 1), key=contribution.__getitem__)


def _swiglu_reference(x, w13, w2):
    """W₂(SiLU(W₁x) ⊙ W₃x) with W₁ and W₃ fused into w13 = [W₁; W₃] (2·d_ff, d_model), nn.Linear's
    layout: (..., d_model) -> (..., d_model)."""
    d_ff = w13.shape[0] // 2
    return (F.silu(x @ w13[:d_ff].T) * (x @ w13[d_ff:].T)) @ w2.T


def _swiglu_mistake(x, w13, w2, got):
    """A specific hint if ``got`` is a common wrong SwiGLU, else None."""
    d_ff = w13.shape[0] // 2
    gate, value = x @ w13[:d_ff].T, x @ w13[d_ff:].T
    mistakes = {
        "the SiLU belongs on the gate, the first d_ff rows of w13; the other half enters without an activation.":
            (value * torch.sigmoid(value) * gate) @ w2.T,
        "w13 holds W₁ and W₃ as two blocks of d_ff rows one after the other, not as alternating rows.":
            (F.silu(x @ w13[0::2].T) * (x @ w13[1::2].T)) @ w2.T,
        "SiLU(z) is z · sigmoid(z), not sigmoid(z) alone.": (torch.sigmoid(gate) * value) @ w2.T,
        "the activation is SiLU (z · sigmoid(z)), not ReLU.": (F.relu(gate) * value) @ w2.T,
        "the activation is SiLU (z · sigmoid(z)), not GELU.": (F.gelu(gate) * value) @ w2.T,
        "the gate is missing: multiply SiLU(W₁x) elementwise by W₃x before w2.": F.silu(gate) @ w2.T,
        "the SiLU is missing: apply it to W₁x before multiplying by W₃x.": (gate * value) @ w2.T,
    }
    for hint, wrong in mistakes.items():
        if torch.allclose(got, wrong, rtol=1e-4, atol=1e-5):
            return hint
    return None


@exercise(
    "07.2",
    hint="x times w13 (transposed, as nn.Linear stores it) gives both branches side by side: the first d_ff "
    "features are the gate, which goes through SiLU; multiply it elementwise by the other d_ff, then project "
    "down with w2 (transposed). No biases.",
    code_hint="both branches at once: x @ w13.T has 2 · d_ff features; cut it in two along the last dimension",
)
def _swiglu(answer):
    if not callable(answer):
        return "pass the function itself: check(\"07.2\", my_swiglu)."
    g = torch.Generator().manual_seed(2023)
    for batch, d_model, d_ff in SWIGLU_SHAPES:
        x = torch.randn(*batch, d_model, generator=g, dtype=torch.float64)
        w13 = torch.randn(2 * d_ff, d_model, generator=g, dtype=torch.float64) / d_model**0.5
        w2 = torch.randn(d_model, d_ff, generator=g, dtype=torch.float64) / d_ff**0.5
        got = answer(x.clone(), w13.clone(), w2.clone())
        if not isinstance(got, torch.Tensor):
            return f"return a torch tensor; got {type(got).__name__}."
        if tuple(got.shape) != tuple(x.shape):
            return f"for x of shape {tuple(x.shape)} the output must have the same shape; yours is {tuple(got.shape)}."
        got = got.to(torch.float64)
        if not torch.allclose(got, _swiglu_reference(x, w13, w2), rtol=1e-4, atol=1e-5):  # float32 math passes
            return _swiglu_mistake(x, w13, w2, got) or False
    return True


TINYLLAMA = {"d_model": 2048, "num_heads": 32, "num_kv_heads": 4, "d_ff": 5632}  # 07.3: one block of TinyLlama-1.1B


def _tinyllama_parts() -> dict[str, int]:
    """Parameter counts of one TinyLlama block: attention with GQA, SwiGLU, two RMSNorms; no biases."""
    d, d_ff = TINYLLAMA["d_model"], TINYLLAMA["d_ff"]
    kv_width = TINYLLAMA["num_kv_heads"] * (d // TINYLLAMA["num_heads"])  # h_kv · d_k
    return {"attention": 2 * d * d + 2 * d * kv_width, "full attention": 4 * d * d, "ffn": 3 * d * d_ff,
            "two-matrix ffn": 2 * d * d_ff, "norms": 2 * d}


@exercise("07.3", hint="add the parts: W_Q and W_O, the narrower W_K and W_V, the three SwiGLU matrices, two RMSNorm gains; no biases.")
def _tinyllama_block_params(answer):
    value, p = whole_number(answer), _tinyllama_parts()
    right = p["attention"] + p["ffn"] + p["norms"]
    if value == p["full attention"] + p["ffn"] + p["norms"]:
        return "that is full multi-head attention; with 4 key/value heads W_K and W_V are narrower than d_model."
    if value == p["attention"] + p["two-matrix ffn"] + p["norms"]:
        return "SwiGLU has three matrices (w1, w2, w3), not two."
    if value == right + p["norms"]:
        return "RMSNorm has a gain γ but no shift β."
    if value == right - p["norms"]:
        return "add the two RMSNorms: each has a gain of d_model numbers."
    if value == 22 * right:
        return "that counts all 22 blocks; the question asks for one."
    return value == right


def _gradient_ratios(depth: int, gain: float) -> tuple[float, float]:
    """(pre-norm / post-norm gradient RMS at block 1, the same at block L) for one stack."""
    from helpers.explorers.depth import layer_scales  # imported here: it loads the widgets

    _, post = layer_scales(depth, False, gain)
    _, pre = layer_scales(depth, True, gain)
    return float(pre[0] / post[0]), float(pre[-1] / post[-1])


def _near(value: float, target: float) -> bool:
    return math.isclose(value, target, rel_tol=0.01)


@exercise(
    "07.4",
    hint="build the 20-block stack with gain 3 in both placements; divide pre-norm's gradient RMS at block 1 "
    "(the first entry of its gradient array) by post-norm's.",
    code_hint="layer_scales returns (stream RMS, gradient RMS): depth_module.layer_scales(20, True, 3.0)[1][0] "
    "/ depth_module.layer_scales(20, False, 3.0)[1][0]",
)
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
