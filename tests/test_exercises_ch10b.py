"""Notebook 10b's checkers accept the right answers, reject wrong ones, and never reveal them."""

import math
from functools import cache

import pytest
import torch
import torch.nn.functional as F

from helpers.checks import evaluate
from helpers.induction import (
    ablate_heads,
    copying_score,
    decode,
    encode,
    generate,
    head_scores,
    held_out_set,
    load_model,
    ov_circuit,
    repeated_sequence,
    split_metrics,
)
from tests.exercise_harness import exercise_tests

torch.set_num_threads(1)
MODEL, ONE_LAYER = load_model(), load_model(1)
X_TEST, P_TEST = held_out_set(MODEL.config)
SCORES = head_scores(MODEL, X_TEST)
PREV, IND = int(SCORES["previous-token"][0].argmax()), int(SCORES["prefix-matching"][1].argmax())
IDS = repeated_sequence(10, seed=3)


def kayak() -> str:
    return decode(generate(MODEL, encode("KAYAKKA")[None], 5)[0, 7:])


def prefix_score(removed) -> float:
    return head_scores(ablate_heads(MODEL, removed), X_TEST)["prefix-matching"][1, IND].item()


@cache
def period_17(first: int, sequences: int = 50) -> float:
    """Mean cross-entropy of the predictions at positions first..30, computed in float32 as a learner would."""
    ids = torch.stack([repeated_sequence(17, seed) for seed in range(sequences)])
    with torch.no_grad():
        logits = MODEL(ids)[:, first:31]
    return F.cross_entropy(logits.reshape(-1, 26), ids[:, first + 1 :].reshape(-1)).item()


@cache
def sampled(temperature: float, samples: int = 2000, seed: int = 1) -> float:
    """A learner's estimate: `samples` continuations from another seed than the checker's."""
    runs = generate(MODEL, IDS[None, :12].expand(samples, -1), 20, temperature=temperature, seed=seed)
    return (runs[:, 12:] == IDS[12:]).float().mean().item()


def true_context(temperature: float) -> float:
    with torch.no_grad():
        logits = MODEL(IDS[None])[0, 11:-1]
    return torch.softmax(logits.double() / temperature, dim=-1)[torch.arange(20), IDS[12:]].mean().item()


def copying(model, layer: int, head: int) -> float:
    return copying_score(ov_circuit(model, layer, head))


def logit_gap(model, layer: int, head: int, leave_out_diagonal: bool = True) -> float:
    """Exercise 10b.5: mean over letters t of the OV matrix's (t, t) minus the mean of row t's other entries."""
    ov = ov_circuit(model, layer, head)
    if not leave_out_diagonal:
        return (ov.diagonal() - ov.mean(dim=1)).mean().item()
    others = (ov.sum(dim=1) - ov.diagonal()) / (ov.shape[1] - 1)
    return (ov.diagonal() - others).mean().item()


SECTION_3_REPEATS = split_metrics(MODEL, X_TEST, P_TEST)["loss, repeats"]


