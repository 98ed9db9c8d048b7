"""Exercises checked on the page: the data ``website/static/checks.js`` reads, made from the Python checkers.

An exercise is checked on its page when its answer is a value (``EXERCISE_KIND`` "value" in
``scripts/study_time.py``: a number, a shape, a tuple, a set of letters, a few letters) fixed by the
question, and its catalogue in ``tests/test_exercises_chNN.py`` gives its right answer. Nothing is
typed twice: every reply the page can give is the Python checker's own (``helpers.checks.evaluate``,
in the edition's language), computed here at build time, and the page never holds the answer, only
salted SHA-256 hashes (truncated to 48 bits) of the answers it recognises.

Three kinds of answer:

- ``numbers``: one number, or an array of numbers, within a tolerance. The learner's value is put on
  a grid (cell ``k = round(value / h)``): ``h`` is a power of ten at most 1/100 of the band of values
  the checker accepts, so the band's edges are placed to within 1% of its width. For each element,
  every fine cell around the band whose reply is not the generic hint (right, or a hint such as
  "nearly: give more decimals") is hashed with its reply; for a single number, so are the cells of a
  grid 100 times coarser (``COARSE_DIGITS``) over 60 band-widths on either side where the reply is the same across the
  cell. A catalogue answer is hashed whole (every element's cell) with the checker's reply to it.
- ``tokens``: a shape, a tuple of whole numbers, a set of letters, a word, or an exact whole number:
  the answer's canonical text (separators dropped, letters upper-cased, whole numbers as written,
  sorted where the checker ignores order) is hashed. The right answer's forms and every catalogue
  answer are hashed with the checker's reply to them; a whole-number exercise also keeps the
  checker's reply to a fraction, which does not depend on the value.

- ``pair``: numbers and a letter (02.3: three weights, then a choice), checked as the checker
  does: the numbers first (a ``numbers`` part, the letter right), then the letter (a ``tokens``
  part, the numbers right).

Any other value gets the exercise's generic hint, the closer one from the second wrong answer on, as
``check()`` gives it. ``typed(answer)`` is what a learner types for a Python answer; the agreement
test (tests/test_site_checks.py) runs the page's JavaScript on each catalogue answer so typed and
compares its reply with the checker's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib
import importlib.util
import math
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

# Value exercises the page does not check, and why (each other one is a number, a shape, a tuple, a
# set of letters, a few letters or a pair of numbers and a letter, fixed by its question).
LEFT_OUT: dict[str, str] = {
    "03.4": "its answer is an output array computed with code, then a yes or no about it; the checker's hint "
            "reads the form of the second part, which a page of typed numbers cannot tell apart",
}
SEPARATORS = re.compile(r"[\s,;{}()\[\]\"']+")
NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
WHOLE = re.compile(r"^[+-]?\d+$")
FINE_STEPS = 100  # the band holds at least this many cells of the finest grid
SPAN = 1000  # each grid reaches this many of its cells beyond the band on either side
REACH = 10  # the coarsest grid reaches 10 times the answer's size (or the band's) on either side
ARRAY_GRIDS = 3  # an array's elements: the finest grid and two coarser ones
ARRAY_SPAN = 200  # an array's coarsest grid reaches this many of its cells beyond the band
SAMPLES = (-0.49, -0.25, 0.0, 0.25, 0.49)  # where a coarse cell is tried (its centre is 0)


def value_exercises() -> list[str]:
    """The exercises ``scripts/study_time.py`` counts as "value"."""
    spec = importlib.util.spec_from_file_location("study_time", ROOT / "scripts" / "study_time.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("study_time", module)
    spec.loader.exec_module(module)
    return [k for k, kind in module.EXERCISE_KIND.items() if kind == "value"]


@functools.cache
def catalogues() -> dict[str, tuple[list, list]]:
    """Exercise id -> (right answers, wrong answers), as the chapters' tests register them."""
    from tests import exercise_harness

    for module in sorted((ROOT / "tests").glob("test_exercises_ch*.py")):
        importlib.import_module(f"tests.{module.stem}")
    return exercise_harness.CATALOGUES


