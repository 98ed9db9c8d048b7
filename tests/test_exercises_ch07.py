"""Notebook 07's checkers accept the right answers, reject wrong ones with a hint, and never reveal them."""

import pytest
import torch
import torch.nn.functional as F

from helpers.checks import evaluate
from helpers.explorers.depth import layer_scales
from tests.exercise_harness import exercise_tests


def halves(w13):
    """W₁ (the gate) and W₃ out of the fused (2·d_ff, d_model) weight."""
    return w13.chunk(2, dim=0)


def swiglu_right(x, w13, w2):
    gate, up = (x @ w13.T).chunk(2, dim=-1)
    return (F.silu(gate) * up) @ w2.T


class SwiGLUModule(torch.nn.Module):  # the same thing written with nn.Linear, as Llama's code does
    def __call__(self, x, w13, w2):
        w1, w3 = halves(w13)
        linear = [torch.nn.Linear(w.shape[1], w.shape[0], bias=False, dtype=w.dtype) for w in (w1, w2, w3)]
        with torch.no_grad():
            for lin, w in zip(linear, (w1, w2, w3), strict=True):
                lin.weight.copy_(w)
        return linear[1](F.silu(linear[0](x)) * linear[2](x))


def swiglu_gate_swapped(x, w13, w2):
    w1, w3 = halves(w13)
    return (F.silu(x @ w3.T) * (x @ w1.T)) @ w2.T


def swiglu_interleaved(x, w13, w2):
    return (F.silu(x @ w13[0::2].T) * (x @ w13[1::2].T)) @ w2.T


def swiglu_sigmoid(x, w13, w2):
    w1, w3 = halves(w13)
    return (torch.sigmoid(x @ w1.T) * (x @ w3.T)) @ w2.T


def swiglu_relu(x, w13, w2):
    w1, w3 = halves(w13)
    return (F.relu(x @ w1.T) * (x @ w3.T)) @ w2.T


def swiglu_no_gate(x, w13, w2):
    w1, _ = halves(w13)
    return F.silu(x @ w1.T) @ w2.T


def swiglu_no_silu(x, w13, w2):
    w1, w3 = halves(w13)
    return (x @ w1.T * (x @ w3.T)) @ w2.T


def swiglu_float32(x, w13, w2):  # right formula, rounded through float32: still right
    return swiglu_right(x.float(), w13.float(), w2.float())


def swiglu_flattens(x, w13, w2):
    return swiglu_right(x, w13, w2).reshape(-1, x.shape[-1])


def ratio(depth, gain, block=0):
    _, post = layer_scales(depth, False, gain)
    _, pre = layer_scales(depth, True, gain)
    return float(pre[block] / post[block])


PRE_OVER_POST = ratio(20, 3.0)

TINYLLAMA_BLOCK = 44_044_288  # one block of TinyLlama-1.1B: 22 of them + embeddings = 1.10 B

RIGHT = {"07.1": 6, "07.2": swiglu_right, "07.3": TINYLLAMA_BLOCK, "07.4": PRE_OVER_POST}
WRONG = {
    "07.1": [16, 32, 0, 8, 5, 7, 6.4, 15],
    "07.2": [swiglu_gate_swapped, swiglu_interleaved, swiglu_sigmoid, swiglu_relu, swiglu_no_gate, swiglu_no_silu,
             swiglu_flattens, lambda x, w13, w2: (x @ w13.T).numpy(), "swiglu"],
    "07.3": [4 * 2048**2 + 3 * 2048 * 5632 + 2 * 2048, TINYLLAMA_BLOCK - 2048 * 5632, TINYLLAMA_BLOCK + 2 * 2048,
             TINYLLAMA_BLOCK - 2 * 2048, 22 * TINYLLAMA_BLOCK, 7_087_872, TINYLLAMA_BLOCK + 1],
    "07.4": [1 / PRE_OVER_POST, ratio(20, 3.0, block=-1), ratio(32, 3.0), ratio(20, 1.0), ratio(20, 2.0),
             PRE_OVER_POST * 1.05, 0, "pre-norm"],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(RIGHT, WRONG)


@pytest.mark.parametrize("answer", [SwiGLUModule(), swiglu_float32, round(PRE_OVER_POST, 3)])
def test_other_right_forms_pass(answer):
    exercise_id = "07.4" if isinstance(answer, float) else "07.2"
    assert evaluate(exercise_id, answer)[0]


SPECIFIC = {
    ("07.1", 16): "most paths are",
    ("07.1", 32): "a^L",
    ("07.1", 8): "L · a",
    ("07.2", swiglu_gate_swapped): "first d_ff rows",
    ("07.2", swiglu_interleaved): "not as alternating rows",
    ("07.2", swiglu_sigmoid): "not sigmoid(z) alone",
    ("07.2", swiglu_relu): "not ReLU",
    ("07.2", swiglu_no_gate): "gate is missing",
    ("07.2", swiglu_no_silu): "SiLU is missing",
    ("07.2", swiglu_flattens): "same shape",
    ("07.3", 4 * 2048**2 + 3 * 2048 * 5632 + 2 * 2048): "narrower",
    ("07.3", TINYLLAMA_BLOCK - 2048 * 5632): "three matrices",
    ("07.3", TINYLLAMA_BLOCK + 2 * 2048): "no shift",
    ("07.3", 22 * TINYLLAMA_BLOCK): "22 blocks",
    ("07.4", 1 / PRE_OVER_POST): "divide the other way",
    ("07.4", ratio(20, 3.0, block=-1)): "block 1",
    ("07.4", ratio(32, 3.0)): "32-block",
    ("07.4", ratio(20, 1.0)): "gain 1",
}


@pytest.mark.parametrize(("exercise_id", "wrong"), list(SPECIFIC))
def test_common_mistakes_get_a_specific_hint(exercise_id, wrong):
    assert SPECIFIC[exercise_id, wrong] in evaluate(exercise_id, wrong)[1]


def test_the_pre_post_setting_is_not_one_the_notebook_prints():
    """07.4 must need a run: its setting differs from every (depth, gain) the notebook prints."""
    from helpers.exercises.ch07 import PRE_POST_SETTING
    from helpers.explorers.depth import GAINS

    assert PRE_POST_SETTING["gain"] not in GAINS and PRE_POST_SETTING["depth"] != 32
    assert PRE_OVER_POST > 1  # pre-norm delivers more to block 1 at this gain


def test_the_tinyllama_block_count_is_helpers_llama_block():
    """07.3's right answer is what helpers.llama.LlamaBlock holds at TinyLlama's shape."""
    from helpers.exercises.ch07 import TINYLLAMA
    from helpers.llama import LlamaBlock

    with torch.device("meta"):
        block = LlamaBlock(**TINYLLAMA)
    assert sum(p.numel() for p in block.parameters()) == TINYLLAMA_BLOCK
