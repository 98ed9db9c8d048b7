"""What nbval cannot see: every notebook executed in order, no error, and the shape every
chapter follows (objectives, predictions, recap, VLA box, exercises, next link)."""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
ALL = sorted(p for p in NOTEBOOKS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
CHAPTERS = sorted(p for p in NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb") if not p.name.startswith("00_"))


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def markdown(path: Path) -> str:
    return "\n".join(source(c) for c in cells(path) if c["cell_type"] == "markdown")


def test_there_are_notebooks():
    assert (NOTEBOOKS / "00_start_here.ipynb").exists()


@pytest.mark.parametrize("path", ALL, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_executed_in_order_without_errors(path):
    counts = []
    for cell in cells(path):
        if cell["cell_type"] != "code" or not source(cell).strip():
            continue
        assert cell["execution_count"] is not None, f"never executed: {source(cell)[:80]!r}"
        counts.append(cell["execution_count"])
        expected_error = "raises-exception" in cell["metadata"].get("tags", [])
        if not expected_error:
            errors = [o for o in cell["outputs"] if o["output_type"] == "error"]
            assert not errors, f"cell [{cell['execution_count']}] stored an error: {errors[0]['ename']}"
        stderr = [o for o in cell["outputs"] if o.get("name") == "stderr" and "Warning" in "".join(o["text"])]
        assert not stderr, f"cell [{cell['execution_count']}] printed a warning: {''.join(stderr[0]['text'])[:200]}"
    assert counts == list(range(1, len(counts) + 1)), f"cells not run top to bottom in one fresh kernel: {counts}"


ABSOLUTE_PATH = re.compile(r"(?<![\w.])/(?:[\w.-]+/)+(?:\.venv|site-packages|notebooks)\b")  # a machine's own folders


@pytest.mark.parametrize("path", ALL, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_stored_outputs_name_no_folder_of_the_machine_that_ran_them(path):
    """A stored output is read on every learner's machine: it shows paths relative to the repository, never the
    absolute folders of the machine (or worktree) that executed it."""
    for cell in cells(path):
        for output in cell.get("outputs", []):
            text = "".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", ""))
            found = ABSOLUTE_PATH.search(text)
            assert found is None, f"cell {cell.get('id')} stores {found.group()!r}: run it from the repository root"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_has_the_series_shape(path):
    text = markdown(path)
    assert cells(path)[0]["cell_type"] == "markdown" and source(cells(path)[0]).startswith("# ")
    for part in ("What you will learn", "Predict:", "Recap", "VLA", "Exercises"):
        assert part in text, f"{path.name} has no '{part}'"
    assert re.search(r"\]\((\./)?\d\d[a-z]?_[a-z0-9_]+\.ipynb\)", text) or "last notebook" in text.lower(), "no link to the next notebook"
    checks = sum(source(c).count("check(\"") for c in cells(path) if c["cell_type"] == "code")
    assert 3 <= checks <= 6, f"{path.name} has {checks} checked exercises; the series asks for 3-6"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_has_a_solutions_notebook_that_passes(path):
    solutions = NOTEBOOKS / "solutions" / path.name.replace(".ipynb", "_solutions.ipynb")
    assert solutions.exists(), f"missing {solutions.relative_to(NOTEBOOKS)}"
    printed = "".join("".join(o.get("text", "")) for c in cells(solutions) if c["cell_type"] == "code" for o in c["outputs"])
    assert "✅" in printed and "❌" not in printed, "a stored solution does not pass its check"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
@pytest.mark.parametrize("edition", ["", "ko"])
def test_every_exercise_has_its_own_heading_in_the_solutions(path, edition):
    """Each exercise's worked answer starts a markdown cell with its number in bold (**05.4** ...),
    never a comment inside another exercise's code cell, in both editions."""
    ids = [i for c in cells(path) if c["cell_type"] == "code" for i in re.findall(r'check\("([^"]+)"', source(c))]
    solutions = NOTEBOOKS / edition / "solutions" / path.name.replace(".ipynb", "_solutions.ipynb")
    leads = [source(c).lstrip() for c in cells(solutions) if c["cell_type"] == "markdown"]
    missing = [i for i in ids if not any(lead.startswith(f"**{i}**") for lead in leads)]
    assert not missing, f"{solutions.relative_to(NOTEBOOKS)}: no markdown cell starting with **{missing[0]}**"


@pytest.mark.parametrize("path", ALL, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_widget_outputs_are_ignored_and_carry_a_static_picture(path):
    for cell in cells(path):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "application/vnd.jupyter.widget-view+json" in data:
                assert "nbval-ignore-output" in cell["metadata"].get("tags", []), "a widget cell must carry the tag nbval-ignore-output"
                assert "image/png" in data, "a widget output needs a static PNG fallback"


def test_every_notebook_is_on_both_maps_and_every_link_resolves():
    readme = (NOTEBOOKS.parent / "README.md").read_text(encoding="utf-8")
    start = markdown(NOTEBOOKS / "00_start_here.ipynb")
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb")):
        assert f"](notebooks/{path.name})" in readme, f"{path.name} is missing from README's map"
        assert f"]({path.name})" in start, f"{path.name} is missing from the map in 00_start_here"
    for link in re.findall(r"\]\((notebooks/[^)]+\.ipynb)\)", readme):
        assert (NOTEBOOKS.parent / link).exists(), f"README links to a missing {link}"
    korean = (NOTEBOOKS.parent / "README.ko.md").read_text(encoding="utf-8")
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb")):
        assert f"](notebooks/ko/{path.name})" in korean, f"{path.name} is missing from README.ko.md's map"
    for link in re.findall(r"\]\(([^)#]+\.(?:ipynb|md|png))\)", korean):
        assert (NOTEBOOKS.parent / link).exists(), f"README.ko.md links to a missing {link}"
    for path in ALL:
        for link in re.findall(r"\]\(([^)]+\.ipynb)\)", markdown(path)):
            assert (path.parent / link).exists(), f"{path.name} links to a missing {link}"


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb")), ids=lambda p: p.name)
def test_core_path_takes_at_most_45_minutes_and_the_first_cell_says_so(path):
    """Both times are the one estimate of scripts/study_time.py (its docstring gives the rates)."""
    import sys

    sys.path.insert(0, str(NOTEBOOKS.parent / "scripts"))
    import study_time

    est = study_time.estimate(path)
    assert est.core <= study_time.CORE_LIMIT, (
        f"{path.name}: the core path takes {est.core:.0f} minutes by scripts/study_time.py; mark sections "
        f"'Deep dive' (or exercises '(optional)') until it takes at most {study_time.CORE_LIMIT}")
    assert study_time.statement(est) in source(cells(path)[0]), (
        f"{path.name}: the first cell must state the estimate; run python scripts/study_time.py --write")


def test_a_cell_that_only_checks_the_setup_is_charged_as_run_only():
    """study_time reads code at 8 s a line, but a cell whose output varies by machine (tagged
    nbval-ignore-output) and that is no explorer is only run: 20 s, however long (00's
    environment check). An explorer is charged its lines and the time to play with it."""
    import sys

    import nbformat

    sys.path.insert(0, str(NOTEBOOKS.parent / "scripts"))
    import study_time

    code = "\n".join(f"x{i} = {i}" for i in range(40))
    plain = nbformat.v4.new_code_cell(code)
    setup = nbformat.v4.new_code_cell(code, metadata={"tags": ["nbval-ignore-output"]})
    explorer = nbformat.v4.new_code_cell("explorer = vectors_explorer()\nexplorer",
                                         metadata={"tags": ["nbval-ignore-output"]})
    assert study_time.cell_minutes(plain) == (study_time.CELL_SECONDS + 40 * study_time.LINE_SECONDS) / 60
    assert study_time.cell_minutes(setup) == study_time.CELL_SECONDS / 60
    assert study_time.cell_minutes(explorer) == (
        (study_time.CELL_SECONDS + 2 * study_time.LINE_SECONDS) / 60 + study_time.EXPLORER_MINUTES)


def test_every_exercise_has_a_kind_for_the_time_estimate():
    """scripts/study_time.py charges an exercise by its kind (value, code or build): every one has one."""
    import sys

    sys.path.insert(0, str(NOTEBOOKS.parent / "scripts"))
    import study_time

    from helpers.checks import exercises

    known = set(exercises())
    missing = sorted(known - set(study_time.EXERCISE_KIND))
    assert not missing, f"exercises without a kind in study_time.EXERCISE_KIND: {missing}"
    stale = sorted(set(study_time.EXERCISE_KIND) - known)
    assert not stale, f"study_time.EXERCISE_KIND names exercises that do not exist: {stale}"
    unknown = {k: v for k, v in study_time.EXERCISE_KIND.items() if v not in study_time.KIND_MINUTES}
    assert not unknown, f"unknown exercise kinds (known: {sorted(study_time.KIND_MINUTES)}): {unknown}"


def _bindings_and_uses(code: str) -> tuple[set[str], set[str]]:
    """Names a cell binds at its top level, and names it reads from earlier cells (in functions and
    comprehensions too); a name the cell binds itself does not count as read."""
    import symtable

    code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))
    top = symtable.symtable(code, "cell", "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    used = {s.get_name() for s in top.get_symbols() if s.is_referenced()}
    tables = list(top.get_children())
    while tables:
        table = tables.pop()
        used |= {s.get_name() for s in table.get_symbols() if s.is_global() and s.is_referenced()}
        tables += table.get_children()
    return bound, used - bound


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb")), ids=lambda p: p.name)
def test_the_core_path_never_needs_a_deep_dive(path):
    """A learner who skips every deep dive and optional exercise runs the same core path: no core cell
    reads a name whose latest binding before it is in an optional cell (scripts/study_time.py decides
    which cells are optional). Static: to confirm a cut, execute a copy of the notebook without its
    optional cells (`jupyter nbconvert --execute`) and compare the outputs."""
    import sys

    import nbformat

    sys.path.insert(0, str(NOTEBOOKS.parent / "scripts"))
    import study_time

    nb = nbformat.read(path, as_version=4)
    last_bound = {}  # name -> (cell index, optional?)
    needed = []
    for index, _, _, optional in study_time.walk(nb):
        cell = nb.cells[index]
        if cell.cell_type != "code":
            continue
        bound, used = _bindings_and_uses(cell.source)
        if not optional:
            needed += [f"cell {index} reads {name!r}, last bound in optional cell {last_bound[name][0]}"
                       for name in sorted(used) if last_bound.get(name, (0, False))[1]]
        last_bound.update({name: (index, optional) for name in bound})
    assert not needed, f"{path.name}: the core path needs a deep dive: " + "; ".join(needed)


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb")), ids=lambda p: p.name)
def test_the_korean_twin_states_the_same_times(path):
    """The Korean first cell carries the estimate too (scripts/study_time.py --write keeps it in step)."""
    import sys

    sys.path.insert(0, str(NOTEBOOKS.parent / "scripts"))
    import study_time

    twin = NOTEBOOKS / "ko" / path.name
    assert study_time.korean_statement(study_time.estimate(path)) in source(cells(twin)[0]), (
        f"ko/{path.name}: the first cell must state the estimate; run python scripts/study_time.py --write "
        f"{path.name[:3].rstrip('_')}, then scripts/translations.py build")


def test_the_maps_say_which_live_widgets_are_deep_dives():
    """The notebook maps (00 and the READMEs, both editions) mark a chapter's live widget "(a deep dive)"
    exactly when its explorer cell is optional (scripts/study_time.py decides)."""
    import sys

    import nbformat

    sys.path.insert(0, str(NOTEBOOKS.parent / "scripts"))
    import study_time

    optional = {}
    for path in study_time.chapters():
        nb = nbformat.read(path, as_version=4)
        explorers = [opt for i, _, _, opt in study_time.walk(nb) if "_explorer(" in nb.cells[i].source
                     and "nbval-ignore-output" in nb.cells[i].metadata.get("tags", [])]
        if explorers:
            optional[path.name.split("_")[0]] = all(explorers)
    root = NOTEBOOKS.parent
    maps = {"README.md": ((root / "README.md").read_text(encoding="utf-8"), "(a deep dive)"),
            "README.ko.md": ((root / "README.ko.md").read_text(encoding="utf-8"), "(심화 학습)"),
            "00": (source(cells(NOTEBOOKS / "00_start_here.ipynb")[3]), "(a deep dive)"),
            "ko/00": (source(cells(NOTEBOOKS / "ko" / "00_start_here.ipynb")[3]), "(심화 학습)")}
    for name, (text, mark) in maps.items():
        rows = dict(re.findall(r"^\| (\d\d[a-z]?) \|(.*)$", text, re.MULTILINE))
        wrong = [n for n, opt in optional.items() if rows[n].rstrip().endswith(f"{mark} |") != opt]
        assert not wrong, f"{name}: the live-widget column of {wrong} does not say '{mark}' where the explorer is optional"