def site_checked() -> list[str]:
    """The exercises checked on their page: value exercises with a right answer in their catalogue."""
    known = catalogues()
    return [k for k in value_exercises() if k not in LEFT_OUT and known.get(k, ([], []))[0]]


# --- what a learner types, and its canonical text --------------------------------------------


def _plain(answer):
    """A Python answer as plain data: numbers, strings, nested lists; sets sorted."""
    if hasattr(answer, "detach"):
        answer = answer.detach().cpu().numpy()
    if isinstance(answer, np.ndarray | np.generic):
        return answer.tolist()
    if isinstance(answer, set | frozenset):
        return sorted(_plain(a) for a in answer)
    if isinstance(answer, tuple | list) or type(answer).__name__ == "Size":
        return [_plain(a) for a in answer]
    return answer


def _flat(value) -> list:
    return [x for v in value for x in _flat(v)] if isinstance(value, list) else [value]


def _number_text(x) -> str:
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return str(x)
    return repr(float(x))


def typed(answer) -> str | None:
    """What a learner types on the page for ``answer``; None for what cannot be typed (a function)."""
    if callable(answer):
        return None
    value = _plain(answer)
    if isinstance(value, str):
        return value
    items = _flat(value)
    if not all(isinstance(x, int | float | str) for x in items):
        return None
    return ", ".join(x if isinstance(x, str) else _number_text(x) for x in items)


def tokens(text: str) -> list[str]:
    """The words of a typed answer: numbers normalised (whole ones as written, others as Python's
    ``repr`` of the float), the rest upper-cased. website/static/checks.js does the same."""
    out = []
    for word in SEPARATORS.split(text.strip()):
        if not word:
            continue
        if WHOLE.match(word):
            out.append(str(int(word)))
        elif NUMBER.match(word):
            x = float(word)
            out.append(f"{int(x)}.0" if x.is_integer() and abs(x) < 1e21 else repr(x))
        else:
            out.append(word.upper())
    return out


def canonical(text: str, ordered: bool) -> str:
    words = tokens(text)
    return ",".join(words if ordered else sorted(set(words)))


def numbers_of(text: str) -> list[float] | None:
    """The numbers a typed answer holds, or None if a word is not a number."""
    words = [w for w in SEPARATORS.split(text.strip()) if w]
    if not words or not all(NUMBER.match(w) for w in words):
        return None
    return [float(w) for w in words]


def cell(x: float, h: float) -> int:
    """The grid cell of x: ``Math.round(x / h)`` in JavaScript."""
    return math.floor(x / h + 0.5)


def digest(salt: str, preimage: str) -> str:
    return hashlib.sha256(f"{salt}|{preimage}".encode()).hexdigest()[:12]


# --- the checker, called directly -----------------------------------------------------------


@contextlib.contextmanager
def _generic(exercise_id: str) -> Iterator[None]:
    """The exercise with a checker that rejects everything: what evaluate() then says is the
    exercise's generic reply, as helpers.checks formats it."""
    from helpers import checks

    checks.exercises()
    original = checks._REGISTRY[exercise_id]
    checks._REGISTRY[exercise_id] = dataclasses.replace(original, checker=lambda answer: False)
    try:
        yield
    finally:
        checks._REGISTRY[exercise_id] = original