RIGHT = {
    "10b.1": kayak(),
    "10b.2": prefix_score([(0, PREV)]),
    "10b.3": period_17(17),
    "10b.4": sampled(1.5),
    "10b.5": logit_gap(ONE_LAYER, 0, 0),
}
# The catalogue of plausible wrong answers: the reviewers' (0.00407 and 0.004 for 10b.3, the T = 1.0
# value 0.95 for 10b.4, the two-layer induction heads' +0.999 for 10b.5) and the notebook's own traps.
WRONG = {
    "10b.1": [w for w in ["YAKKA", "KAYAKKA" + kayak(), kayak()[:4], 5] if w != kayak()],
    "10b.2": [prefix_score([]), prefix_score([(0, 0), (0, 1)]), 0.0],
    "10b.3": [period_17(0), 1.0, period_17(17) / math.log(2), period_17(17) * 1.02, 0.0, SECTION_3_REPEATS,
              round(SECTION_3_REPEATS, 5), 0.004, round(period_17(17), 4), period_17(16), period_17(18),
              period_17(17, sequences=1)],
    "10b.4": [1.0, true_context(1.5), round(true_context(1.5), 3), sampled(2.0), sampled(1.5) * 40_000, 0.0,
              0.95, sampled(1.0), sampled(0.5), true_context(2.0)],
    "10b.5": [logit_gap(ONE_LAYER, 0, 1), logit_gap(MODEL, 1, 1), logit_gap(MODEL, 0, 0), 0.0,
              -logit_gap(ONE_LAYER, 0, 0), copying(ONE_LAYER, 0, 0), copying(MODEL, 1, 0), 0.999,
              ov_circuit(ONE_LAYER, 0, 0).diagonal().mean().item(), logit_gap(ONE_LAYER, 0, 0, leave_out_diagonal=False)],
}
# Each catalogued mistake gets its own true hint (a phrase of it).
HINTS = {
    ("10b.3", SECTION_3_REPEATS): "section 3",
    ("10b.3", round(SECTION_3_REPEATS, 5)): "section 3",
    ("10b.3", 0.004): "too few digits",
    ("10b.3", round(period_17(17), 4)): "too few digits",
    ("10b.3", period_17(0)): "every position",
    ("10b.3", period_17(16)): "position 16",
    ("10b.3", period_17(18)): "leaves out position 17",
    ("10b.3", period_17(17, sequences=1)): "first sequence only",
    ("10b.3", period_17(17) / math.log(2)): "bits",
    ("10b.3", 1.0): "not an accuracy",
    ("10b.4", 1.0): "greedy",
    ("10b.4", sampled(0.5)): "low temperature",
    ("10b.4", 0.95): "temperature 1.0",
    ("10b.4", sampled(1.0)): "temperature 1.0",
    ("10b.4", sampled(2.0)): "temperature 2.0",
    ("10b.4", true_context(1.5)): "true context",
    ("10b.4", round(true_context(1.5), 3)): "true context",
    ("10b.4", true_context(2.0)): "true context",
    ("10b.4", sampled(1.5) * 40_000): "not a count",
    ("10b.5", logit_gap(ONE_LAYER, 0, 1)): "head 1",
    ("10b.5", logit_gap(MODEL, 1, 1)): "two-layer model",
    ("10b.5", logit_gap(MODEL, 0, 0)): "two-layer model",
    ("10b.5", copying(ONE_LAYER, 0, 0)): "copying score",
    ("10b.5", 0.999): "copying score",
    ("10b.5", copying(MODEL, 1, 0)): "copying score",
    ("10b.5", -logit_gap(ONE_LAYER, 0, 0)): "sign",
    ("10b.5", ov_circuit(ONE_LAYER, 0, 0).diagonal().mean().item()): "other 25 entries",
    ("10b.5", logit_gap(ONE_LAYER, 0, 0, leave_out_diagonal=False)): "leave the diagonal entry out",
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(RIGHT, WRONG)


def test_sampling_answers_from_any_seed_and_three_decimals_pass():
    for seed in (0, 2, 3):
        assert evaluate("10b.4", sampled(1.5, seed=seed))[0]
    assert evaluate("10b.3", float(f"{period_17(17):.3g}"))[0]
    assert evaluate("10b.2", round(prefix_score([(0, PREV)]), 3))[0]
    assert evaluate("10b.5", float(f"{logit_gap(ONE_LAYER, 0, 0):.3g}"))[0]


def test_a_second_wrong_answer_gets_the_code_hint():
    first = evaluate("10b.4", 0.0, attempt=1)[1]
    second = evaluate("10b.4", 0.0, attempt=2)[1]
    assert "generate(" not in first and "generate(" in second


def test_a_loss_rounded_too_far_is_told_so_not_sent_to_other_positions():
    ok, message = evaluate("10b.3", round(period_17(17), 3))  # 0.004: right, but too few digits
    assert not ok and "significant figures" in message


@pytest.mark.parametrize(("exercise_id", "wrong"), list(HINTS))
def test_each_catalogued_mistake_gets_its_own_true_hint(exercise_id, wrong):
    ok, message = evaluate(exercise_id, wrong)
    assert not ok and HINTS[exercise_id, wrong] in message, message


def test_the_section_3_loss_is_not_called_the_right_loss():
    """Review 10b-E1: 0.00407, the loss on periods 4 to 16, used to hear "right positions and the right loss"."""
    message = evaluate("10b.3", 0.00407)[1]
    assert "section 3" in message and "right loss" not in message


def test_the_temperature_1_value_is_not_called_the_true_context_chance():
    """Review 10b-E2: 0.95, the free-running fraction at T = 1.0, used to hear "the true context"."""
    message = evaluate("10b.4", 0.95)[1]
    assert "temperature 1.0" in message and "true context" not in message


def test_10b_5_cannot_be_answered_with_a_printed_copying_score():
    """Review 10b-E3: the notebook prints the two-layer heads' copying scores (+0.999, +0.998); none passes."""
    for value in (0.999, 0.998, 1.0, 0.831, 0.746):
        assert not evaluate("10b.5", value)[0]
