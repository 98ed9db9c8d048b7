"""The Korean edition (notebooks/ko/) is complete, current and built from the English one;
its terms follow the glossary; the checkers speak Korean there and English elsewhere.

When an English markdown cell changes, the first test fails and names the notebook and the
cell; `scripts/translations.py` (see CONTRIBUTING.md) exports, stores and rebuilds."""

import importlib
import json
import re
import sys
from pathlib import Path

import pytest

from helpers import i18n
from helpers.checks import evaluate
from tests import exercise_harness

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import translations  # noqa: E402

GLOSSARY = json.loads((ROOT / "i18n" / "ko" / "glossary.json").read_text(encoding="utf-8"))
HANGUL = re.compile(r"[\uac00-\ud7a3]")
UPDATE = ("update it: python scripts/translations.py export -o work.json, translate the listed cells, "
          "then python scripts/translations.py import work.json && python scripts/translations.py build")


def test_every_cell_and_message_is_translated_and_current_and_the_edition_is_built():
    problems = translations.all_problems()
    assert not problems, f"the Korean edition is out of date ({len(problems)}):\n" + "\n".join(
        f"  {p}" for p in problems[:40]) + f"\n{UPDATE}"


def korean_notebooks() -> list[Path]:
    return sorted(translations.EDITION.rglob("*.ipynb"))


def prose(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def without_code(text: str) -> str:
    """Markdown minus code spans, code blocks and maths (they hold English identifiers)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.DOTALL)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$|`[^`\n]*`", " ", text, flags=re.DOTALL)
    return re.sub(r"\]\([^)]*\)", "]", text)  # link targets


def test_there_is_a_korean_twin_of_every_english_notebook():
    english = {translations.rel(p) for p in translations.english_notebooks()}
    korean = {p.relative_to(translations.EDITION).as_posix() for p in korean_notebooks()}
    assert english == korean, f"missing: {sorted(english - korean)}; extra: {sorted(korean - english)}"


@pytest.mark.parametrize("path", korean_notebooks(), ids=lambda p: p.relative_to(translations.EDITION).as_posix())
def test_terms_follow_the_glossary(path):
    text = re.sub(r"\s+", " ", without_code(prose(path)))  # a line break inside a term is a space
    for bad in GLOSSARY["forbidden"]:
        assert bad["text"] not in text, f"{path.name} uses {bad['text']!r}: {bad['why']}"
    terms = sorted(GLOSSARY["terms"], key=lambda t: -len(t["ko"]))
    for term in terms:
        if term.get("first_use_checked", True) is False:
            continue
        masked = text
        for longer in terms:  # 어텐션 inside 셀프 어텐션 is not a use of 어텐션
            if term["ko"] in longer["ko"] and longer is not term:
                for form in sorted([*longer["first"], longer["ko"]], key=len, reverse=True):
                    masked = masked.replace(form, "□" * len(form))
        for form in term["first"]:  # the first-use form may split the term: 인과(causal) 마스크
            masked = masked.replace(form, "\0" + " " * (len(form) - 1))
        uses = [m.start() for m in re.finditer(f"(?<![\uac00-\ud7a3]){re.escape(term['ko'])}|\0", masked)]
        if uses:
            assert masked[uses[0]] == "\0", (
                f"{path.name}: the first use of {term['ko']!r} must carry its English: "
                f"{' or '.join(term['first'])}; it reads {text[uses[0]:uses[0] + 40]!r}")


@pytest.mark.parametrize("path", korean_notebooks(), ids=lambda p: p.relative_to(translations.EDITION).as_posix())
def test_every_prose_cell_is_in_korean(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        text = without_code("".join(cell["source"]))
        if cell["cell_type"] == "markdown" and len(re.findall(r"[A-Za-z]{3,}", text)) > 5:
            assert HANGUL.search(text), f"{path.name} cell {cell['id']} is still in English: {text[:80]!r}"


def exercise_cases() -> list[tuple[str, object, bool]]:
    for module in sorted((ROOT / "tests").glob("test_exercises_ch*.py")):
        try:
            importlib.import_module(f"tests.{module.stem}")
        except Exception:  # that chapter's own test module fails and says why
            continue
    return exercise_harness.ALL_CASES


@pytest.fixture
def korean():
    i18n.set_language("ko")
    yield
    i18n.set_language(None)


@pytest.mark.parametrize("exercise_id, answer, right", exercise_cases(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_checker_feedback_is_korean_in_the_korean_edition(korean, exercise_id, answer, right):
    correct, message = evaluate(exercise_id, answer)
    assert correct == right
    python_error = r"\w+(Error|Exception): [^)]*"  # numpy's or torch's own words, as Python prints them
    words = re.findall(r"[A-Za-z]{4,}", re.sub(rf"`[^`]*`|\w+\(|\w*_\w*|[A-Za-z]\w*\.\w+|{python_error}", " ", message))
    assert HANGUL.search(message), f"{exercise_id}: feedback not in Korean: {message}"
    assert len(words) <= 4, f"{exercise_id}: feedback still reads English: {message}"


def test_checker_feedback_is_english_elsewhere(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(i18n.ENV, raising=False)
    i18n.set_language(None)
    assert i18n.language() == "en"
    correct, message = evaluate("01.1", ...)
    assert not correct and message.startswith("Not answered yet") and not HANGUL.search(message)


def test_the_language_follows_the_folder_or_the_setting(monkeypatch, tmp_path):
    monkeypatch.delenv(i18n.ENV, raising=False)
    (tmp_path / "ko" / "solutions").mkdir(parents=True)
    for folder, expected in [(tmp_path, "en"), (tmp_path / "ko", "ko"), (tmp_path / "ko" / "solutions", "ko")]:
        monkeypatch.chdir(folder)
        assert i18n.language() == expected
    monkeypatch.setenv(i18n.ENV, "en")
    assert i18n.language() == "en"
    i18n.set_language("ko")
    try:
        assert i18n.language() == "ko"
    finally:
        i18n.set_language(None)
    with pytest.raises(ValueError, match="language must be one of"):
        i18n.set_language("fr")


def test_a_template_translates_its_fields_and_nested_messages(monkeypatch):
    table = {"your mask has shape {got.shape}; 5 tokens need a 5 × 5 mask.": "마스크 모양이 {got.shape}입니다.",
             "Not yet. Hint: {hint}": "아직입니다. 힌트: {hint}", "a set {{0, 1}} of keys": "키 집합 {{0, 1}}"}
    monkeypatch.setattr(i18n, "catalog", lambda lang="ko": table)
    i18n._compiled.cache_clear()
    try:
        nested = "Not yet. Hint: your mask has shape (4, 4); 5 tokens need a 5 × 5 mask."
        assert i18n.translate(nested, "ko") == "아직입니다. 힌트: 마스크 모양이 (4, 4)입니다."
        assert i18n.translate("a set {0, 1} of keys", "ko") == "키 집합 {0, 1}"
        assert i18n.translate("a message nobody translated", "ko") == "a message nobody translated"
        assert i18n.translate(nested, "en") == nested
    finally:
        i18n._compiled.cache_clear()


def test_every_korean_template_keeps_the_fields_of_its_english():
    for en, ko in i18n.catalog("ko").items():
        assert sorted(i18n._fields(en)) == sorted(i18n._fields(ko)), f"fields differ: {en!r} -> {ko!r}"