class Replies:
    """The checker's replies to the values of one exercise, in one language: a list of distinct
    messages (index 0: right), the verdict of a value, and the index of its reply."""

    def __init__(self, exercise_id: str, rights: list | None = None, wrap=None) -> None:
        """``wrap`` makes the whole answer from a part of it (a pair's weights, or its letter)."""
        from helpers.checks import evaluate, exercises

        self.id = exercise_id
        self.exercise = exercises()[exercise_id]
        self.rights = rights if rights is not None else catalogues()[exercise_id][0]
        self.wrap = wrap or (lambda answer: answer)
        self.evaluate = lambda exercise_id, answer, attempt=1: evaluate(exercise_id, self.wrap(answer), attempt)
        correct, message = self.evaluate(exercise_id, self.right_value())
        assert correct, f"{exercise_id}: the catalogue's right answer is rejected: {message}"
        self.messages = [message]
        self.index = {message: 0}
        with _generic(exercise_id):
            self.generic = [evaluate(exercise_id, 0, attempt)[1] for attempt in (1, 2)]

    def right_value(self):
        return self.rights[0]

    def verdict(self, answer) -> bool | str | None:
        """True, a hint (str), or None for the generic reply."""
        try:
            verdict = self.exercise.checker(self.wrap(answer))
        except Exception:  # noqa: BLE001 - evaluate() words it
            return self.evaluate(self.id, answer)[1]
        return True if verdict is True else verdict if isinstance(verdict, str) else None

    def reply(self, answer) -> int | None:
        """The index of the checker's reply to ``answer``; None for the generic one."""
        correct, message = self.evaluate(self.id, answer)
        if correct:
            return 0
        return None if message == self.generic[0] else self._add(message)

    def reply_of(self, verdict, answer) -> int | None:
        if verdict is True:
            return 0
        if verdict is None:
            return None
        if verdict not in self.index:
            message = self.evaluate(self.id, answer)[1]
            self.index[verdict] = self._add(message)
        return self.index[verdict]

    def _add(self, message: str) -> int:
        if message not in self.index:
            self.index[message] = len(self.messages)
            self.messages.append(message)
        return self.index[message]


# --- the data of one exercise ---------------------------------------------------------------


def _band(replies: Replies, right: np.ndarray, i: int) -> tuple[float, float] | None:
    """The values of element ``i`` the checker accepts (the others right), or None if only the
    exact value is (a whole number, a shape)."""
    def accepted(x: float) -> bool:
        answer = right.copy()
        answer.flat[i] = x
        return replies.verdict(answer if answer.ndim else float(answer)) is True

    r = float(right.flat[i])
    tiny = max(abs(r), 1.0) * 1e-12
    if not (accepted(r + tiny) and accepted(r - tiny)):
        return None
    edges = []
    for sign in (1, -1):
        inside, step = tiny, tiny
        while accepted(r + sign * step * 2) and step < 1e15:
            step *= 2
            inside = step
        outside = step * 2
        for _ in range(80):
            middle = (inside + outside) / 2
            inside, outside = (middle, outside) if accepted(r + sign * middle) else (inside, middle)
        edges.append(r + sign * inside)
    return edges[1], edges[0]


def _numbers_kind(replies: Replies, right) -> dict | None:
    """The ``numbers`` data, or None when the answer is exact (then it is a ``tokens`` one)."""
    plain = _plain(right)
    if isinstance(plain, str) or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in _flat(plain)):
        return None
    array = np.asarray(plain, dtype=float)
    bands = [_band(replies, array, i) for i in range(array.size)]
    if any(b is None for b in bands):
        return None
    e = min(math.floor(math.log10((hi - lo) / FINE_STEPS)) for lo, hi in bands)
    size = max(max(abs(lo), abs(hi), hi - lo) for lo, hi in bands)
    grids = 1
    while SPAN * 10.0 ** (e + grids - 1) < REACH * size:
        grids += 1
    grids = min(grids, ARRAY_GRIDS) if array.ndim else grids
    return {"shape": list(array.shape), "h": [10.0 ** (e + j) for j in range(grids)], "bands": bands, "array": array}


def _pair(answer) -> tuple | None:
    """(numbers, letter) if the answer is such a pair (02.3: three weights and a choice)."""
    if isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[1], str) and not isinstance(answer[0], str):
        return answer
    return None


