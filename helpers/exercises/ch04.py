"""Notebook 04: Q, K, V and self-attention."""

import math

import numpy as np
import torch

from helpers.checks import exercise
from helpers.embeddings import load_toy_embeddings
from helpers.qkv import MATCH_AXES, hand_set_weights


def _as_shape(answer) -> tuple | None:
    """A shape given as a tuple, list or torch.Size of whole numbers; None for anything else
    (a string, whose characters would iterate as digits, or a float, which int() would truncate)."""
    if not isinstance(answer, tuple | list | torch.Size):
        return None
    if not all(isinstance(s, int | np.integer) and not isinstance(s, bool) for s in answer):
        return None
    return tuple(int(s) for s in answer)


@exercise("04.1", hint="the output has one row per query token and d_v columns, in every sentence of the batch.")
def _output_shape(answer) -> bool | str:
    shape = _as_shape(answer)
    if shape is None:
        return "give the shape as a tuple of whole numbers, one per axis, such as (1, 2, 3)."
    if shape == (3, 5, 5):
        return "that is the shape of the scores (and weights); the output mixes values, so its last size is d_v."
    if shape in ((3, 5, 2), (3, 5, 16)):
        return "the output is a weighted mix of the *values*: which width do they have?"
    return shape == (3, 5, 6)


def _cross_attention(x, memory, W_q, W_k, W_v, *, scale=True, by_d_v=False, by_d_model=False, dim=-1,
                     keys_from=None, values_from=None):
    """The reference: queries from x (B, n_q, d_model), keys and values from memory (B, n_k, d_model),
    weights in nn.Linear's (out, in) layout. The keywords build the mistakes the hints name."""
    keys = memory if keys_from is None else keys_from
    values = keys if values_from is None else values_from
    q, k, v = x @ W_q.T, keys @ W_k.T, values @ W_v.T  # (B, n_q, d_k), (B, n_k, d_k), (B, n_k, d_v)
    width = v.shape[-1] if by_d_v else x.shape[-1] if by_d_model else k.shape[-1]
    scores = q @ k.transpose(-2, -1) / (math.sqrt(width) if scale else 1.0)  # (B, n_q, n_k)
    return torch.softmax(scores, dim=dim) @ v  # (B, n_q, d_v)


def _cross_attention_cases(g: torch.Generator) -> list[tuple[torch.Tensor, ...]]:
    """(x, memory, W_q, W_k, W_v) with random sizes; n_q, n_k, d_model, d_k, d_v all different."""
    cases = []
    for _ in range(3):
        B, n_q, n_k, d_model, d_k, d_v = (int(v) for v in torch.randperm(8, generator=g)[:6] + 2)
        x = torch.randn(B, n_q, d_model, generator=g, dtype=torch.float64)
        memory = torch.randn(B, n_k, d_model, generator=g, dtype=torch.float64)
        W_q, W_k = (torch.randn(d_k, d_model, generator=g, dtype=torch.float64) for _ in range(2))
        W_v = torch.randn(d_v, d_model, generator=g, dtype=torch.float64)
        cases.append((x, memory, W_q, W_k, W_v))
    return cases


@exercise("04.2", hint="queries from x, keys and values from memory, each through its own matrix, which nn.Linear's (out, in) layout stores transposed; then this notebook's attention, with the batch axis riding along.",
          code_hint="q = x @ W_q.T, and k, v the same way from memory; then softmax(q @ k.transpose(-2, -1) / √d_k, dim=-1) @ v.")
