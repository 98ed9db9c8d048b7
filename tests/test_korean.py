"""The Korean edition (notebooks/ko/) is complete, current and built from the English one;
its code is the English code with only comments and strings translated; it says its language
itself; its terms follow the glossary everywhere a learner reads; helpers speak Korean there
(checkers, figures, widgets, errors), with Hangul drawn, and English elsewhere.

When an English cell changes, the first test fails and names the notebook and the cell;
`scripts/translations.py` (see CONTRIBUTING.md) exports, stores and rebuilds."""

import ast
import importlib
import io
import json
import re
import subprocess
import sys
import tokenize
import warnings
from collections import Counter
from pathlib import Path

import matplotlib
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from helpers import fonts, i18n
from helpers.checks import evaluate
from helpers.explorers.heads import heads_explorer
from tests import exercise_harness

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import translations  # noqa: E402

GLOSSARY = json.loads((ROOT / "i18n" / "ko" / "glossary.json").read_text(encoding="utf-8"))
HANGUL = re.compile(r"[\uac00-\ud7a3]")
UPDATE = ("update it: python scripts/translations.py export -o work.json, translate the listed cells, "
          "then python scripts/translations.py import work.json && python scripts/translations.py build")


def test_every_cell_and_message_is_translated_and_current_and_the_edition_is_built():
    problems = translations.blocking(translations.all_problems())
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


def code_text(source: str) -> str:
    """What a learner reads in a code cell: its comments and the text of its strings."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(translations.python_source(source)).readline):
        if tok.type == tokenize.COMMENT:
            found.append(tok.string.lstrip("# "))
        elif tok.type == tokenize.STRING:
            found.append(re.sub(r"\{[^{}]*\}", " ", tok.string))  # an f-string's fields are code
    return " ".join(found)


def readable_text(path: Path) -> str:
    """A Korean notebook as a learner reads it, top to bottom: prose (without code spans and
    maths), code comments and strings."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    parts = [without_code("".join(c["source"])) if c["cell_type"] == "markdown" else code_text("".join(c["source"]))
             for c in cells]
    return re.sub(r"\s+", " ", " ".join(parts))  # a line break inside a term is a space


def forbidden_in(text: str, notebook: str | None = None) -> list[str]:
    """The glossary's rejected renderings found in ``text``, each with the reason (in ``notebook``,
    skipping the entries still pending there)."""
    found = []
    for bad in GLOSSARY["forbidden"]:
        if notebook in bad.get("pending", ()):
            continue
        pattern = bad["text"] if bad.get("regex") else re.escape(bad["text"])
        for match in re.finditer(pattern, text):
            found.append(f"{match.group(0)!r} in ...{text[max(0, match.start() - 25):match.end() + 25]}...: {bad['why']}")
    return found


def test_the_glossary_is_well_formed():
    for bad in GLOSSARY["forbidden"]:
        re.compile(bad["text"] if bad.get("regex") else re.escape(bad["text"]))
        assert bad["why"], bad
    for term in GLOSSARY["terms"]:
        assert term["first"] and all(term["ko"].split()[0] in form or "(" in form for form in term["first"]), term


def test_helpers_messages_follow_the_glossary_and_the_style():
    """Checker feedback, figure text, widget labels and errors: glossary terms, whole sentences
    (no "그것은", no colon joining two sentences), no particle glued to a placeholder."""
    problems = []
    for en, ko in i18n.catalog("ko").items():
        plain = re.sub(r"`[^`]*`", " ", ko)
        problems += [f"{en!r}: {p}" for p in forbidden_in(plain)]
        if "그것은" in ko:
            problems.append(f"{ko!r}: write 그 값은 / 그 답은 / 그 마스크는, not 그것은")
        if re.search(r"(니다|세요|까요)\s*:", ko):
            problems.append(f"{ko!r}: a sentence ends with a colon; end it with a full stop")
        if re.search(r"\}(을|를|이|가|은|는|과|와|으로|로)(?![\uac00-\ud7a3])", ko):
            problems.append(f"{ko!r}: a particle whose form depends on the word is glued to a placeholder")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", korean_notebooks(), ids=lambda p: p.relative_to(translations.EDITION).as_posix())
