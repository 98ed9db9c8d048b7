"""Notebook 10b (induction heads): checkers. Each runs the shipped model; none prints the expected answer."""

import math
from functools import cache

import torch

from helpers.checks import exercise, number


@cache
def _shipped():
    from helpers.induction import load_model

    return load_model()


@cache
def _test_set():
    from helpers.induction import held_out_set

    return held_out_set(_shipped().config)


@cache
def _prefix_scores(removed: tuple[tuple[int, int], ...]) -> torch.Tensor:
    """Prefix-matching score per head (layers, h) on the held-out set with ``removed`` heads ablated."""
    from helpers.induction import ablate_heads, head_scores

    return head_scores(ablate_heads(_shipped(), list(removed)), _test_set()[0])["prefix-matching"]


def _roles() -> tuple[int, int]:
    """(layer 0's strongest previous-token head, layer 1's strongest prefix-matching head)."""
    from helpers.induction import head_scores

    scores = head_scores(_shipped(), _test_set()[0])
    return int(scores["previous-token"][0].argmax()), int(scores["prefix-matching"][1].argmax())


@exercise("10b.1", hint="generate(shipped, encode('KAYAKKA')[None], 5), then decode the last 5 ids.")
def _kayak(answer):
    from helpers.induction import decode, encode, generate

    if not isinstance(answer, str):
        return "answer with a string of letters, e.g. decode(...) of the generated ids."
    answer = answer.upper()
    want = decode(generate(_shipped(), encode("KAYAKKA")[None], 5)[0, 7:])
    if answer.startswith("KAYAKKA"):
        return "leave out the prompt: only the 5 letters the model wrote."
    if len(answer) != 5:
        return "the question asks for the 5 letters after the prompt."
    if answer != want and answer == "YAKKA":
        return "that is how the block would go on; run the model and see what it writes (it never saw a block with a repeated letter)."
    return answer == want


@exercise("10b.2", hint="ablate_heads(shipped, [(0, prev_head)]), then head_scores(that_model, x_test)['prefix-matching'][1, ind_head].")
def _composition(answer):
    prev_head, ind_head = _roles()
    value = number(answer)
    want = float(_prefix_scores(((0, prev_head),))[1, ind_head])
    if not math.isclose(value, want, abs_tol=1e-3):
        if math.isclose(value, float(_prefix_scores(())[1, ind_head]), abs_tol=1e-3):
            return "that is the intact model's score: remove layer 0's previous-token head first."
        if math.isclose(value, float(_prefix_scores(((0, 0), (0, 1)))[1, ind_head]), abs_tol=1e-3):
            return "that removes both layer-0 heads; remove only the previous-token head."
        if math.isclose(value, float(_prefix_scores(((0, prev_head),))[1, 1 - ind_head]), abs_tol=1e-3):
            return "that is the other layer-1 head; the question asks for ind_head."
    return math.isclose(value, want, abs_tol=1e-3)


def _period_17_accuracy(first: int) -> float:
    from helpers.induction import repeated_sequence

    model = _shipped()
    ids = torch.stack([repeated_sequence(17, seed, model.config) for seed in range(50)])
    with torch.no_grad():
        predicted = model(ids).argmax(dim=-1)[:, :-1]
    return (predicted == ids[:, 1:])[:, first:].float().mean().item()


@exercise("10b.3", hint="ids = torch.stack([repeated_sequence(17, s) for s in range(50)]); compare shipped(ids).argmax(-1)[:, 17:31] with ids[:, 18:].")
def _long_period(answer):
    value = number(answer)
    if value > 1:
        return "give the accuracy as a fraction between 0 and 1."
    if math.isclose(value, _period_17_accuracy(0), abs_tol=1e-4):
        return "that counts every position; only the repeats (i = 17..30) can be predicted from the context."
    return math.isclose(value, _period_17_accuracy(17), abs_tol=1e-4)


def _sampled_fraction(temperature: float) -> float:
    from helpers.induction import generate, repeated_sequence

    ids = repeated_sequence(10, 3, _shipped().config)
    prompt = ids[None, :12]
    matches = [
        (generate(_shipped(), prompt, 20, temperature=temperature, seed=seed)[0, 12:] == ids[12:]).float().mean().item()
        for seed in range(20)
    ]
    return sum(matches) / len(matches)


@exercise("10b.4", hint="for each seed in range(20): generate(shipped, prompt, 20, temperature=1.5, seed=seed); compare the last 20 ids with ids[12:].")
def _temperature(answer):
    value = number(answer)
    if value > 1:
        return "give a fraction of the 400 letters (between 0 and 1), not a count."
    if not math.isclose(value, _sampled_fraction(1.5), abs_tol=1e-4) and math.isclose(value, _sampled_fraction(0.0), abs_tol=1e-4):
        return "that is greedy decoding (every sample the same); sample at temperature 1.5."
    return math.isclose(value, _sampled_fraction(1.5), abs_tol=1e-4)
