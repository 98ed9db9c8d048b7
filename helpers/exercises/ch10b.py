"""Notebook 10b (induction heads): checkers. Each runs the shipped model; none prints the expected answer."""

import math
from functools import cache

import torch

from helpers.checks import exercise, number

LOSS_TOLERANCE = 6e-3  # 10b.3, relative: a value rounded to three significant figures is at most 5e-3 off
SAMPLING_TOLERANCE = 0.03  # 10b.4: an estimate from 2000 samples (2 s.e. under 0.02) lands this close
TRUE_CONTEXT_TOLERANCE = 0.003  # 10b.4: the true-context chance is exact; rounded to 2 decimals it lands this close
OTHER_TEMPERATURE_TOLERANCE = 0.02  # 10b.4: two 2000-sample estimates at another temperature differ by less (2 s.e. of the difference)
GAP_TOLERANCE = 6e-3  # 10b.5, relative: three significant figures


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


@exercise(
    "10b.1",
    hint="run the model on the prompt and let it continue greedily (temperature 0); answer with the 5 letters it writes.",
    code_hint="generate(shipped, encode('KAYAKKA')[None], 5), then decode the last 5 ids.",
)
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


@exercise(
    "10b.2",
    hint="remove only layer 0's previous-token head, then score layer 1's induction head on the held-out sequences.",
    code_hint="ablate_heads(shipped, [(0, prev_head)]), then head_scores(that_model, x_test)['prefix-matching'][1, ind_head].",
)
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


@cache
def _period_17_loss(first: int, sequences: int = 50) -> float:
    """Mean cross-entropy (nats) of the predictions at positions first..30 of the first ``sequences`` P = 17 sequences."""
    from helpers.induction import repeated_sequence

    model = _shipped()
    ids = torch.stack([repeated_sequence(17, seed, model.config) for seed in range(sequences)])
    with torch.no_grad():
        logits = model(ids)[:, first:-1].double()  # the rows that predict ids[:, first + 1:]
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, first + 1 :].reshape(-1)).item()


@exercise(
    "10b.3",
    hint="score the predictions at the repeat positions i = 17..30 against the letter at i + 1, over all 50 sequences, with the cross-entropy of notebook 10.",
    code_hint="ids = torch.stack([repeated_sequence(17, s) for s in range(50)]); F.cross_entropy(shipped(ids)[:, 17:31].reshape(-1, 26), ids[:, 18:].reshape(-1)).",
)
def _long_period(answer):
    value = number(answer)
    want = _period_17_loss(17)
    if math.isclose(value, want, rel_tol=LOSS_TOLERANCE):
        return True
    if math.isclose(value, _period_17_loss(0), rel_tol=LOSS_TOLERANCE):
        return "that counts every position; only the repeats (i = 17..30) can be predicted from the context."
    if math.isclose(value, _period_17_loss(16), rel_tol=LOSS_TOLERANCE):
        return "that includes position 16, the end of the first pass, which is not a repeat; start at i = 17."
    if math.isclose(value, _period_17_loss(18), rel_tol=LOSS_TOLERANCE):
        return "that leaves out position 17, the first repeat; score the predictions at i = 17..30."
    if math.isclose(value, _section_3_repeats_loss(), rel_tol=LOSS_TOLERANCE):
        return "that is the repeats' loss of section 3, on the held-out periods 4 to 16; compute it on the 50 sequences with P = 17."
    if math.isclose(value, _period_17_loss(17, sequences=1), rel_tol=LOSS_TOLERANCE):
        return "that is the first sequence only; average over all 50 (seeds 0 to 49)."
    if value > 0 and float(f"{value:.2g}") == value and float(f"{want:.{_digits(value)}g}") == value:
        return "too few digits to check: give three significant figures (e.g. 0.00xyz)."
    if math.isclose(value, want / math.log(2), rel_tol=LOSS_TOLERANCE):
        return "that is in bits; the cross-entropy here uses the natural logarithm, as F.cross_entropy does."
    if value > 0.5:
        return "the question asks for the loss (a cross-entropy, small when the model is sure and right), not an accuracy."
    return False


def _digits(value: float) -> str:
    """The significant figures ``value`` is written with, as a format precision: "1" for 0.004, "2" for 0.0043."""
    return "1" if float(f"{value:.1g}") == value else "2"


@cache
def _section_3_repeats_loss() -> float:
    """The repeats' loss that section 3 prints for the trained model (held-out periods 4 to 16)."""
    from helpers.induction import split_metrics

    loss = split_metrics(_shipped(), *_test_set())["loss, repeats"]  # a key, not a message: kept out of the return
    return loss


def _prompt_and_repeat() -> tuple[torch.Tensor, torch.Tensor]:
    from helpers.induction import repeated_sequence

    ids = repeated_sequence(10, 3, _shipped().config)
    return ids[None, :12], ids[12:]


