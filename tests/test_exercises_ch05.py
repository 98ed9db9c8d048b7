"""Notebook 05's checkers accept the right answers, reject wrong ones, and never reveal the answer."""

import numpy as np
import torch

import helpers
from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests

TOKENS = torch.tensor([[4, 9, 2, 0], [7, 0, 0, 0]])
CAUSAL5 = np.tril(np.ones((5, 5), bool))

RIGHT = {
    "05.1": [CAUSAL5.tolist(), CAUSAL5, torch.ones(5, 5).tril(), helpers.causal_mask(5), CAUSAL5.astype(int).tolist()],
    "05.2": [(TOKENS != 0)[:, None, None, :], helpers.padding_mask(TOKENS), (TOKENS != 0)[:, None, None, :].numpy()],
    "05.3": [{"C", "D"}, ["D", "C"], {"c", "d"}],
    "05.4": [TOKENS == 0, (TOKENS == 0).numpy(), (TOKENS == 0).int()],
    "05.5": [[0, 1, 2], (2, 1, 0), torch.tensor([0, 1, 2])],
}
WRONG = {
    "05.1": [CAUSAL5.T, ~CAUSAL5, np.tril(np.ones((5, 5), bool), -1), np.ones((5, 5), bool), CAUSAL5[:4], [[2, 0]]],
    "05.2": [TOKENS != 0, TOKENS == 0, torch.zeros(2, 4), (TOKENS != 0)[:, None, :, None],
             (TOKENS == 0)[:, None, None, :], torch.ones(2, 1, 1, 4)],
    "05.3": [{"C"}, {"B", "C", "D"}, {"C", "D", "E"}, "A", {"Z"}, set()],
    "05.4": [TOKENS != 0, helpers.padding_mask(TOKENS), torch.ones(2, 3)],
    "05.5": [[5, 6, 7], [0], [0, 1], [0, 1, 2, 3], []],
}
LEAKS = ["True, True", "[0, 1", "{'C', 'D'}"]  # parts of the right answers

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG, several_right=True, secrets=dict.fromkeys(WRONG, LEAKS)
)


def test_specific_hints():
    assert "transpose" in evaluate("05.1", CAUSAL5.T)[1]
    assert "itself" in evaluate("05.1", np.tril(np.ones((5, 5), bool), -1))[1]
    assert "right values" in evaluate("05.2", TOKENS != 0)[1]
    assert "right values" not in evaluate("05.2", TOKENS == 0)[1]  # a wrong (B, L) mask is not praised
    assert "(B, 1, 1, L)" in evaluate("05.2", torch.zeros(2, 4))[1]
    assert "query axis" in evaluate("05.2", (TOKENS != 0)[:, None, :, None])[1]
    assert "strictly the past" in evaluate("05.3", {"B", "C", "D"})[1]
    assert "opposite" in evaluate("05.4", TOKENS != 0)[1]
    assert "right padding" in evaluate("05.5", [5, 6, 7])[1]


def test_the_notebook_leak_answer_is_what_autograd_says():
    """05.3's expected answer, recomputed with the notebook's autograd test."""
    from helpers.qkv import QKVProjection, self_attention

    torch.manual_seed(0)
    probe, x0 = QKVProjection(8, 4, 8), torch.randn(6, 8)
    n6 = torch.ones(6, 6, dtype=torch.bool)
    masks = {
        "A": n6.tril(), "B": n6.tril(diagonal=-1), "C": n6.tril().T,
        "D": n6.tril() | torch.eye(6, dtype=torch.bool).roll(1, dims=1),
        "E": n6.tril() & helpers.padding_mask(torch.tensor([[3, 3, 3, 3, 0, 0]]))[0, 0],
    }

    def leaks(mask):
        x = x0.clone().requires_grad_(True)
        out, _ = self_attention(x, probe, mask=mask)
        grads = [torch.autograd.grad(out[t].sum(), x, retain_graph=True)[0] for t in range(6)]
        return any(g[t + 1 :].abs().max() > 0 for t, g in enumerate(grads[:-1]))

    leaking = {name for name, m in masks.items() if leaks(m)}
    assert evaluate("05.3", leaking)[0]
