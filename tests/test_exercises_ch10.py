"""Notebook 10's checkers accept the right answers, reject wrong ones, and never reveal them."""

import pytest
import torch

from helpers.checks import evaluate
from helpers.data import DATA_DIR
from helpers.toy_model import (
    ONE_LAYER_FILE,
    PAD,
    ablate_attention,
    encode,
    held_out_set,
    load_model,
    token_accuracy,
)
from tests.exercise_harness import exercise_tests

SHIPPED = load_model()
X, Y = held_out_set(SHIPPED.config)


def mirror(head: int, word: str = "CHIEF") -> float:
    with torch.no_grad():
        SHIPPED(encode(word)[None])
    i = torch.arange(len(word))
    return SHIPPED.attention()[1, 0, head][i, len(word) - 1 - i].mean().item()


def ablated(layer: int) -> float:
    with ablate_attention(SHIPPED, layer):
        return token_accuracy(SHIPPED, X, Y)


def without_mask(real_only: bool = True) -> float:
    with torch.no_grad():
        stream = SHIPPED.tokens(X) + SHIPPED.positions(torch.arange(X.shape[1]))
        for block in SHIPPED.blocks:
            stream = block(stream, None)
        right = SHIPPED.readout(SHIPPED.norm(stream)).argmax(-1) == Y
    return (right[X != PAD] if real_only else right).float().mean().item()


ONE_LAYER = token_accuracy(load_model(DATA_DIR / ONE_LAYER_FILE), X, Y)
RIGHT = {"10.1": ablated(1), "10.2": 8544, "10.3": without_mask(), "10.4": mirror(1), "10.5": ONE_LAYER, "10.6": "b"}
WRONG = {
    "10.1": [ablated(0), 1.0, 100 * ablated(1)],
    "10.2": [8544 - 128, 8544 - 224, 4096],
    "10.3": [without_mask(real_only=False), 1.0, 100 * without_mask()],
    "10.4": [mirror(0), 1.0, 0.0],
    "10.5": [1.0, ONE_LAYER - 0.1, 100 * ONE_LAYER],
    "10.6": ["a", "c", "d", "e", 2],
}
HINTS = {("10.1", ablated(0)): "layer 0", ("10.1", 100 * ablated(1)): "percentage",
         ("10.3", without_mask(real_only=False)): "real positions", ("10.5", 1.0): "two-layer",
         ("10.6", "a"): "ten times longer", ("10.6", "e"): "one letter"}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG
)


@pytest.mark.parametrize(("exercise_id", "wrong"), list(HINTS))
def test_common_mistakes_get_a_specific_hint(exercise_id, wrong):
    assert HINTS[exercise_id, wrong] in evaluate(exercise_id, wrong)[1]


def test_one_layer_answer_accepts_the_tolerance_the_exercise_states():
    """Exercise 10.5 says ±0.005; train() runs in float64, so every CPU lands far inside it (test_toy_model.py)."""
    assert evaluate("10.5", ONE_LAYER + 0.004)[0] and evaluate("10.5", ONE_LAYER - 0.004)[0]
    assert not evaluate("10.5", ONE_LAYER + 0.006)[0] and not evaluate("10.5", ONE_LAYER - 0.006)[0]


def test_exercise_10_4_asks_about_a_word_the_explorer_does_not_offer():
    from helpers.exercises.ch10 import WORD_10_4
    from helpers.explorers.trained import WORDS

    assert WORD_10_4 not in WORDS
