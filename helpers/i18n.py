"""The language of everything ``helpers`` says: English, or Korean in the Korean edition.

A setting, not a second copy of the checkers, plots or widgets. The language is, in this order:
the ``ATTENTION_LAB_LANG`` environment variable when it is set (an override); else what the
notebook says in its first code cell, ``helpers.set_language("ko")`` (so a Korean notebook
speaks Korean wherever it runs: Colab's /content, VS Code, any folder); else Korean when the
kernel runs in ``notebooks/ko/``; else English. It is read each time a message, a figure or a
widget is made, so :func:`set_language` takes effect for everything made after it.

Korean text comes from ``helpers/locale/ko.json``, keyed by the English text as written in
the source: a plain string, or an f-string whose ``{...}`` fields are kept as placeholders
(``"your mask has shape {got.shape}; ..."``). A translation's fields are filled by name, so it
may put them in its own word order. What is translated:

- checker feedback (``helpers/checks.py`` and ``helpers/exercises/``: what checkers return or
  raise, ``hint=`` arguments, tables of hints), found in the source;
- everywhere else in ``helpers``, strings marked ``_("...")`` (translated where they are made:
  figure titles, axis labels, control labels, errors) or ``N_("...")`` (marked only, translated
  where they are shown, e.g. a readout's name, which code also uses as a key).

:func:`message_templates` finds every such message, so a test can tell when a message has no
translation or a translation has lost its message.
"""

from __future__ import annotations

import ast
import json
import os
import re
from functools import cache, lru_cache
from pathlib import Path

LANGUAGES = ("en", "ko")
ENV = "ATTENTION_LAB_LANG"
PACKAGE = Path(__file__).resolve().parent
LOCALE = PACKAGE / "locale"
FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")  # a template's {field}, skipping {{ and }}

_chosen: str | None = None


def set_language(language: str | None) -> None:
    """Say this notebook's language, "en" or "ko" (every notebook's first code cell does);
    None goes back to the automatic choice. ``ATTENTION_LAB_LANG``, when set, still wins."""
    global _chosen
    if language is not None and language not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {language!r}")
    _chosen = language


def language() -> str:
    """The language helpers speak now: "en" or "ko"."""
    from_env = os.environ.get(ENV, "").strip().lower()
    if from_env:
        return from_env if from_env in LANGUAGES else "en"
    if _chosen is not None:
        return _chosen
    here = Path.cwd()
    in_korean_edition = here.name == "ko" or (here.name == "solutions" and here.parent.name == "ko")
    return "ko" if in_korean_edition else "en"


def N_(message: str) -> str:
    """Mark ``message`` for translation where it is shown, not here: it stays English (e.g. a
    readout's name, which code also uses as a key) and :func:`translate` turns it into the
    learner's language at display time."""
    return message


MARKERS = ("_", "tr", "N_")  # calls that mark a message for translation (_ and tr translate)


# --- finding the messages in the source --------------------------------------


def _template(node: ast.AST) -> str | None:
    """The English template of a string node: the text itself, or an f-string's text with each
    field written as {source}; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace("{", "{{").replace("}", "}}")
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(value.value.replace("{", "{{").replace("}", "}}"))
            else:
                parts.append("{" + _field_source(value) + "}")
        return "".join(parts)
    return None


def _field_source(value: ast.FormattedValue) -> str:
    source = ast.unparse(value.value)
    if value.conversion != -1:
        source += "!" + chr(value.conversion)
    if value.format_spec is not None:
        source += ":" + "".join(str(v.value) for v in value.format_spec.values if isinstance(v, ast.Constant))
    return source


def _is_message(template: str) -> bool:
    """Words a learner reads (at least two words and a letter), not an id, key or format."""
    text = FIELD.sub("", template)
    return len(text.split()) >= 2 and any(ch.isalpha() for ch in text)


def _strings_under(node: ast.AST) -> list[str]:
    inside_fstrings = {id(part) for sub in ast.walk(node) if isinstance(sub, ast.JoinedStr)
                       for part in ast.walk(sub) if part is not sub}
    found = []
    for sub in ast.walk(node):
        template = None if id(sub) in inside_fstrings else _template(sub)
        if template is not None and _is_message(template):
            found.append(template)
    return found


def _messages_in(path: Path) -> list[str]:
    """Messages in one module: what checkers return or raise, ``hint=`` arguments, ``_(...)``
    calls, and module-level tables of strings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Return | ast.Raise) and (node.value if isinstance(node, ast.Return) else node.exc):
            found += _strings_under(node.value if isinstance(node, ast.Return) else node.exc)
        elif isinstance(node, ast.keyword) and node.arg in ("hint", "code_hint"):
            found += _strings_under(node.value)
        elif _is_marker(node):
            found += [t for t in map(_template, node.args) if t]  # _("...") marks a message
    for node in tree.body:  # module-level tables of messages (e.g. one "why" per case)
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Dict | ast.List | ast.Tuple):
            found += [t for t in _strings_under(node.value) if " " in t]
    for node in ast.walk(tree):  # tables of hints inside a checker: {hint: wrong answer, ...}
        if isinstance(node, ast.Dict):
            found += [t for key in node.keys if key is not None for t in _strings_under(key) if " " in t]
    return list(dict.fromkeys(found))