def _cross_attend(answer) -> bool | str:
    if not callable(answer):
        return "the answer is the function itself: answer = cross_attend (no brackets)."
    g = torch.Generator().manual_seed(int(torch.randint(2**31, (1,))))
    for x, memory, W_q, W_k, W_v in _cross_attention_cases(g):
        shapes = f"x {tuple(x.shape)}, memory {tuple(memory.shape)}, W_q {tuple(W_q.shape)}, W_v {tuple(W_v.shape)}"
        try:
            got = answer(x.clone(), memory.clone(), W_q.clone(), W_k.clone(), W_v.clone())
        except Exception as err:  # a learner's bug must become a hint, not a crash
            if _right_without_batch(answer, x, memory, W_q, W_k, W_v):
                return (f"your function raised {type(err).__name__} for {shapes}, yet it works on one sequence without "
                        "the batch axis: on a batch, transpose only the last two axes (k.transpose(-2, -1)); .T reverses them all.")
            if _matches(answer, (x, memory, W_q.T, W_k.T, W_v.T), _cross_attention(x, memory, W_q, W_k, W_v)):
                return f"your function raised {type(err).__name__} for {shapes}: the weights are stored (out, in), so x @ W_q does not fit; check each product's shapes."
            return _crash_hint(answer, err, shapes, x, W_q, W_k, W_v)
        if isinstance(got, tuple | list):
            return "return only the output tensor, not a tuple."
        if got is None:
            return "cross_attend returns None: finish the function and return the output."
        got = torch.as_tensor(got, dtype=torch.float64)
        want = _cross_attention(x, memory, W_q, W_k, W_v)
        if got.shape != want.shape:
            if _right_without_batch(answer, x, memory, W_q, W_k, W_v):
                return (f"for {shapes} your output has shape {tuple(got.shape)}, yet the function works on one sequence "
                        "without the batch axis: on a batch, transpose only the last two axes (k.transpose(-2, -1)); .T reverses them all.")
            return f"for {shapes} your output has shape {tuple(got.shape)}; it should be (B, n_q, d_v): one row per query token of x."
        if torch.allclose(got, want, atol=1e-6):
            continue
        if torch.allclose(got, _cross_attention(x, memory, W_q, W_k, W_v, scale=False), atol=1e-6):
            return "close: the scores need dividing by √d_k."
        if torch.allclose(got, _cross_attention(x, memory, W_q, W_k, W_v, by_d_v=True), atol=1e-6):
            return "the scale uses the wrong width: the scores are dot products of queries and keys, whose width is d_k, not d_v."
        if torch.allclose(got, _cross_attention(x, memory, W_q, W_k, W_v, by_d_model=True), atol=1e-6):
            return "the scale uses the tokens' width d_model; the scores are dot products of d_k-wide queries and keys."
        if torch.allclose(got, _cross_attention(x, memory, W_q, W_k, W_v, dim=-2), atol=1e-6):
            return "the softmax runs over the wrong dimension: each query's row must sum to 1 over the keys (dim=-1)."
        if torch.allclose(got, _cross_attention(x, memory, W_q, W_k, W_v, keys_from=x), atol=1e-6):
            return "that is self-attention on x: in cross-attention the keys and values come from memory, the encoder's tokens."
        return False
    return True


def _matches(answer, args, want) -> bool:
    """True if answer(*args) runs and returns `want` (a tuple or an error is a mismatch)."""
    try:
        got = answer(*(a.clone() for a in args))
        got = torch.as_tensor(got, dtype=torch.float64)
        return got.shape == want.shape and torch.allclose(got, want, atol=1e-6)
    except Exception:
        return False


def _crash_hint(answer, err, shapes, x, W_q, W_k, W_v) -> str:
    """The hint for an answer that raised: rerun it with as many memory tokens as queries (n_k = n_q),
    where taking keys or values from x no longer fails on the shapes, and name the source it mixed up."""
    square = torch.randn(x.shape, generator=torch.Generator().manual_seed(7), dtype=x.dtype)  # memory with n_k = n_q
    name = type(err).__name__
    if _matches(answer, (x, square, W_q, W_k, W_v), _cross_attention(x, square, W_q, W_k, W_v, values_from=x)):
        return (f"your function raised {name} for {shapes}: the values come from x, but the weights run over "
                "memory's tokens, one per value: take the values from memory, as the keys.")
    if _matches(answer, (x, square, W_q, W_k, W_v), _cross_attention(x, square, W_q, W_k, W_v, keys_from=x, values_from=square)):
        return (f"your function raised {name} for {shapes}: the keys come from x, so each query meets the other "
                "queries; in cross-attention it meets memory's tokens: take the keys from memory, as the values.")
    if _matches(answer, (x, square, W_q, W_k, W_v), _cross_attention(x, square, W_q, W_k, W_v)):
        return (f"your function raised {name} for {shapes}, yet it is right when memory has as many tokens as x: "
                "somewhere it uses n_q where memory's n_k belongs.")
    if not isinstance(err, RuntimeError):  # torch reports mismatched shapes as RuntimeError; this is another bug
        return f"your function raised {name} ({err}) for {shapes}: fix that line first."
    return (f"your function raised {name} for {shapes}: check each product's shapes. Queries come from x (n_q rows), "
            "keys and values from memory (n_k rows), and the weights are stored (out, in).")