def test_terms_follow_the_glossary(path):
    found = forbidden_in(readable_text(path), path.name)  # prose, code comments and strings
    assert not found, f"{path.name}:\n" + "\n".join(found)
    text = re.sub(r"\s+", " ", without_code(prose(path)))  # glosses belong in the prose
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


def test_the_language_follows_the_notebook_then_the_folder_and_the_variable_overrides(monkeypatch, tmp_path):
    monkeypatch.delenv(i18n.ENV, raising=False)
    (tmp_path / "ko" / "solutions").mkdir(parents=True)
    for folder, expected in [(tmp_path, "en"), (tmp_path / "ko", "ko"), (tmp_path / "ko" / "solutions", "ko")]:
        monkeypatch.chdir(folder)
        assert i18n.language() == expected
    try:
        i18n.set_language("en")  # what an English notebook says, even in a folder named ko
        assert i18n.language() == "en"
        monkeypatch.chdir(tmp_path)
        i18n.set_language("ko")  # what a Korean notebook says, wherever it runs
        assert i18n.language() == "ko"
        monkeypatch.setenv(i18n.ENV, "en")  # the override
        assert i18n.language() == "en"
    finally:
        i18n.set_language(None)
    with pytest.raises(ValueError, match="language must be one of"):
        i18n.set_language("fr")


def test_a_template_translates_its_fields_and_nested_messages(monkeypatch):
    table = {"your mask has shape {got.shape}; 5 tokens need a 5 × 5 mask.": "마스크 모양이 {got.shape}입니다.",
             "Not yet. Hint: {hint}": "아직입니다. 힌트: {hint}", "a set {{0, 1}} of keys": "키 집합 {{0, 1}}",
             "{a} in {{{b}}}, {a} again": "{{{b}}} 안의 {a}, 다시 {a}", "{a} or {b}": "{a} 또는 {c}"}
    monkeypatch.setattr(i18n, "catalog", lambda lang="ko": table)
    i18n._compiled.cache_clear()
    i18n._translated.cache_clear()
    try:
        nested = "Not yet. Hint: your mask has shape (4, 4); 5 tokens need a 5 × 5 mask."
        assert i18n.translate(nested, "ko") == "아직입니다. 힌트: 마스크 모양이 (4, 4)입니다."
        assert i18n.translate("a set {0, 1} of keys", "ko") == "키 집합 {0, 1}"
        assert i18n.translate("x in {y, z}, x again", "ko") == "{y, z} 안의 x, 다시 x"  # by name, braces kept
        assert i18n.translate("x in {y}, w again", "ko") == "x in {y}, w again"  # a repeated field repeats its value
        with pytest.raises(KeyError, match="'c'"):  # a Korean field the English lacks is an error, not a guess
            i18n.translate("x or y", "ko")
        assert i18n.translate("a message nobody translated", "ko") == "a message nobody translated"
        assert i18n.translate(nested, "en") == nested
    finally:
        i18n._compiled.cache_clear()
        i18n._translated.cache_clear()


def test_every_korean_template_keeps_the_fields_of_its_english():
    """The same field names, each as often as in the English (a multiset, not a set): a Korean
    field is filled by its name, so a name the English lacks has no value, and a field the
    English repeats (``(B, 3, {IMAGE}, {IMAGE})``) must be shown as often in the Korean."""
    for en, ko in i18n.catalog("ko").items():
        english, korean = Counter(i18n._fields(en)), Counter(i18n._fields(ko))
        assert english == korean, (f"fields differ: {en!r} -> {ko!r}: Korean lacks {sorted((english - korean).elements())}"
                                   f", has extra {sorted((korean - english).elements())}")


def render(template: str, values: dict[str, str]) -> str:
    """``template`` with each field replaced by its value, by name (this test's own filling, so
    the test does not trust the code it checks)."""
    return i18n.FIELD.sub(lambda m: m.group(0)[0] if m.group(1) is None else values[m.group(1)], template)


def test_every_translated_message_puts_each_value_in_the_slot_of_its_field():
    """Each English template rendered with a distinct value per field (⟨v0⟩, ⟨v1⟩, ...) comes
    out as the Korean template rendered with the same values: every value there, in the slot of
    its own field, even where Korean word order moves the fields."""
    wrong = []
    for en, ko in i18n.catalog("ko").items():
        values = {name: f"⟨v{i}⟩" for i, name in enumerate(dict.fromkeys(i18n._fields(en)))}
        if values:
            got, expected = i18n.translate(render(en, values), "ko"), render(ko, values)
            missing = [v for v in values.values() if v not in got]
            if got != expected:
                wrong.append(f"{en!r}: got {got!r}, expected {expected!r}" + (f", lost {missing}" if missing else ""))
    assert not wrong, f"{len(wrong)} messages put values in the wrong fields:\n" + "\n".join(wrong)


