"""Notebook 04's checkers accept the right answers, reject wrong ones, and never reveal the answer."""

import math

import torch
import torch.nn.functional as F

from helpers.checks import evaluate
from helpers.embeddings import load_toy_embeddings
from helpers.qkv import hand_set_weights
from tests.exercise_harness import exercise_tests


def cross_attend(x, memory, W_q, W_k, W_v):
    q, k, v = x @ W_q.T, memory @ W_k.T, memory @ W_v.T
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), dim=-1) @ v


def with_linear(x, memory, W_q, W_k, W_v):
    """Another right answer: F.linear applies nn.Linear's layout."""
    q, k, v = F.linear(x, W_q), F.linear(memory, W_k), F.linear(memory, W_v)
    return torch.softmax(q @ k.mT / math.sqrt(W_k.shape[0]), dim=-1) @ v


def unscaled(x, memory, W_q, W_k, W_v):
    q, k, v = x @ W_q.T, memory @ W_k.T, memory @ W_v.T
    return torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v


def softmax_over_queries(x, memory, W_q, W_k, W_v):
    q, k, v = x @ W_q.T, memory @ W_k.T, memory @ W_v.T
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), dim=-2) @ v


def self_attention_on_x(x, memory, W_q, W_k, W_v):
    return cross_attend(x, x, W_q, W_k, W_v)


def formula_layout(x, memory, W_q, W_k, W_v):
    q, k, v = x @ W_q, memory @ W_k, memory @ W_v
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), dim=-1) @ v


def queries_from_memory(x, memory, W_q, W_k, W_v):
    return cross_attend(memory, x, W_q, W_k, W_v)


def scaled_by_d_v(x, memory, W_q, W_k, W_v):
    q, k, v = x @ W_q.T, memory @ W_k.T, memory @ W_v.T
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), dim=-1) @ v


def dot_t_on_a_batch(x, memory, W_q, W_k, W_v):  # right for 2-D inputs; .T on a batch reverses every axis
    q, k, v = x @ W_q.T, memory @ W_k.T, memory @ W_v.T
    return torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1) @ v


def values_from_x(x, memory, W_q, W_k, W_v):  # the right layout; fails on the shapes because n_q ≠ n_k
    q, k, v = x @ W_q.T, memory @ W_k.T, x @ W_v.T
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), dim=-1) @ v


def keys_from_x(x, memory, W_q, W_k, W_v):  # the right layout; fails on the shapes because n_q ≠ n_k
    q, k, v = x @ W_q.T, x @ W_k.T, memory @ W_v.T
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), dim=-1) @ v


def output_and_weights(x, memory, W_q, W_k, W_v):  # cell 5's attention returns (output, weights)
    q, k, v = x @ W_q.T, memory @ W_k.T, memory @ W_v.T
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), dim=-1)
    return weights @ v, weights


def scaled_by_d_model(x, memory, W_q, W_k, W_v):
    q, k, v = x @ W_q.T, memory @ W_k.T, memory @ W_v.T
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), dim=-1) @ v


def misspelt(x, memory, W_q, W_k, W_v):  # not a shape bug at all
    return torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v  # noqa: F821


def unfinished(x, memory, W_q, W_k, W_v):
    return None


AXES = list(load_toy_embeddings().axes)
HAND = hand_set_weights(AXES)


def w_q_with_object_row(row):
    W_q = HAND["W_q"].clone()
    W_q[AXES.index("object")] = torch.tensor(row)
    return W_q


AGENT_SEEKING = w_q_with_object_row([0.0, 0.0, 3.0, 0.0])  # a thing looks for `living`, not `object`
BOTH = w_q_with_object_row([0.0, 0.0, 3.0, 3.0])  # still looks for objects as strongly
LIVING_ROW_TOO = AGENT_SEEKING.clone()
LIVING_ROW_TOO[AXES.index("living"), 3] = 1.0  # changes the rows of words with no object

