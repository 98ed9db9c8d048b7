"""Notebook 08 (position): checkers. None of them prints the expected answer."""

import math

import numpy as np

from helpers.checks import exercise, number, whole_number


@exercise("08.1", hint="count the patches along one side of the image, square it, and remember the extra token ViT prepends.")
def _vit_position_rows(answer):
    value = whole_number(answer)
    patches = (336 // 14) ** 2
    if value == patches:
        return "that is the number of patches; the table also needs a row for the [CLS] token."
    if value == (224 // 14) ** 2 + 1:
        return "that is the table of the same model at 224 px; this one reads 336 × 336 images."
    if value in ((336 // 16) ** 2 + 1, (224 // 16) ** 2 + 1):
        return "the patches of this model are 14 pixels wide, not 16."
    return value == patches + 1


@exercise("08.2", hint="without positions the outputs move with their tokens: find where old token 1 went in perm2.")
def _where_did_dog_go(answer):
    perm2 = [3, 0, 4, 1, 2]
    value = float(answer)
    if value == perm2[1]:
        return "perm2[1] is the old token now at position 1; you want the new position j with perm2[j] == 1."
    return value == perm2.index(1)


def _pe_row(p: int, d_model: int) -> np.ndarray:
    omega = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    row = np.empty(d_model)
    row[0::2], row[1::2] = np.sin(p * omega), np.cos(p * omega)
    return row


def _pe_dot(p: int, r: int, d_model: int, speeds=None, angle=np.cos) -> float:
    """PE[p] · PE[r] written as section 2's sum over pairs, Σ_i angle((r − p) · ω_i)."""
    omega = 10000.0 ** (-np.arange(0, d_model, 2) / d_model) if speeds is None else speeds
    return float(np.sum(angle((r - p) * omega)))


@exercise(
    "08.3",
    hint="the dot product depends only on the distance Δ between the two positions: add cos(Δ · ω_i) over the "
    "three pairs, each at its own speed ω_i = 10000^(−2i/d_model), angles in radians.",
    code_hint="omega = 10000.0 ** (-np.arange(0, 6, 2) / 6); then add up np.cos(delta * omega)",
)
def _pe_dot_by_hand(answer):
    value = number(answer)
    want = float(_pe_row(5, 6) @ _pe_row(8, 6))
    if abs(value - want) <= 1e-4:  # the question asks for 4 decimals, within 0.0001
        return True
    if abs(value - want) <= 5e-3:
        return "right to 2 or 3 decimals; give 4 (the question accepts 0.0001 at most)."
    if value == 3:
        return "that is a position with itself (Δ = 0: every cosine is 1); here the positions are apart."
    omega = 10000.0 ** (-np.arange(0, 6, 2) / 6)
    mistakes = {
        "sin(a) sin(b) + cos(a) cos(b) is the cosine of the difference, cos(a − b): add cosines, not sines.":
            _pe_dot(5, 8, 6, angle=np.sin),
        "the identity takes the distance between the positions, 8 − 5, not their sum.": _pe_dot(0, 13, 6),
        "ω_i = 10000^(−2i/d_model): the exponent counts the dimensions 0, 2, 4, not the pairs 0, 1, 2.":
            _pe_dot(5, 8, 6, speeds=10000.0 ** (-np.arange(3) / 6)),
        "the angles Δ · ω_i are in radians, not degrees.": _pe_dot(5, 8, 6, speeds=np.deg2rad(omega)),
        "d_model = 6 holds three (sin, cos) pairs, so the sum has three terms.":
            _pe_dot(5, 8, 6, speeds=10000.0 ** (-2 * np.arange(6) / 6)),
    }
    for hint, wrong in mistakes.items():
        if abs(value - wrong) <= 5e-3:
            return hint
    return False


@exercise(
    "08.4",
    hint="find the speed ω of the last pair in radians per position (which i is the last pair when d_model = 512?); "
    "one full turn is 2π radians.",
    code_hint="the last pair is i = 255: omega = 10000 ** (-2 * 255 / 512); a turn takes 2 * math.pi / omega positions",
)
def _slowest_wavelength(answer):
    omega_last = 10000.0 ** (-(512 - 2) / 512)
    want = 2 * math.pi / omega_last
    value = float(answer)
    if math.isclose(value, 1 / omega_last, rel_tol=0.01):
        return "that is 1/omega, the positions per radian; a full turn is 2π radians."
    if math.isclose(value, 2 * math.pi * 10000, rel_tol=0.005):
        return "that is 2π/ω for i = d_model/2; the last pair is i = d_model/2 − 1."
    return math.isclose(value, want, rel_tol=0.01)


def _one_pair_scores(query_position: int, n_keys: int) -> np.ndarray:
    """RoPE scores (R_p q) · (R_r k) for d_k = 2 (θ_0 = 1), q = k = (1, 0), keys at r = 0 .. n_keys-1."""
    r = np.arange(n_keys)
    return np.cos(r - query_position)


@exercise("08.5", hint="with one pair and q = k = (1, 0) the score is the cosine of the angle between the two rotations, (r − p)·θ_0; compute it for every key position r and compare.")
def _rope_one_pair(answer):
    value = whole_number(answer)
    scores = _one_pair_scores(5, 41)
    best = int(np.argmax(np.where(np.arange(41) == 5, -np.inf, scores)))  # the query's own position does not count
    if value == best:
        return True
    if value == 5:
        return "r = 5 is the query's own position, which the question leaves out."
    if value == best - 5:
        return "that is the offset r − p; the question asks for the key position r."
    if value == int(np.argmin(scores)):
        return "that key gives the *smallest* score (the two vectors point opposite ways); look for the largest."
    if 0 <= value < len(scores) and scores[value] > 0.95:
        return "close to a full turn, but another key position in 0 .. 40 comes closer still: compare them all."
    if not 0 <= value < len(scores):
        return "the keys sit at positions 0 to 40."
    return False
