"""Notebook 10b's checkers accept the right answers, reject wrong ones, and never reveal them."""

import math

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
)
from tests.exercise_harness import exercise_tests

torch.set_num_threads(1)
MODEL, ONE_LAYER = load_model(), load_model(1)
X_TEST, _ = held_out_set(MODEL.config)
SCORES = head_scores(MODEL, X_TEST)
PREV, IND = int(SCORES["previous-token"][0].argmax()), int(SCORES["prefix-matching"][1].argmax())
IDS = repeated_sequence(10, seed=3)


def kayak() -> str:
    return decode(generate(MODEL, encode("KAYAKKA")[None], 5)[0, 7:])


def prefix_score(removed) -> float:
    return head_scores(ablate_heads(MODEL, removed), X_TEST)["prefix-matching"][1, IND].item()


def period_17(first: int) -> float:
    """Mean cross-entropy of the predictions at positions first..30, computed in float32 as a learner would."""
    ids = torch.stack([repeated_sequence(17, seed) for seed in range(50)])
    with torch.no_grad():
        logits = MODEL(ids)[:, first:31]
    return F.cross_entropy(logits.reshape(-1, 26), ids[:, first + 1 :].reshape(-1)).item()


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


RIGHT = {
    "10b.1": kayak(),
    "10b.2": prefix_score([(0, PREV)]),
    "10b.3": period_17(17),
    "10b.4": sampled(1.5),
    "10b.5": copying(ONE_LAYER, 0, 0),
}
WRONG = {
    "10b.1": [w for w in ["YAKKA", "KAYAKKA" + kayak(), kayak()[:4], 5] if w != kayak()],
    "10b.2": [prefix_score([]), prefix_score([(0, 0), (0, 1)]), 0.0],
    "10b.3": [period_17(0), 1.0, period_17(17) / math.log(2), period_17(17) * 1.02, 0.0],
    "10b.4": [1.0, true_context(1.5), sampled(2.0), sampled(1.5) * 40_000, 0.0],
    "10b.5": [copying(ONE_LAYER, 0, 1), copying(MODEL, 0, 0), 0.0, -copying(ONE_LAYER, 0, 0)],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(RIGHT, WRONG)


def test_sampling_answers_from_any_seed_and_three_decimals_pass():
    for seed in (0, 2, 3):
        assert evaluate("10b.4", sampled(1.5, seed=seed))[0]
    assert evaluate("10b.3", float(f"{period_17(17):.3g}"))[0]
    assert evaluate("10b.2", round(prefix_score([(0, PREV)]), 3))[0]
    assert evaluate("10b.5", round(copying(ONE_LAYER, 0, 0), 3))[0]


def test_a_second_wrong_answer_gets_the_code_hint():
    first = evaluate("10b.4", 0.0, attempt=1)[1]
    second = evaluate("10b.4", 0.0, attempt=2)[1]
    assert "generate(" not in first and "generate(" in second


def test_a_loss_rounded_too_far_is_told_so_not_sent_to_other_positions():
    ok, message = evaluate("10b.3", round(period_17(17), 3))  # 0.004: right, but too few digits
    assert not ok and "significant figures" in message