RIGHT = {
    "04.1": [(3, 5, 6), [3, 5, 6], torch.Size([3, 5, 6])],
    "04.2": [cross_attend, with_linear],
    "04.3": [131_072, 131072.0, "131072"],
    "04.4": [AGENT_SEEKING, w_q_with_object_row([0.0, 0.0, 1.0, 0.0]), AGENT_SEEKING.numpy().tolist()],
    "04.5": [{"A", "D"}, ["d", "a"], frozenset("AD")],
}
WRONG = {
    "04.1": [(3, 5, 5), (3, 5, 2), (3, 5, 16), (5, 6), "abc", "356", (3, 5, 6.5), (3.0, 5.0, 6.0)],
    "04.2": [unscaled, softmax_over_queries, self_attention_on_x, formula_layout, queries_from_memory,
             scaled_by_d_v, dot_t_on_a_batch, unfinished, 3, values_from_x, keys_from_x, output_and_weights,
             scaled_by_d_model, misspelt],
    "04.3": [768 * 64, 512 * 64, 3 * 768 * 64, 3 * 512 * 64, 768 * 64 + 2 * 512 * 64, 3 * 768 * 768, "many"],
    "04.4": [HAND["W_q"], BOTH, LIVING_ROW_TOO, AGENT_SEEKING.T, torch.zeros(8, 4), torch.zeros(3)],
    "04.5": [{"A"}, {"A", "C", "D"}, {"A", "B", "D"}, {"A", "D", "E"}, {"F"}, "AD", 7],
}
SECRETS = {"04.1": "(3, 5, 6)", "04.3": "131072", "04.5": "'A', 'D'"}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG, several_right=True, secrets={k: [v] for k, v in SECRETS.items()}
)


def test_unanswered_is_not_an_error():
    for exercise_id in RIGHT:
        assert evaluate(exercise_id, ...) == (False, evaluate("04.1", ...)[1])


def test_specific_hints():
    assert "d_v" in evaluate("04.1", (3, 5, 5))[1]
    assert "√d_k" in evaluate("04.2", unscaled)[1]
    assert "dim=-1" in evaluate("04.2", softmax_over_queries)[1]
    assert "self-attention" in evaluate("04.2", self_attention_on_x)[1]
    assert "(out, in)" in evaluate("04.2", formula_layout)[1]
    assert "(B, n_q, d_v)" in evaluate("04.2", queries_from_memory)[1]
    assert "not d_v" in evaluate("04.2", scaled_by_d_v)[1]
    assert "transpose(-2, -1)" in evaluate("04.2", dot_t_on_a_batch)[1]
    assert "values from memory" in evaluate("04.2", values_from_x)[1]  # a crash, but not a wrong layout
    assert "keys from memory" in evaluate("04.2", keys_from_x)[1]
    for right_layout in (values_from_x, keys_from_x, misspelt):
        assert "x @ W_q does not fit" not in evaluate("04.2", right_layout)[1]
    assert "not a tuple" in evaluate("04.2", output_and_weights)[1]
    assert "d_model" in evaluate("04.2", scaled_by_d_model)[1]
    assert "NameError" in evaluate("04.2", misspelt)[1] and "fix that line" in evaluate("04.2", misspelt)[1]
    for not_a_tuple_of_ints in ("356", (3, 5, 6.5)):
        assert "tuple of whole numbers" in evaluate("04.1", not_a_tuple_of_ints)[1]
    assert "three" in evaluate("04.3", 768 * 64)[1] and "three" in evaluate("04.3", 512 * 64)[1]
    assert "decoder's tokens" in evaluate("04.3", 3 * 768 * 64)[1]
    assert "encoder's output" in evaluate("04.3", 3 * 512 * 64)[1]
    assert "swapped" in evaluate("04.3", 768 * 64 + 2 * 512 * 64)[1]
    assert "not as one string" in evaluate("04.5", "AD")[1]
    assert "not to an agent" in evaluate("04.4", BOTH)[1]
    assert "changed" in evaluate("04.4", LIVING_ROW_TOO)[1]
    assert "(d_model, d_k) = (8, 4)" in evaluate("04.4", AGENT_SEEKING.T)[1]
    assert "largest" in evaluate("04.5", {"A", "B", "D"})[1]
    assert "polygon" in evaluate("04.5", {"A", "C", "D"})[1]
    assert "missing" in evaluate("04.5", {"A"})[1]