def exercise_data(exercise_id: str, salt_seed: str = "attention-lab") -> dict:
    """What the page needs to check one exercise (in the current language of helpers.i18n). A pair
    is checked as the checker does, its numbers first, then, with them right, its letter."""
    rights, wrongs = catalogues()[exercise_id]
    salt = hashlib.sha256(f"{salt_seed}|{exercise_id}".encode()).hexdigest()[:16]
    pair = _pair(rights[0])
    if not pair:
        return {"id": exercise_id, **_data(Replies(exercise_id), rights, wrongs, salt)}
    numbers, letter = pair
    pairs = [w for w in wrongs if _pair(w)]
    first = Replies(exercise_id, [r[0] for r in rights if _pair(r)], wrap=lambda part: (part, letter))
    second = Replies(exercise_id, [letter], wrap=lambda part: (numbers, part))
    right_numbers = {typed(r[0]) for r in rights if _pair(r)}
    return {
        "id": exercise_id, "kind": "pair", "generic": first.generic,
        "unpaired": _unpaired(exercise_id, numbers),
        "parts": [_data(first, first.rights, _rounded_too([w[0] for w in pairs if w[1] == letter]), salt + "|0"),
                  _data(second, second.rights, [w[1] for w in pairs if typed(w[0]) in right_numbers], salt + "|1")],
    }


def _rounded_too(wrongs: list) -> list:
    """Each wrong catalogue array and its forms rounded to 0..8 decimals, as a learner may type it
    (02.3: softmax([10, 20, 30]) typed as 0, 0, 1 gets that answer's own hint, as in Python)."""
    out = []
    for wrong in wrongs:
        out.append(wrong)
        if isinstance(wrong, np.ndarray) and wrong.dtype.kind == "f" and np.isfinite(wrong).all():
            out += [np.round(wrong, decimals) for decimals in range(9)]
    return out


def _unpaired(exercise_id: str, numbers) -> str:
    """The checker's reply to numbers alone, without the letter of the pair."""
    from helpers.checks import evaluate

    return evaluate(exercise_id, numbers)[1]


def _data(replies: Replies, rights: list, wrongs: list, salt: str) -> dict:
    """The data of one answer (or one part of a pair): see the module docstring."""
    cells: dict[str, int] = {}
    numbers = _numbers_kind(replies, rights[0])
    data: dict = {"salt": salt}
    if numbers:
        array, steps = numbers["array"], numbers["h"]
        scalar = array.ndim == 0
        data.update(kind="numbers", shape=numbers["shape"], h=steps)
        for i, (lo, hi) in enumerate(numbers["bands"]):

            def at(x: float, i=i):
                answer = array.copy()
                answer.flat[i] = x
                return answer if not scalar else float(answer)

            verdict_of = functools.cache(lambda x, at=at: replies.verdict(at(x)))

            h0, top = steps[0], len(steps) - 1
            near = {verdict_of(k * h0) for k in range(cell(lo, h0) - 30, cell(hi, h0) + 31)}

            def visit(level: int, k: int, at=at, near=near, i=i, verdict_of=verdict_of, lo=lo, hi=hi) -> None:
                """Store cell k of grid ``level`` if the reply is the same across it, else its finer cells."""
                h = steps[level]
                if level == 0:  # the finest grid: the reply at the cell's centre
                    verdict = verdict_of(k * h)
                else:
                    seen = {verdict_of((k + f) * h) for f in SAMPLES}
                    if len(seen) > 1 or (k - 1) * h <= hi and lo <= (k + 1) * h:  # mixed, or at the band
                        for finer in range(10 * k - 5, 10 * k + 6):  # every finer cell that overlaps it
                            visit(level - 1, finer)
                        return
                    verdict = seen.pop()
                    if not scalar and verdict not in near:
                        verdict = None  # an array's other hints depend on all its elements
                index = replies.reply_of(verdict, at(k * h))
                if index is not None:
                    cells[digest(salt, f"e{i}|{level}|{k}")] = index

            reach = (SPAN if scalar else ARRAY_SPAN) * steps[top]
            for k in range(cell(lo - reach, steps[top]), cell(hi + reach, steps[top]) + 1):
                visit(top, k)
        for answer in wrongs + rights[1:]:
            text = typed(answer)
            values = numbers_of(text) if text is not None else None
            if values is None:
                continue  # a word where numbers are asked: the page says so itself
            index = replies.reply(answer)
            whole = ",".join(str(cell(v, steps[0])) for v in values)
            cells.setdefault(digest(salt, f"all|{len(values)}|{whole}"), -1 if index is None else index)
    else:
        right_text = typed(rights[0])
        reordered = _reordered(rights[0])
        ordered = reordered is None or replies.verdict(reordered) is not True
        data.update(kind="tokens", ordered=ordered)
        forms = [a for a in rights if typed(a) is not None]
        forms += [f for f in map(_as_floats, forms) if f is not None]
        for answer in forms + wrongs:
            text = typed(answer)
            if text is not None:
                index = replies.reply(answer)
                cells.setdefault(digest(salt, "t|" + canonical(text, ordered)), -1 if index is None else index)
        data["fraction"] = _fraction_reply(replies, rights[0])
        assert cells.get(digest(salt, "t|" + canonical(right_text, ordered))) == 0
    data.update(cells=cells, replies=replies.messages, generic=replies.generic)
    return data