@cache
def _sampled_fraction(temperature: float, samples: int = 10_000) -> float:
    """Fraction of sampled letters equal to the repeat: the checker's own estimate (2 s.e. under 0.01)."""
    from helpers.induction import generate

    prompt, repeat = _prompt_and_repeat()
    sampled = generate(_shipped(), prompt.expand(samples, -1), 20, temperature=temperature, seed=0)
    return (sampled[:, 12:] == repeat).double().mean().item()


def _true_context_probability(temperature: float) -> float:
    """Mean probability of the right letter when the context so far is the true sequence."""
    prompt, repeat = _prompt_and_repeat()
    ids = torch.cat([prompt[0], repeat])
    with torch.no_grad():
        logits = _shipped()(ids[None])[0, 11:-1]  # the rows that predict ids[12:]
    return torch.softmax(logits.double() / temperature, dim=-1)[torch.arange(20), repeat].mean().item()


@exercise(
    "10b.4",
    hint="sample at least 2000 continuations at temperature 1.5 (each sampled letter joins the context) and count the letters equal to the repeat over all of them.",
    code_hint="sampled = generate(shipped, prompt.expand(2000, -1), 20, temperature=1.5, seed=0); then (sampled[:, 12:] == ids[12:]).float().mean().",
)
def _temperature(answer):
    value = number(answer)
    if value > 1:
        return "give a fraction of the sampled letters (between 0 and 1), not a count."
    if math.isclose(value, _sampled_fraction(1.5), abs_tol=SAMPLING_TOLERANCE):
        return True
    if math.isclose(value, 1.0, abs_tol=1e-6):
        return "every letter right: that is greedy decoding (or a very low temperature); sample at temperature 1.5."
    if value >= 0.985:
        return "nearly every letter right: that is what a low temperature gives; sample at temperature 1.5."
    true_context = any(math.isclose(value, _true_context_probability(t), abs_tol=TRUE_CONTEXT_TOLERANCE) for t in (1.5, 2.0))
    other = [t for t in (1.0, 2.0) if math.isclose(value, _sampled_fraction(t, 2000), abs_tol=OTHER_TEMPERATURE_TOLERANCE)]
    if true_context and other:
        return "that is close both to the chance of the right letter given the true context and to a sample at another temperature; sample at T = 1.5 and let each sampled letter join the context, as generate does."
    if true_context:
        return "that is the chance of the right letter given the true context; sample at T = 1.5 and let each sampled letter join the context, as generate does."
    if other:
        return f"that matches sampling at temperature {other[0]}; the question asks for temperature 1.5."
    return False


def _logit_gap(ov: torch.Tensor) -> float:
    """Mean over letters t of ov[t, t] minus the mean of row t's other entries: how much more the head raises
    the letter it attends to than the other letters (logits, as the OV reading counts them)."""
    off_diagonal = ~torch.eye(ov.shape[0], dtype=torch.bool)
    return (ov.diagonal().mean() - ov[off_diagonal].mean()).item()


@exercise(
    "10b.5",
    hint="build the OV circuit of head 0 in the one-layer model (section 6); for each letter t take row t's diagonal entry minus the mean of the row's other 25 entries, then average over the 26 letters.",
    code_hint="ov = ov_circuit(one_layer, 0, 0); then ov.diagonal().mean() - ov[~torch.eye(26, dtype=torch.bool)].mean().",
)
def _one_layer_copies(answer):
    from helpers.induction import copying_score, load_model, ov_circuit

    value = number(answer)
    one_layer = load_model(1)
    ov = ov_circuit(one_layer, 0, 0)
    if math.isclose(value, _logit_gap(ov), rel_tol=GAP_TOLERANCE):
        return True
    heads = [(one_layer, 0, 0), (one_layer, 0, 1)] + [(_shipped(), layer, h) for layer in range(2) for h in range(2)]
    if any(math.isclose(value, copying_score(ov_circuit(*head)), abs_tol=5e-4) for head in heads):
        return "that is a copying score (Σλ / Σ|λ|, near +1 for every head that copies); the question asks how many logits more the head gives the letter it attends to."
    if math.isclose(value, _logit_gap(ov_circuit(one_layer, 0, 1)), rel_tol=GAP_TOLERANCE):
        return "that is head 1; the question asks for head 0."
    if any(math.isclose(value, _logit_gap(ov_circuit(_shipped(), layer, h)), rel_tol=GAP_TOLERANCE) for layer in range(2) for h in range(2)):
        return "that is a head of the two-layer model; use the one-layer model, load_model(1)."
    with_diagonal = (ov.diagonal() - ov.mean(dim=1)).mean().item()
    if any(math.isclose(value, v, rel_tol=GAP_TOLERANCE) for v in (ov.diagonal().mean().item(), with_diagonal)):
        return "subtract from each diagonal entry the mean of the other 25 entries of its row (leave the diagonal entry out of that mean)."
    if math.isclose(-value, _logit_gap(ov), rel_tol=GAP_TOLERANCE):
        return "check the sign: the diagonal entry minus the mean of the others."
    return False
