"""Notebook 03's checkers accept the right answer, reject wrong ones with a hint, never leak."""

import numpy as np
import torch

import helpers
from helpers.checks import evaluate
from helpers.stats import softmax_jacobian
from tests.exercise_harness import exercise_tests

Q = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]], dtype=float)
K = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0]], dtype=float)
V = np.array([[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]], dtype=float)
UNSCALED, _ = helpers.scaled_dot_product_attention(Q, K, V, scale=1.0)
SCALED, WEIGHTS = helpers.scaled_dot_product_attention(Q, K, V)


def query_gradient(Q, K, V, G, scale):
    p = torch.softmax(Q @ K.T * scale, dim=-1)  # (n_q, n_k)
    d_scores = (softmax_jacobian(p) @ (G @ V.T).unsqueeze(-1)).squeeze(-1)  # J_i @ dP_i, row by row
    return scale * d_scores @ K


def query_gradient_numpy(Q, K, V, G, scale):
    Q, K, V, G = (np.asarray(m) for m in (Q, K, V, G))
    s = Q @ K.T * scale
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    d_p = G @ V.T
    return scale * (p * (d_p - (p * d_p).sum(-1, keepdims=True))) @ K


def without_scale(Q, K, V, G, scale):
    return query_gradient(Q, K, V, G, scale) / scale


def scale_twice(Q, K, V, G, scale):
    return query_gradient(Q, K, V, G, scale) * scale


def diagonal_only(Q, K, V, G, scale):
    p = torch.softmax(Q @ K.T * scale, dim=-1)
    return scale * (p * (G @ V.T)) @ K


def transposed(Q, K, V, G, scale):
    return query_gradient(Q, K, V, G, scale).T


def with_autograd(Q, K, V, G, scale):  # the task says no autograd
    q = torch.as_tensor(Q).clone().requires_grad_()
    out = torch.softmax(q @ torch.as_tensor(K).T * scale, dim=-1) @ torch.as_tensor(V)
    out.backward(torch.as_tensor(G))
    return q.grad


def unfinished(Q, K, V, G, scale):
    return None


RIGHT = {"03.1": [32, 32.0, torch.tensor(32.0)], "03.2": [query_gradient, query_gradient_numpy],
         "03.3": [1024], "03.4": [(UNSCALED, "no"), (UNSCALED.round(4), " No ")]}
WRONG = {
    "03.1": [96, 8, 24, 5.657, 32.4, 0, 48],
    "03.2": [without_scale, scale_twice, diagonal_only, transposed, with_autograd, unfinished, 3],
    "03.3": [64, 256, 4096, 8, 1020.0, 32, 16],
    "03.4": [(SCALED, "no"), (WEIGHTS, "no"), (UNSCALED.T[:3, :3], "no"), (np.zeros((3, 4)), "no"), (UNSCALED[:2], "no"),
             (UNSCALED.round(2), "no"), (SCALED.round(2), "no"), (UNSCALED, "yes"), (UNSCALED, "maybe"), UNSCALED,
             (SCALED, "yes")],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(RIGHT, WRONG, several_right=True)


def test_right_answers_in_other_forms_pass():
    assert evaluate("03.3", torch.tensor(1024.0))[0] and evaluate("03.1", np.float32(32))[0]
    out = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(m) for m in (Q, K, V)), scale=1.0)
    assert evaluate("03.4", (out, "no"))[0] and evaluate("03.4", [UNSCALED, "NO"])[0]


def test_specific_hints():
    assert "E[k[c]²]" in evaluate("03.1", 96)[1]
    assert "squared mean" in evaluate("03.1", 8)[1]
    assert "standard deviation" in evaluate("03.1", 5.657)[1]
    assert "once" in evaluate("03.2", without_scale)[1]
    assert "twice" in evaluate("03.2", scale_twice)[1]
    assert "−a aᵀ" in evaluate("03.2", diagonal_only)[1]
    assert "shape of Q" in evaluate("03.2", transposed)[1]
    assert "None" in evaluate("03.2", unfinished)[1]
    assert "autograd" in evaluate("03.2", with_autograd)[1]
    assert "standard deviation" in evaluate("03.3", 32)[1]
    assert "sum of d_k" in evaluate("03.3", 16)[1]
    assert "nearly" in evaluate("03.4", (UNSCALED.round(2), "no"))[1]
    assert "scaled output" in evaluate("03.4", (SCALED.round(2), "no"))[1]
    assert "large d_k" in evaluate("03.4", (UNSCALED, "yes"))[1]  # the rows at d_k = 4 stay soft
    assert "give two things" in evaluate("03.4", UNSCALED)[1]
    assert '"yes" or "no"' in evaluate("03.4", (UNSCALED, "maybe"))[1]


def test_a_measured_value_gets_its_own_hint():
    for exercise_id, measured in (("03.1", 32.4), ("03.3", 1020.0)):
        correct, message = evaluate(exercise_id, measured)
        assert not correct and "Monte-Carlo" in message, message