def _right_without_batch(answer, x, memory, W_q, W_k, W_v) -> bool:
    """True if the answer is right on the first sequence alone, 2-D inputs without the batch axis."""
    try:
        got = answer(x[0].clone(), memory[0].clone(), W_q.clone(), W_k.clone(), W_v.clone())
        got = torch.as_tensor(got, dtype=torch.float64)
        want = _cross_attention(x[0], memory[0], W_q, W_k, W_v)
        return got.shape == want.shape and torch.allclose(got, want, atol=1e-6)
    except Exception:
        return False


_DECODER_WIDTH, _ENCODER_WIDTH, _HEAD_WIDTH = 512, 768, 64  # exercise 04.3: a decoder reading ViT-B/16


@exercise("04.3", hint="each matrix maps the width of the tokens it reads to the head's width: which tokens does W_Q read, and which do W_K and W_V read?")
def _cross_attention_params(answer) -> bool | str:
    value = float(answer)
    dec, enc, d_k = _DECODER_WIDTH, _ENCODER_WIDTH, _HEAD_WIDTH
    if value in (dec * d_k, enc * d_k):
        return "that is one matrix; W_Q, W_K and W_V are three."
    if value == 3 * enc * d_k:
        return "W_Q reads the decoder's tokens, not the encoder's: its input width is the decoder's."
    if value == 3 * dec * d_k:
        return "W_K and W_V read the encoder's output, whose width is ViT-B/16's."
    if value == enc * d_k + 2 * dec * d_k:
        return "the widths are swapped: queries come from the decoder, keys and values from the encoder."
    if value in (3 * enc * enc, 3 * dec * dec):
        return "that is a whole layer of d_model-wide projections; the question asks for one head of width 64."
    return value == dec * d_k + 2 * enc * d_k


def _things_and_agents():
    """The word table, its word vectors, its things, and the sentences the checker picks:
    three fixed ones and 40 random ones, each with a thing and an agent among other words."""
    emb = load_toy_embeddings()
    axes = list(emb.axes)
    words = [w for w in emb.vocab if w != emb.pad_token]
    vec = {w: emb.embed(w)[0] for w in words}
    match = [axes.index(a) for a in MATCH_AXES]
    things = [w for w in words if vec[w][axes.index("object")] > 0 and (vec[w][match] > 0).sum() == 1]
    agents = [w for w in words if vec[w][axes.index("living")] > 0]
    g = torch.Generator().manual_seed(7)
    sentences = ["she puts the cup in the bowl", "the cat sat on the mat because it was tired",
                 "the robot picks up the red cup and puts it in the bowl"]

    def pick(pool: list[str], k: int) -> list[str]:
        return [pool[int(i)] for i in torch.randint(len(pool), (k,), generator=g)]

    for _ in range(40):
        chosen = pick(things, 1 + int(torch.randint(2, (1,), generator=g))) + pick(agents, 1) + pick(words, 4)
        order = torch.randperm(len(chosen), generator=g).tolist()
        sentences.append(" ".join(chosen[i] for i in order))
    return emb, vec, things, sentences


