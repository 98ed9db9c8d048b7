"""Notebook 10b's checkers accept the right answers, reject wrong ones, and never reveal them."""

import torch

from helpers.induction import (
    ablate_heads,
    decode,
    encode,
    generate,
    head_scores,
    held_out_set,
    load_model,
    repeated_sequence,
)
from tests.exercise_harness import exercise_tests

torch.set_num_threads(1)
MODEL = load_model()
X_TEST, _ = held_out_set(MODEL.config)
SCORES = head_scores(MODEL, X_TEST)
PREV, IND = int(SCORES["previous-token"][0].argmax()), int(SCORES["prefix-matching"][1].argmax())


def kayak() -> str:
    return decode(generate(MODEL, encode("KAYAKKA")[None], 5)[0, 7:])


def prefix_score(removed) -> float:
    return head_scores(ablate_heads(MODEL, removed), X_TEST)["prefix-matching"][1, IND].item()


def period_17(first: int) -> float:
    ids = torch.stack([repeated_sequence(17, seed) for seed in range(50)])
    with torch.no_grad():
        predicted = MODEL(ids).argmax(dim=-1)[:, first:31]
    return (predicted == ids[:, first + 1 :]).float().mean().item()


def sampled(temperature: float) -> float:
    ids = repeated_sequence(10, seed=3)
    runs = [generate(MODEL, ids[None, :12], 20, temperature=temperature, seed=s)[0, 12:] == ids[12:] for s in range(20)]
    return torch.stack(runs).float().mean().item()


RIGHT = {"10b.1": kayak(), "10b.2": prefix_score([(0, PREV)]), "10b.3": period_17(17), "10b.4": sampled(1.5)}
WRONG = {
    "10b.1": [w for w in ["YAKKA", "KAYAKKA" + kayak(), kayak()[:4], 5] if w != kayak()],
    "10b.2": [prefix_score([]), prefix_score([(0, 0), (0, 1)]), 0.0],
    "10b.3": [period_17(0), 1.0, period_17(17) * 700],
    "10b.4": [sampled(0.0), sampled(1.5) * 400, 0.0],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(RIGHT, WRONG)