def test_the_heads_readout_and_errors_keep_their_numbers_in_place(korean):
    """The 06 explorer's readout said "h = 0 가운데 4번" for head 0 of 4 when fields were filled by
    position."""
    assert "{head} of h = {num_heads}" in i18n.catalog("ko")
    assert i18n.translate("0 of h = 4", "ko") == "h = 4 가운데 0번"
    assert heads_explorer(num_heads=8, head=7).readouts["head"] == "h = 8 가운데 7번"
    assert i18n.translate("3 key-labels given for 5 key-positions", "ko") == "key-위치 5개에 key-레이블이 3개 주어졌습니다."


# --- the code of the two editions is one code ----------------------------------------------


class MaskText(ast.NodeTransformer):
    """Replace what a translator may change (string literals, and the literal text of f-strings,
    whose fields may change places) by a placeholder; keep the code: f-string fields with their
    format specs, dictionary keys looked up (``d["key"]``) and the exercise id of
    ``check("03.1", ...)``."""

    def visit_Constant(self, node):
        return ast.Constant("…") if isinstance(node.value, str) else node

    def visit_JoinedStr(self, node):
        """The fields of an f-string, in any order (a translation may reorder them)."""
        fields = sorted((self.visit_field(v) for v in node.values if not isinstance(v, ast.Constant)), key=ast.dump)
        return ast.JoinedStr([ast.Constant("…"), *fields])

    def visit_field(self, node: ast.FormattedValue):
        return ast.FormattedValue(self.visit(node.value), node.conversion, node.format_spec)

    def visit_Subscript(self, node):
        return node  # d["key"]: a key is code

    def visit_Call(self, node):
        if getattr(node.func, "id", None) == "check" and node.args:
            node.args[1:] = [self.visit(a) for a in node.args[1:]]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node
        return self.generic_visit(node)


def code_shape(source: str) -> str:
    """The code of a cell with its comments and translatable text masked: what may never differ."""
    return ast.dump(MaskText().visit(ast.parse(translations.python_source(source))))


def tool_lines(source: str) -> list[str]:
    """Lines the tools read, which a translation must keep: IPython magics and # NBVAL_ markers."""
    return [line.strip() for line in source.split("\n") if re.match(r"\s*([!%]|#\s*NBVAL_)", line)]


def twins() -> list[tuple[Path, Path]]:
    return [(p, translations.edition_path(p)) for p in translations.english_notebooks()]


@pytest.mark.parametrize("english, korean", twins(), ids=lambda p: translations.rel(p) if "/ko/" not in str(p) else "")
def test_korean_code_is_the_english_code_with_only_comments_and_strings_translated(english, korean):
    en_cells = json.loads(english.read_text(encoding="utf-8"))["cells"]
    ko_cells = json.loads(korean.read_text(encoding="utf-8"))["cells"]
    assert [(c["id"], c["cell_type"]) for c in en_cells] == [(c["id"], c["cell_type"]) for c in ko_cells], (
        f"{korean.name}: cells (ids, types) differ from the English; run translations.py build")
    for en, ko in zip(en_cells, ko_cells, strict=True):
        where = f"{translations.rel(english)} cell {en['id']}"
        assert en["metadata"].get("tags", []) == ko["metadata"].get("tags", []), f"{where}: tags differ"
        if en["cell_type"] != "code":
            continue
        en_src, ko_src = "".join(en["source"]), "".join(ko["source"])
        assert tool_lines(en_src) == tool_lines(ko_src), f"{where}: magics or NBVAL markers differ"
        assert code_shape(en_src) == code_shape(ko_src), (
            f"{where}: the Korean code differs from the English in more than comments and strings")


