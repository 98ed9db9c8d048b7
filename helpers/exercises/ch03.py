"""Notebook 03 (scaling by √d_k): checkers. None of them prints the expected answer."""

import math

import numpy as np
import torch

from helpers.checks import close, exercise, number

WORKED_Q = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]], dtype=float)
WORKED_K = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0]], dtype=float)
WORKED_V = np.array([[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]], dtype=float)
MIXED_D_K = 96  # exercise 03.1: randn queries, rand keys


def _attention(scale: float) -> np.ndarray:
    scores = WORKED_Q @ WORKED_K.T * scale
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ WORKED_V


@exercise("03.1", hint="redo section 2's argument: a score is a sum of d_k independent products q[c] k[c]; what is the variance of one product when E[q[c]] = 0?",
          code_hint="Var(q[c] k[c]) = E[q[c]²] · E[k[c]²] when E[q[c]] = 0, and for a key entry E[k[c]²] = Var(k[c]) + E[k[c]]².")
def _mixed_variance(answer):
    value = number(answer)
    d_k = MIXED_D_K
    if math.isclose(value, d_k):
        return "that is the answer for unit-variance keys; a uniform [0, 1) entry has E[k[c]²] ≠ 1."
    if math.isclose(value, d_k / 12):
        return "1/12 is the variance of a uniform entry, but the product needs E[k[c]²], which adds the squared mean."
    if math.isclose(value, d_k / 4):
        return "that counts only the squared mean of a key entry; E[k[c]²] also has its variance in it."
    if math.isclose(value, math.sqrt(d_k / 3), rel_tol=1e-3):
        return "that looks like a standard deviation; the question asks for the variance."
    if math.isclose(value, d_k / 3, rel_tol=0.05) and not math.isclose(value, d_k / 3, abs_tol=1e-6):
        return "close: that looks like a measured (Monte-Carlo) variance; the question asks for the exact value."
    return math.isclose(value, d_k / 3, abs_tol=1e-6)


def _reference_query_gradient(Q, K, V, G, scale):
    """∂L/∂Q by autograd, for L with ∂L/∂output = G."""
    q = Q.clone().requires_grad_()
    out = torch.softmax(q @ K.T * scale, dim=-1) @ V
    (grad,) = torch.autograd.grad(out, q, G)
    return grad


@exercise("03.2", hint="three steps of the chain rule, from the output back: to the weights, through each row's softmax Jacobian (notebook 02) to the scores, then to the queries (section 4's formula).",
          code_hint="dA = G @ V.T; row i of dS is J_i @ dA[i] with J_i = diag(a_i) − a_i a_iᵀ; then ∂L/∂Q = scale · dS @ K.")
def _query_gradient(answer):
    if not callable(answer):
        return "the answer is the function itself: answer = query_gradient (no brackets)."
    g = torch.Generator().manual_seed(3)
    for n_q, n_k, d_k, d_v, scale in ((4, 6, 5, 3, 0.4), (1, 3, 2, 2, 1.0), (7, 5, 9, 4, 1 / 3), (3, 3, 16, 8, 0.25)):
        Q, K, V, G = (torch.randn(*shape, generator=g, dtype=torch.float64) * 2
                      for shape in ((n_q, d_k), (n_k, d_k), (n_k, d_v), (n_q, d_v)))
        try:
            with torch.no_grad():  # no autograd, as the task says: .backward() or autograd.grad fails here
                got = answer(Q.clone(), K.clone(), V.clone(), G.clone(), scale)
        except RuntimeError as err:
            if "grad" not in str(err):
                raise
            return ("your function relies on autograd, and the exercise asks you to do the chain rule by hand "
                    "(the checker runs it with autograd switched off): three matrix steps, no backward().")
        if got is None:
            return "query_gradient returns None: finish the function and return ∂L/∂Q."
        got = torch.as_tensor(np.asarray(got.detach() if isinstance(got, torch.Tensor) else got), dtype=torch.float64)
        want = _reference_query_gradient(Q, K, V, G, scale)
        if got.shape != want.shape:
            return f"for Q {tuple(Q.shape)}, K {tuple(K.shape)} your gradient has shape {tuple(got.shape)}; it should have the shape of Q."
        if torch.allclose(got, want, atol=1e-6):
            continue
        if scale != 1.0 and torch.allclose(got * scale, want, atol=1e-6):
            return "close: the scale multiplies every score, so it multiplies the gradient at the query once."
        if scale != 1.0 and torch.allclose(got, want * scale, atol=1e-6):
            return "the scale is applied twice: the query meets it once, in s = scale · q · k."
        p = torch.softmax(Q @ K.T * scale, dim=-1)
        if torch.allclose(got, scale * (p * (G @ V.T)) @ K, atol=1e-6):
            return "the score gradient keeps only the diagonal of the Jacobian: the −a aᵀ part (weights must still sum to 1) is missing."
        return False
    return True


@exercise("03.3", hint="redo section 2's argument with E[q[c]²] = E[k[c]²] = 4: the variance of one product, then d_k independent terms.")
def _variance_sigma(answer):
    value = number(answer)
    if math.isclose(value, 64.0):
        return "64 is the answer for variance 1; here each entry has variance 4, for q and for k."
    if math.isclose(value, 32.0):
        return "that looks like a standard deviation; the question asks for the variance."
    if math.isclose(value, 16.0):
        return ("that is the variance of one product q[c] k[c] (and of the score after dividing by √d_k); "
                "the question asks for the raw score q · k, a sum of d_k such products.")
    if math.isclose(value, 64 * 4):
        return "both the query entry and the key entry have variance 4: the product's variance is 4 · 4."
    if math.isclose(value, 64 * 16, rel_tol=0.05) and not math.isclose(value, 64 * 16, abs_tol=1e-6):
        return "close: that looks like a measured (Monte-Carlo) variance; the question asks for the exact value."
    return math.isclose(value, 64 * 16, abs_tol=1e-6)


@exercise("03.4", hint="the four steps of section 1, with step 2 (the division by √d_k) left out; then look at the largest weight of each row.",
          code_hint="helpers.softmax(scores, axis=-1) normalises each row; the output is weights @ V.")
def _unscaled_output(answer):
    if not isinstance(answer, tuple | list) or len(answer) != 2 or not isinstance(answer[1], str):
        return 'give two things: answer = (the (3, 4) output, "yes" or "no").'
    output, verdict = answer
    got = np.asarray(output.detach().cpu() if hasattr(output, "detach") else output, dtype=float)
    if got.shape == (3, 4) and np.allclose(got, _attention(0.5), atol=6e-3):
        return "that is the scaled output of section 1; the exercise leaves out the division by √d_k."
    if got.shape == (3, 3):
        return "those look like weights (3 × 3); the output is weights @ V, one 4-dim vector per token."
    right = close(got, _attention(1.0))
    if right is False and np.allclose(got, _attention(1.0), atol=6e-3):
        return "nearly: give at least 4 decimals, or pass the computed array itself."
    if right is not True:
        return right
    verdict = verdict.strip().lower()
    if verdict not in ("yes", "no"):
        return 'the second part is "yes" or "no": is any row of weights close to one-hot (largest weight above 0.9)?'
    if verdict == "yes":
        return ("the output is right, but look at the weights themselves: at d_k = 4 the unscaled scores spread "
                "only about √4 = 2, so the harm comes at large d_k (section 4).")
    return True