def _reordered(answer):
    plain = _plain(answer)
    if isinstance(plain, list) and len(plain) > 1 and len(set(map(str, plain))) > 1:
        return list(reversed(plain))
    return None


def _as_floats(answer):
    """The answer with its whole numbers written as floats (12 -> 12.0), if it has any."""
    plain = _plain(answer)
    if isinstance(plain, bool | str) or not all(isinstance(x, int | float) for x in _flat(plain)):
        return None
    if isinstance(plain, int):
        return float(plain)
    if isinstance(plain, list) and any(isinstance(x, int) for x in _flat(plain)):
        return tuple(float(x) for x in _flat(plain))
    return None


def _fraction_reply(replies: Replies, right) -> int | None:
    """The reply to any fraction for a whole-number answer, when the checker's is the same for two."""
    plain = _plain(right)
    if not isinstance(plain, int) or isinstance(plain, bool):
        return None
    first, second = (replies.reply(plain + d) for d in (0.5, 0.25))
    return (-1 if first is None else first) if first == second else None


def page_data(exercise_ids: list[str], language: str) -> dict:
    """Every site-checked exercise of one page, in ``language``."""
    from helpers import i18n

    i18n.set_language(language)
    try:
        return {k: exercise_data(k) for k in exercise_ids}
    finally:
        i18n.set_language(None)


def fingerprint() -> str:
    """What the checks' data depends on: the checkers and their messages, the catalogues, this module."""
    digest = hashlib.sha256()
    paths = [*(ROOT / "helpers").rglob("*.py"), *(ROOT / "helpers" / "locale").glob("*.json"),
             *(ROOT / "tests").glob("test_exercises_*.py"), ROOT / "tests" / "exercise_harness.py",
             Path(__file__), ROOT / "scripts" / "study_time.py"]
    for path in sorted(paths):
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def publish(site: Path, languages: list[str], cache: Path) -> int:
    """Each chapter page's checks into <site>/<lang>/_checks/<page>.json (cached in ``cache``);
    returns how many exercises the site checks."""
    import json

    from website.pages import checked_on_page, checks_file, docname, edition_notebooks

    ids = site_checked()
    for language in languages:
        stored = cache / f"{language}-{fingerprint()}.json"
        if stored.exists():
            data = json.loads(stored.read_text(encoding="utf-8"))
        else:
            data = page_data(ids, language)
            for old in cache.glob(f"{language}-*.json"):
                old.unlink()
            cache.mkdir(parents=True, exist_ok=True)
            stored.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        wanted = set()
        for notebook in edition_notebooks(language):
            here = checked_on_page(notebook, language)
            if not here:
                continue
            target = site / language / checks_file(docname(notebook, language))
            wanted.add(target.name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps({k: data[k] for k in here}, ensure_ascii=False, separators=(",", ":")),
                              encoding="utf-8")
        for stale in (site / language / "_checks").glob("*.json"):
            if stale.name not in wanted:
                stale.unlink()
    return len(ids)