def test_the_code_comparison_sees_code_changes_and_ignores_translations():
    english = 'x = f"{n:.2f} tokens"  # a count\nprint("mean", x, d["key"])\ncheck("03.1", x)'
    korean = 'x = f"토큰 {n:.2f}개"  # 개수\nprint("평균", x, d["key"])\ncheck("03.1", x)'
    assert code_shape(english) == code_shape(korean)
    for changed in ('x = f"{n:.3f} tokens"', 'print("mean", x, d["k"])', 'check("03.2", x)', 'x = f"{m:.2f} tokens"'):
        line = changed.split("(")[0].split("=")[0].strip()
        drifted = "\n".join(changed if row.startswith(line) else row for row in english.split("\n"))
        assert code_shape(drifted) != code_shape(english), changed


# A float as a notebook prints it: 0.24, .5, 1.2e-07, 3e+02 (never a bare whole number, whose form
# Korean sentences may change: "four heads" / "헤드 4개").
FLOAT = re.compile(r"\d*\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+")
# A large count in the learner's units (helpers.text.count): "2.15 B", "67 M" / "21.5억", "6,700만".
COUNT = re.compile(r"(\d[\d,]*(?:\.\d+)?)(?: ([BM])\b|(억|만) 개)")  # a Korean count says 개: not 0.4만큼, 2만 5천
COUNT_UNITS = {"B": 10**9, "M": 10**6, "억": 10**8, "만": 10**4}


def counts_and_floats(text: str) -> tuple[Counter, Counter]:
    """The counts a text prints, as whole numbers (2.15 B and 21.5억 are both 2150000000), and
    the floats it prints besides them."""
    counts = Counter(round(float(m[1].replace(",", "")) * COUNT_UNITS[m[2] or m[3]]) for m in COUNT.finditer(text))
    return counts, Counter(FLOAT.findall(COUNT.sub(" ", text)))


def nbval_checks(cell: dict) -> bool:
    """Whether nbval compares this code cell's stored output (no ignore or skip marker)."""
    markers = {"nbval-ignore-output", "nbval-skip"} & set(cell["metadata"].get("tags", []))
    return not markers and not re.search(r"#\s*NBVAL_(IGNORE_OUTPUT|SKIP)", "".join(cell["source"]))


def printed_text(cell: dict) -> str:
    """The text a code cell's stored outputs show (streams, plain results, errors; not pictures)."""
    parts = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if output["output_type"] == "stream":
            parts.append("".join(output["text"]))
        elif output["output_type"] == "error":
            parts.append(f"{output['ename']}: {output['evalue']}")
        elif "text/plain" in data and not {"image/png", "application/vnd.jupyter.widget-view+json"} & set(data):
            parts.append("".join(data["text/plain"]))
    return "\n".join(parts)


@pytest.mark.parametrize("english, korean", twins(), ids=lambda p: translations.rel(p) if "/ko/" not in str(p) else "")
def test_korean_outputs_print_the_english_floats(english, korean):
    """Every float a Korean cell prints is one its English twin prints, and as often. With the code
    equal (the test above), this is why `make test-portable` re-runs the English notebooks alone:
    a CPU that changed a Korean output would change the English one too."""
    en_cells = json.loads(english.read_text(encoding="utf-8"))["cells"]
    ko_cells = json.loads(korean.read_text(encoding="utf-8"))["cells"]
    compared = 0
    for index, (en, ko) in enumerate(zip(en_cells, ko_cells, strict=True)):
        if en["cell_type"] != "code" or not nbval_checks(en):
            continue
        (en_counts, en_floats), (ko_counts, ko_floats) = counts_and_floats(printed_text(en)), counts_and_floats(printed_text(ko))
        assert en_counts == ko_counts, (
            f"{translations.rel(korean)} cell {index}: counts only in English {sorted((en_counts - ko_counts).elements())}, "
            f"only in Korean {sorted((ko_counts - en_counts).elements())}")
        assert en_floats == ko_floats, (
            f"{translations.rel(korean)} cell {index}: floats only in English {sorted((en_floats - ko_floats).elements())}, "
            f"only in Korean {sorted((ko_floats - en_floats).elements())}; run make notebooks NB={translations.rel(english)}")
        compared += bool(en_floats)
    assert compared or "00_" in english.name, f"{english.name}: no printed float compared (has the output format changed?)"