@exercise("04.4", hint="a thing's query is its `object` value times one row of W_Q: what should that row look for, and what should it stop looking for?")
def _one_sided_rule(answer) -> bool | str:
    W_q = torch.as_tensor(np.asarray(answer.detach() if isinstance(answer, torch.Tensor) else answer), dtype=torch.float64)
    emb, vec, things, sentences = _things_and_agents()
    emb_axes = list(emb.axes)
    d_model, d_k = len(emb_axes), len(MATCH_AXES)
    if W_q.shape == (d_k, d_model):
        return f"your W_Q has shape {tuple(W_q.shape)}, nn.Linear's (out, in) layout; the formula's layout is (d_model, d_k) = ({d_model}, {d_k})."
    if W_q.shape != (d_model, d_k):
        return f"your W_Q has shape {tuple(W_q.shape)}; it should be (d_model, d_k) = ({d_model}, {d_k})."
    hand = {name: m.double() for name, m in hand_set_weights(emb_axes).items()}
    living, obj = emb_axes.index("living"), emb_axes.index("object")
    for sentence in sentences:
        words = sentence.split()
        x = emb.embed(words).double()
        mine, theirs = (_weights(x, W, hand["W_k"]) for W in (W_q, hand["W_q"]))
        for i, word in enumerate(words):
            if vec[word][obj] == 0 and not torch.allclose(mine[i], theirs[i], atol=1e-5):
                return f"in '{sentence}', the row of '{word}' (object value 0) changed: only words with an object value may attend differently."
            if word in things:
                agents = x[:, living] > 0
                best_agent = mine[i][agents].max() if agents.any() else torch.tensor(0.0)
                others = mine[i][~agents].max() if (~agents).any() else torch.tensor(0.0)
                if not best_agent > others + 1e-6:
                    top = words[int(mine[i].argmax())]
                    return f"in '{sentence}', '{word}' gives its largest weight to '{top}', not to an agent."
    return True


def _weights(x: torch.Tensor, W_q: torch.Tensor, W_k: torch.Tensor) -> torch.Tensor:
    """softmax(x W_q (x W_k)ᵀ / √d_k): the (n, n) weights."""
    q, k = x @ W_q, x @ W_k
    return torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1)


# (money, water) of the words of "i went to the bank to fish": every output of "bank" with
# W_V = identity is an average of these with positive weights, so it lies inside their triangle.
_CANDIDATES = {"A": (0.30, 0.45), "B": (0.60, 0.30), "C": (0.40, 0.20), "D": (0.10, 0.70), "E": (0.00, 0.95)}


def _reachable(money: float, water: float) -> bool:
    """Inside the triangle (0, 0), bank (0.5, 0.5), fish (0, 0.9), all three weights positive."""
    on_bank = money / 0.5
    on_fish = (water - money) / 0.9
    return on_bank > 0 and on_fish > 0 and 1 - on_bank - on_fish > 0


@exercise("04.5", hint="an output is an average of the words' (money, water) points with positive weights: draw the points and the polygon they span.")
def _convex_hull(answer) -> bool | str:
    if isinstance(answer, str) and len(answer.strip()) > 1:
        return 'write the letters as a set, such as {"A", "B"}, not as one string.'
    if isinstance(answer, str):
        answer = {answer}
    if not isinstance(answer, set | frozenset | list | tuple):
        return 'give a set of letters, such as {"A", "B"}.'
    given = {str(a).strip().upper() for a in answer}
    if not given <= set(_CANDIDATES):
        return "use only the letters A to E."
    right = {letter for letter, point in _CANDIDATES.items() if _reachable(*point)}
    if given == right:
        return True
    too_big = {letter for letter in given if _CANDIDATES[letter][0] > 0.5 or _CANDIDATES[letter][1] > 0.9}
    if too_big:
        return "an average never exceeds the largest of the numbers averaged: compare each candidate with the words' largest money and water."
    if given - right:
        return "staying within each coordinate's range is not enough: the output must lie inside the polygon the words' (money, water) points span."
    return "some reachable pairs are missing: every point strictly inside the polygon of the words' points can be reached with positive weights."
