"""Notebook 08's checkers accept the right answers, reject wrong ones, and never reveal them."""

import math

import numpy as np
import torch

from helpers.checks import evaluate
from helpers.position import rope, sinusoidal_encoding
from tests.exercise_harness import exercise_tests

RIGHT = {
    "08.1": 577,
    "08.2": 3,
    "08.3": float(sinusoidal_encoding(9, 6).double()[5] @ sinusoidal_encoding(9, 6).double()[8]),  # PE[5] · PE[8]
    "08.4": 2 * math.pi * 10000 ** (510 / 512),
    "08.5": 30,
}
WRONG = {
    "08.1": [576, 257, 442, 197, 578, "many", 577.5],
    "08.2": [0, 1, 4],
    "08.3": [np.zeros(6), sinusoidal_encoding(6, 6)[5].numpy(), 3.0, 1.0, 1.003, 0.2864, 2.7305, 0.7986, 2.9986,
             4.0003],
    "08.4": [10000 ** (510 / 512), 10000.0, 2 * math.pi, 2 * math.pi * 10000],
    "08.5": [5, 25, 27, 24, 11, 0, 41, 12],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG
)


OMEGA = 10000.0 ** (-np.arange(0, 6, 2) / 6)
DOT_HINTS = {  # a wrong PE[5] · PE[8] -> words its hint must contain
    float(np.sin(3 * OMEGA).sum()): "cosines, not sines",
    float(np.cos(13 * OMEGA).sum()): "not their sum",
    float(np.cos(3 * 10000.0 ** (-np.arange(3) / 6)).sum()): "not the pairs",
    float(np.cos(np.deg2rad(3 * OMEGA)).sum()): "radians",
    3.0: "Δ = 0",
    float(np.cos(3 * 10000.0 ** (-2 * np.arange(6) / 6)).sum()): "three terms",
}


def test_the_dot_product_mistakes_get_a_specific_hint():
    for wrong, words in DOT_HINTS.items():
        assert words in evaluate("08.3", wrong)[1], wrong


def test_the_stated_tolerance_holds():
    """08.3 asks for 4 decimals, within 0.0001. Four pass; two or three get a hint about the rounding."""
    right = RIGHT["08.3"]
    assert evaluate("08.3", round(right, 4))[0]
    for rounded in (round(right, 3), round(right, 2)):
        correct, message = evaluate("08.3", rounded)
        assert not correct and "decimals" in message


def test_unanswered_is_not_an_error():
    assert evaluate("08.1", ...) == (False, "Not answered yet: replace the `...` with your answer and run the cell again.")


def test_vit_hints():
    assert "[CLS]" in evaluate("08.1", 576)[1]
    assert "224" in evaluate("08.1", 257)[1]
    assert "14 pixels" in evaluate("08.1", 442)[1]


def test_full_turn_of_pair_d_model_over_2_gets_a_specific_hint():
    assert "d_model/2 − 1" in evaluate("08.4", 2 * math.pi * 10000)[1]


def test_rope_one_pair_answer_is_what_rope_computes():
    """08.5's expected answer, recomputed with helpers.position.rope (d_k = 2, q = k = (1, 0))."""
    q = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    keys = rope(q.expand(41, 2), torch.arange(41))  # the same key at positions 0 .. 40
    scores = (rope(q, torch.tensor([5])) @ keys.T)[0]
    scores[5] = -torch.inf  # the query's own position does not count
    assert evaluate("08.5", int(scores.argmax()))[0]


def test_rope_hints():
    assert "offset" in evaluate("08.5", 25)[1]
    assert "smallest" in evaluate("08.5", 27)[1]
    assert "own position" in evaluate("08.5", 5)[1]
    assert "closer still" in evaluate("08.5", 24)[1]