def test_a_count_is_the_same_number_in_either_unit():
    assert counts_and_floats("all 32 layers: 2.15 B of 6.7 B; 67 M, mean 0.24") == counts_and_floats(
        "층 32개 전부: 67억 개 가운데 21.5억 개; 6,700만 개, 평균 0.24")
    assert counts_and_floats("2.15 B")[0] != counts_and_floats("21.6억 개")[0]
    assert counts_and_floats("13.5 GB, 1.1 ms")[0] == Counter()  # a size or a time is no count
    assert counts_and_floats("0.436만큼, 약 2만 5천")[0] == Counter()  # 만큼: "as much as"; a number in words


def test_the_float_comparison_sees_a_changed_digit():
    assert Counter(FLOAT.findall("평균 0.240, 최대 1.2e-07 (헤드 4개)")) == Counter(FLOAT.findall("mean 0.240, max 1.2e-07 (4 heads)"))
    assert Counter(FLOAT.findall("평균 0.241")) != Counter(FLOAT.findall("mean 0.240"))
    timing = {"metadata": {"tags": ["nbval-ignore-output"]}, "source": ["x = 1"]}
    assert not nbval_checks(timing) and not nbval_checks({"metadata": {}, "source": ["# NBVAL_IGNORE_OUTPUT\n"]})
    assert nbval_checks({"metadata": {"tags": ["answer"]}, "source": ["print(x)"]})


# --- each notebook says its language, so it speaks it anywhere -------------------------------


def first_code_cell(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "".join(next(c for c in cells if c["cell_type"] == "code")["source"])


@pytest.mark.parametrize("english, korean", twins(), ids=lambda p: translations.rel(p) if "/ko/" not in str(p) else "")
def test_every_notebook_says_its_language_in_its_first_code_cell(english, korean):
    assert translations.LANGUAGE_CALL.format("en") in first_code_cell(english)
    assert translations.LANGUAGE_CALL.format("ko") in first_code_cell(korean)


def test_a_korean_notebook_speaks_korean_from_any_folder(tmp_path):
    """Colab runs notebooks in /content, VS Code wherever it was opened: the first cell, not the
    folder, sets the language. Run the Korean 03's first cell from a folder that is not ko/."""
    setup = first_code_cell(translations.EDITION / "03_scaling_sqrt_dk.ipynb")
    code = translations.python_source(setup) + "\nfrom helpers import check\ncheck('03.1', ...)\n"
    env = {k: v for k, v in __import__("os").environ.items() if k != i18n.ENV}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "❌ 연습문제 03.1" in done.stdout and HANGUL.search(done.stdout), done.stdout


def test_the_colab_steps_are_the_same_in_both_readmes_and_in_every_install_help():
    def colab_block(readme: str) -> list[str]:
        section = readme.split("**Colab.**", 1)[1]
        return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1).strip().split("\n")

    english = colab_block((ROOT / "README.md").read_text(encoding="utf-8"))
    korean = colab_block((ROOT / "README.ko.md").read_text(encoding="utf-8"))
    assert english == korean
    for _, twin in twins():
        help_text = first_code_cell(twin)
        for line in english:
            assert line.replace(" -q", "").split("<")[0] in help_text, f"{twin.name}: the install help lacks {line!r}"


# --- Hangul in every figure ----------------------------------------------------------------


def draw(texts: list[str], family) -> None:
    """Draw every character of ``texts`` with matplotlib (each once: a glyph is a glyph), a
    missing glyph being an error."""
    fig = Figure(figsize=(4, 1))
    FigureCanvasAgg(fig)  # a bare Figure's canvas draws nothing
    chars = sorted(set("".join(texts)) - set("$\n\r\t"))
    for start in range(0, len(chars), 64):
        fig.text(0, 0.5, "".join(chars[start:start + 64]), family=family)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig.canvas.draw()


def test_every_korean_helpers_string_draws_in_the_figures_fonts():
    fonts.register()
    texts = list(i18n.catalog("ko").values())
    draw(texts, matplotlib.rcParams["font.family"])
    draw(texts, fonts.MONOSPACE)