def _is_marker(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "id", None) in MARKERS


def _marked_in(path: Path) -> list[str]:
    """The messages marked ``_("...")`` or ``N_("...")`` in one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [t for node in ast.walk(tree) if _is_marker(node) for t in map(_template, node.args) if t]


def checker_modules() -> list[Path]:
    return [PACKAGE / "checks.py", *sorted((PACKAGE / "exercises").glob("*.py"))]


def message_templates() -> list[str]:
    """Every English message helpers can show: the checkers' feedback (helpers/checks.py and
    helpers/exercises/), then every string marked ``_()`` or ``N_()`` in the other modules
    (plots, widgets, explorers, learner-facing errors)."""
    checkers = checker_modules()
    found = [t for path in checkers for t in _messages_in(path)]
    others = sorted(p for p in PACKAGE.rglob("*.py") if p not in checkers and p.name != "i18n.py")
    found += [t for path in others for t in _marked_in(path)]
    return list(dict.fromkeys(found))


# --- translating a message ----------------------------------------------------------------


def _fields(template: str) -> list[str]:
    """The names of a template's fields (their source text, e.g. ``got.shape``, ``n:.1f``), in
    order, a repeated field as often as it appears."""
    return [m.group(1) for m in FIELD.finditer(template) if m.group(1) is not None]


def _pattern(template: str) -> re.Pattern:
    """A regex for the messages ``template`` makes: one group per distinct field, in order of
    first appearance; a repeated field must repeat its value."""
    parts, last, group = [], 0, {}
    for m in FIELD.finditer(template):
        parts.append(re.escape(template[last:m.start()]))
        if m.group(1) is None:  # {{ or }}
            parts.append(re.escape(m.group(0)[0]))
        elif m.group(1) in group:
            parts.append(f"(?P={group[m.group(1)]})")
        else:
            group[m.group(1)] = f"f{len(group)}"
            parts.append(f"(?P<{group[m.group(1)]}>.*?)")
        last = m.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts), re.DOTALL)


def _fill(template: str, values: dict[str, str]) -> str:
    """``template`` with each field replaced by the value of the field of that name, wherever it
    stands, and ``{{``/``}}`` by a brace; a KeyError names a field ``values`` lacks."""
    return FIELD.sub(lambda m: m.group(0)[0] if m.group(1) is None else values[m.group(1)], template)


@cache
def catalog(lang: str = "ko") -> dict[str, str]:
    """English template -> translated template, from helpers/locale/<lang>.json."""
    path = LOCALE / f"{lang}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


@cache
def _compiled(lang: str) -> list[tuple[re.Pattern, str, str]]:
    entries = [(_pattern(en), en, ko) for en, ko in catalog(lang).items() if _fields(en)]
    return sorted(entries, key=lambda e: -len(FIELD.sub("", e[1])))  # most literal text first


def translate(message: str, lang: str | None = None) -> str:
    """``message`` in ``lang`` (default: :func:`language`); unchanged in English or when the
    catalog has no entry for it. Field values that are messages themselves are translated too."""
    lang = lang or language()
    if lang == "en" or not message or not isinstance(message, str):
        return message
    return _translated(message, lang)


def reload() -> None:
    """Forget the catalogs read so far (after the catalog file changed)."""
    catalog.cache_clear()
    _compiled.cache_clear()
    _translated.cache_clear()


@lru_cache(maxsize=8192)  # a widget asks for the same few labels on every update
def _translated(message: str, lang: str) -> str:
    table = catalog(lang)
    plain = message.replace("{", "{{").replace("}", "}}")
    if plain in table:
        return _fill(table[plain], {})
    for pattern, source, target in _compiled(lang):
        match = pattern.fullmatch(message)
        if match:  # the values by field name, so a translation may put its fields in any order
            values = [_translated(v, lang) if v else v for v in match.groups()]
            return _fill(target, dict(zip(dict.fromkeys(_fields(source)), values, strict=True)))
    return message
