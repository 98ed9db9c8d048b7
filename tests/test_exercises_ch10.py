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


ONE_LAYER_MODEL = load_model(DATA_DIR / ONE_LAYER_FILE)
ONE_LAYER = token_accuracy(ONE_LAYER_MODEL, X, Y)


def by_position(real_only: bool = True, scale: float = 1.0) -> tuple[float, ...]:
    """The one-layer model's accuracy at each output position, as exercise 10.6 asks for it."""
    with torch.no_grad():
        right = ONE_LAYER_MODEL(X).argmax(-1) == Y
    real = X != PAD if real_only else torch.ones_like(X, dtype=torch.bool)
    return tuple(scale * right[real[:, i], i].float().mean().item() for i in range(X.shape[1]))


POSITIONS = by_position()
RIGHT = {"10.1": ablated(1), "10.2": 8544, "10.3": without_mask(), "10.4": mirror(1), "10.5": ONE_LAYER,
         "10.6": (POSITIONS, "b")}
# The catalogue of plausible wrong answers, the third expert read's included (0.30, 0.5, 0.88, 0.60:
# values with no particular mistake behind them get the exercise's general hint).
WRONG = {
    "10.1": [ablated(0), 1.0, 100 * ablated(1), 0.30],
    "10.2": [8544 - 128, 8544 - 224, 4096],
    "10.3": [without_mask(real_only=False), 1.0, 100 * without_mask(), 0.5],
    "10.4": [mirror(0), 1.0, 0.0, round(mirror(1), 2) + 0.004, 0.88],
    "10.5": [1.0, ONE_LAYER - 0.1, 100 * ONE_LAYER, 0.60],
    "10.6": [(POSITIONS, "a"), (POSITIONS, "c"), (POSITIONS, "d"), (POSITIONS, "e"), ((1.0,) * 8, "b"),
             (by_position(real_only=False), "b"), (by_position(scale=100), "b"), (POSITIONS[:7], "b"),
             ((0.5,) * 8, "b"), "b", 2],
}
HINTS = {("10.1", ablated(0)): "layer 0", ("10.1", 100 * ablated(1)): "percentage",
         ("10.3", without_mask(real_only=False)): "real positions", ("10.5", 1.0): "two-layer",
         ("10.4", round(mirror(1), 2) + 0.004): "3 decimals",
         ("10.6", (POSITIONS, "a")): "about equal", ("10.6", (POSITIONS, "c")): "out 7",
         ("10.6", (POSITIONS, "d")): "out 0", ("10.6", (POSITIONS, "e")): "one letter",
         ("10.6", ((1.0,) * 8, "b")): "two-layer", ("10.6", (by_position(real_only=False), "b")): "is real",
         ("10.6", (by_position(scale=100), "b")): "percentages", ("10.6", "b"): "a pair"}

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


def test_10_6_needs_the_measured_accuracies_not_only_the_letter():
    """The letter alone, or with numbers that are not the one-layer model's, is not accepted."""
    assert not evaluate("10.6", "b")[0]
    assert not evaluate("10.6", (tuple(v + 0.02 for v in POSITIONS), "b"))[0]
    assert evaluate("10.6", (tuple(round(v, 3) for v in POSITIONS), "b"))[0]
    assert evaluate("10.6", ([*POSITIONS], " B "))[0]


def test_paste_ready_code_comes_only_after_a_second_wrong_answer():
    for exercise_id, wrong in (("10.1", 0.123), ("10.5", 0.123), ("10.6", ((0.5,) * 8, "b"))):
        first, second = evaluate(exercise_id, wrong)[1], evaluate(exercise_id, wrong, attempt=2)[1]
        assert "(" not in first, first
        assert len(second) > len(first), second