def test_every_string_of_the_korean_notebooks_draws_in_the_figures_fonts():
    fonts.register()
    draw([code_text("".join(c["source"])) for path in korean_notebooks()
          for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"],
         matplotlib.rcParams["font.family"])


def test_a_missing_glyph_is_caught():
    with pytest.raises(UserWarning, match="missing from font"):
        draw(["한국어"], "DejaVu Sans")


def test_helpers_text_is_set_in_a_font_with_hangul():
    """A bare family="monospace" would lose the Hangul fallback: use fonts.MONOSPACE."""
    for path in sorted((ROOT / "helpers").rglob("*.py")):
        assert not re.search(r"family=\"monospace\"|fontfamily=", path.read_text(encoding="utf-8")), path


@pytest.mark.parametrize("path", korean_notebooks(), ids=lambda p: p.relative_to(translations.EDITION).as_posix())
def test_no_korean_figure_missed_a_glyph(path):
    """The executed edition's outputs hold no "Glyph ... missing from font" warning."""
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for out in cell.get("outputs", []):
            assert "missing from font" not in "".join(out.get("text", "")), f"{path.name} cell {cell['id']}"


def test_korean_explorers_and_heatmaps_draw_hangul(korean):
    """Every explorer and both heatmap functions, made in Korean, draw with no missing glyph and
    show Korean labels; in English they are as before."""
    import numpy as np

    from helpers.plots import attention_grid, attention_heatmap
    from tests.test_compat import explorer_factories

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=DeprecationWarning)  # ipywidgets 7.7 (make test-compat) on ipykernel's Comm
        ax = attention_heatmap(np.full((2, 3), 1 / 3), ["a", "b"], ["x", "y", "z"])
        ax.figure.canvas.draw()
        assert HANGUL.search(ax.get_xlabel()) and HANGUL.search(ax.get_ylabel())
        attention_grid(np.full((2, 2, 3), 1 / 3), ["헤드 0", "헤드 1"]).canvas.draw()
        for factory in explorer_factories():
            explorer = factory()
            assert explorer.image.value, factory.__name__
    matplotlib.pyplot.close("all")


def test_bold_hangul_draws_without_a_font_warning(caplog):
    """The Hangul subset has one weight; a bold title must not make matplotlib log 'Failed to find
    font weight bold' (it would land in a stored output)."""
    import logging

    import matplotlib.pyplot as plt

    import helpers  # noqa: F401  (registers the font)

    with caplog.at_level(logging.WARNING, logger="matplotlib.font_manager"):
        fig, ax = plt.subplots()
        ax.set_title("굵은 제목 bold", fontweight="bold")
        fig.canvas.draw()
        plt.close(fig)
    assert not [r for r in caplog.records if "weight" in r.getMessage()], caplog.text


GLOSS = re.compile(r"[\uac00-\ud7a3]\(([A-Za-z][^()]*)\)")  # 한글(English): a term's first use carries its English
NESTED_PENDING: set[str] = set()  # notebooks whose prose is being revised elsewhere


def nested_glosses(text: str) -> list[str]:
    """Glosses written inside another pair of brackets: "(… 어텐션 싱크(attention sink)라고 부릅니다.)"."""
    depth, depths = 0, []
    for ch in text:  # the bracket depth before each character
        depths.append(depth)
        depth = depth + 1 if ch in "(（" else max(depth - 1, 0) if ch in ")）" else depth
    return [text[max(0, m.start() - 30):m.end() + 10] for m in GLOSS.finditer(text) if depths[m.start() + 1] > 0]


def test_the_nested_gloss_check_sees_a_gloss_inside_an_aside():
    assert nested_glosses("트랜스포머는 블록을 쌓은 것입니다(블록마다 피드포워드 네트워크(feed-forward network) 하나).")
    assert not nested_glosses("피드포워드 네트워크(feed-forward network) 하나가 있으며(노트북 07에서 만듭니다), 끝.")
    assert not nested_glosses("(a, b) 배열 방식(layout)")


@pytest.mark.parametrize("path", korean_notebooks(), ids=lambda p: p.relative_to(translations.EDITION).as_posix())
def test_no_gloss_is_nested_inside_brackets(path):
    """The glossary's rule "never stack brackets" also holds inside an aside: a first use with its
    English stands in the sentence, not inside another bracket."""
    if path.name in NESTED_PENDING and path.parent == translations.EDITION:
        pytest.xfail(f"{path.name}: revised on another branch; found {nested_glosses(without_code(prose(path)))}")
    found = [g for cell in prose(path).split("\n\n") for g in nested_glosses(re.sub(r"\s+", " ", without_code(cell)))]
    assert not found, f"{path.name}: move these first uses out of the brackets:\n" + "\n".join(found)
