"""Auto-checked exercises: ``check("03.2", answer)`` says right or not yet, with a hint.

The feedback is in the language of :mod:`helpers.i18n` (English, or Korean in notebooks/ko/).

A checker never prints the expected answer. Exercises live in ``helpers/exercises/``,
one module per notebook, each registering its checkers with :func:`exercise`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .i18n import translate as _

Checker = Callable[[Any], bool | str]


@dataclass(frozen=True)
class Exercise:
    """One exercise: ``checker(answer)`` returns True, False, or a specific hint (= wrong).

    ``hint`` names the idea; ``code_hint``, if any, is a step closer to code and is shown only
    from the second wrong answer on, so a first attempt is never answered by pasting it.
    """

    exercise_id: str
    hint: str
    checker: Checker
    code_hint: str | None = None


_REGISTRY: dict[str, Exercise] = {}
_WRONG: Counter[str] = Counter()  # wrong answers so far in this kernel, per exercise


def exercise(exercise_id: str, hint: str, code_hint: str | None = None) -> Callable[[Checker], Checker]:
    """Register a checker under ``exercise_id`` (e.g. "03.2" = notebook 03, exercise 2)."""

    def register(checker: Checker) -> Checker:
        if exercise_id in _REGISTRY:
            raise ValueError(f"exercise {exercise_id!r} is registered twice")
        _REGISTRY[exercise_id] = Exercise(exercise_id, hint, checker, code_hint)
        return checker

    return register


def _load_all() -> None:
    from . import exercises

    for module in pkgutil.iter_modules(exercises.__path__):
        importlib.import_module(f"{exercises.__name__}.{module.name}")


def exercises() -> dict[str, Exercise]:
    """Every registered exercise, by id."""
    _load_all()
    return dict(sorted(_REGISTRY.items()))


def evaluate(exercise_id: str, answer: Any, attempt: int = 1) -> tuple[bool, str]:
    """(correct, message) for an answer, without printing. The message never holds the answer.

    ``attempt`` counts wrong answers so far plus one: from the second on, a generic hint also
    gives the exercise's ``code_hint``.
    """
    known = exercises()
    if exercise_id not in known:
        raise ValueError(_(f"unknown exercise {exercise_id!r}; known: {', '.join(known)}"))
    ex = known[exercise_id]
    if answer is ... or answer is None:
        return False, _("Not answered yet: replace the `...` with your answer and run the cell again.")
    try:
        verdict = ex.checker(answer)
    except Exception as exc:  # an answer of the wrong kind must not crash the lesson
        problem = f"{type(exc).__name__}: {_(str(exc))}"
        return False, _(f"Not yet: could not check this answer ({problem}). Hint: {ex.hint}")
    if verdict is True:
        return True, _("Correct!")
    hint, code = (verdict, None) if isinstance(verdict, str) else (ex.hint, ex.code_hint)
    if code and attempt > 1:
        return False, _(f"Not yet. Hint: {hint} One step further: {code}")
    return False, _(f"Not yet. Hint: {hint}")


def check(exercise_id: str, answer: Any) -> None:
    """Check an exercise answer and print ✅ / ❌ with a hint (a closer one from the second
    wrong answer on)."""
    correct, message = evaluate(exercise_id, answer, attempt=_WRONG[exercise_id] + 1)
    _WRONG[exercise_id] += not correct and answer is not ... and answer is not None
    mark = "✅" if correct else "❌"
    print(_(f"{mark} Exercise {exercise_id}: {message}"))


# --- small building blocks for checkers -------------------------------------------


def as_array(answer: Any) -> np.ndarray:
    """A float numpy copy of an answer given as a number, list, array or tensor."""
    if isinstance(answer, torch.Tensor):
        answer = answer.detach().cpu()
    return np.asarray(answer, dtype=float)


def number(answer: Any) -> float:
    """One number out of an answer; a TypeError (shown as a hint) if it is an array."""
    value = as_array(answer)
    if value.shape != ():
        raise TypeError(f"expected one number, got an array of shape {value.shape}")
    return float(value)


def whole_number(answer: Any) -> int:
    """One whole number out of an answer (12 and 12.0 alike)."""
    value = number(answer)
    if value != round(value):
        raise TypeError("expected a whole number")
    return int(value)


def close(answer: Any, expected: Any, *, atol: float = 1e-4, rtol: float = 1e-4) -> bool | str:
    """True if ``answer`` equals ``expected`` numerically (any array kind); else a shape hint."""
    got, want = as_array(answer), as_array(expected)
    if got.shape != want.shape:
        return f"your answer has shape {got.shape}, the question asks for shape {want.shape}."
    return bool(np.allclose(got, want, atol=atol, rtol=rtol))
