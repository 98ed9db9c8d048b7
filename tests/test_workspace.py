"""The learner's folder (scripts/workspace.py): copied once, never overwritten, told of newer
chapters, one chapter restarted with the old copy kept, and ignored by git."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import workspace  # noqa: E402

SERIES = [
    "00_start_here.ipynb",
    "03_scaling_sqrt_dk.ipynb",
    "10_trained_attention.ipynb",
    "10b_induction_heads.ipynb",
    "solutions/03_scaling_sqrt_dk_solutions.ipynb",
    "ko/03_scaling_sqrt_dk.ipynb",
    "ko/solutions/03_scaling_sqrt_dk_solutions.ipynb",
]


def write_notebook(path: Path, source: str, output: str = "1") -> None:
    """A small notebook: one markdown cell and one executed code cell."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cells = [
        {"cell_type": "markdown", "id": "a", "metadata": {}, "source": [f"# {path.stem}"]},
        {"cell_type": "code", "id": "b", "metadata": {}, "execution_count": 1, "source": [source],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": [output]}]},
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")


@pytest.fixture
def series(tmp_path):
    """A tracked series of a few notebooks in both editions, and where the learner's folder goes."""
    tracked = tmp_path / "notebooks"
    for name in SERIES:
        write_notebook(tracked / name, "print(1)")
    return tracked, tmp_path / "my-work"


def files(folder: Path) -> dict[str, bytes]:
    """Every notebook under ``folder`` and its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.ipynb")}


def test_first_copy_creates_every_notebook_of_both_editions_as_stored(tmp_path):
    work = tmp_path / "my-work"
    copied = workspace.copy_missing(workspace.TRACKED, work)
    tracked = files(workspace.TRACKED)
    assert sorted(copied) == sorted(tracked)
    assert {"00_start_here.ipynb", "ko/00_start_here.ipynb", "solutions/03_scaling_sqrt_dk_solutions.ipynb",
            "ko/solutions/03_scaling_sqrt_dk_solutions.ipynb"} <= set(copied)
    assert files(work) == tracked, "a copy differs from its tracked notebook (outputs must stay)"
    manifest = workspace.read_manifest(work)
    assert sorted(manifest) == sorted(tracked)
    assert manifest["ko/00_start_here.ipynb"]["source_hash"] == workspace.source_hash(
        workspace.TRACKED / "ko/00_start_here.ipynb")


def test_a_second_run_changes_nothing_and_keeps_an_edited_copy(series):
    tracked, work = series
    workspace.copy_missing(tracked, work)
    write_notebook(work / "03_scaling_sqrt_dk.ipynb", "answer = 42  # the learner's work")
    before, manifest = files(work), (work / workspace.MANIFEST).read_bytes()
    assert workspace.copy_missing(tracked, work) == []
    assert files(work) == before
    assert (work / workspace.MANIFEST).read_bytes() == manifest
    assert workspace.newer_in_series(tracked, work) == [], "the learner's edit is not a newer series"


def test_a_deleted_copy_comes_back_and_only_it(series):
    tracked, work = series
    workspace.copy_missing(tracked, work)
    (work / "ko/03_scaling_sqrt_dk.ipynb").unlink()
    assert workspace.copy_missing(tracked, work) == ["ko/03_scaling_sqrt_dk.ipynb"]


def test_a_changed_chapter_is_named_with_the_command_to_restart_it(series):
    tracked, work = series
    workspace.copy_missing(tracked, work)
    write_notebook(tracked / "03_scaling_sqrt_dk.ipynb", "print(2)  # the series got better")
    write_notebook(tracked / "ko/03_scaling_sqrt_dk.ipynb", "print(2)  # 한국어판도")
    newer = workspace.newer_in_series(tracked, work)
    assert newer == ["03_scaling_sqrt_dk.ipynb", "ko/03_scaling_sqrt_dk.ipynb"]
    english = workspace.note([], newer, work, "en")
    assert "03_scaling_sqrt_dk.ipynb   make restart NB=03\n" in english
    assert "NB=ko/03" not in english and "1 notebook(s) of the Korean edition" in english
    korean = workspace.note([], newer, work, "ko")
    assert "ko/03_scaling_sqrt_dk.ipynb   make restart NB=ko/03\n" in korean
    assert "NB=03\n" not in korean and "영어판 노트북 1개" in korean and "새 버전" in korean


def test_re_executing_a_notebook_unchanged_is_not_a_newer_version(series):
    tracked, work = series
    workspace.copy_missing(tracked, work)
    write_notebook(tracked / "10_trained_attention.ipynb", "print(1)", output="1.0000001")
    assert workspace.newer_in_series(tracked, work) == []


def test_sync_prints_where_the_work_lives_and_what_changed(series, capsys):
    tracked, work = series
    args = ["--tracked", str(tracked), "--work", str(work), "sync"]
    workspace.main(args)
    first = capsys.readouterr().out
    assert "my-work/" in first and f"Copied {len(SERIES)} notebook(s)" in first
    write_notebook(tracked / "10b_induction_heads.ipynb", "print(3)")
    workspace.main(args)
    second = capsys.readouterr().out
    assert "Copied" not in second and "make restart NB=10b" in second and "NB=10\n" not in second


def test_restart_keeps_the_old_copy_and_puts_a_fresh_one(series, capsys):
    tracked, work = series
    workspace.copy_missing(tracked, work)
    write_notebook(work / "03_scaling_sqrt_dk.ipynb", "answer = 42  # the learner's work")
    write_notebook(tracked / "03_scaling_sqrt_dk.ipynb", "print(2)")
    mine = (work / "03_scaling_sqrt_dk.ipynb").read_bytes()
    workspace.main(["--tracked", str(tracked), "--work", str(work), "restart", "03"])
    assert "my-work/03_scaling_sqrt_dk.ipynb is fresh" in capsys.readouterr().out
    old = sorted(work.glob("03_scaling_sqrt_dk.old-*.ipynb"))
    assert [p.read_bytes() for p in old] == [mine], "the learner's old copy was not kept as it was"
    assert (work / "03_scaling_sqrt_dk.ipynb").read_bytes() == (tracked / "03_scaling_sqrt_dk.ipynb").read_bytes()
    assert workspace.newer_in_series(tracked, work) == []
    assert workspace.copy_missing(tracked, work) == [], "the old copy is not a notebook of the series"


def test_restarting_twice_in_a_minute_loses_nothing(series):
    tracked, work = series
    workspace.copy_missing(tracked, work)
    for attempt in ("first try", "second try"):
        write_notebook(work / "ko/03_scaling_sqrt_dk.ipynb", attempt)
        workspace.restart("ko/03", tracked, work)
    kept = sorted(p.read_text(encoding="utf-8") for p in (work / "ko").glob("03_*.old-*.ipynb"))
    assert len(kept) == 2 and "first try" in kept[0] and "second try" in kept[1]


def test_restart_without_a_copy_just_copies(series):
    tracked, work = series
    assert workspace.restart("solutions/03", tracked, work) == ("solutions/03_scaling_sqrt_dk_solutions.ipynb", None)
    assert (work / "solutions/03_scaling_sqrt_dk_solutions.ipynb").exists()


@pytest.mark.parametrize("wanted, name", [
    ("03", "03_scaling_sqrt_dk.ipynb"),
    ("03_scaling_sqrt_dk", "03_scaling_sqrt_dk.ipynb"),
    ("03_scaling_sqrt_dk.ipynb", "03_scaling_sqrt_dk.ipynb"),
    ("10", "10_trained_attention.ipynb"),
    ("10b", "10b_induction_heads.ipynb"),
    ("ko/03", "ko/03_scaling_sqrt_dk.ipynb"),
    ("solutions/03", "solutions/03_scaling_sqrt_dk_solutions.ipynb"),
    ("ko/solutions/03", "ko/solutions/03_scaling_sqrt_dk_solutions.ipynb"),
])
def test_restart_finds_a_notebook_by_its_number_or_name(series, wanted, name):
    assert workspace.resolve(wanted, series[0]) == name


@pytest.mark.parametrize("wanted, choices", [
    ("3", "00, 03, 10, 10b"), ("99", "00, 03, 10, 10b"), ("ko/10b", "ko/03"), ("fr/03", "none"),
])
def test_restart_refuses_a_name_that_is_not_one_notebook(series, wanted, choices):
    with pytest.raises(SystemExit, match=f"names 0 notebooks; one of: {choices}$"):
        workspace.resolve(wanted, series[0])


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
@pytest.mark.parametrize("path", ["my-work/00_start_here.ipynb", "my-work/ko/solutions/x.ipynb",
                                  f"my-work/{workspace.MANIFEST}"])
def test_the_learner_folder_is_ignored_by_git(path):
    assert workspace.WORK == ROOT / "my-work"
    ignored = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT)
    assert ignored.returncode == 0, f"git does not ignore {path}: add /my-work/ to .gitignore"



@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
@pytest.mark.parametrize("lang, edition, start", [
    ("en_GB.UTF-8", "en", "/lab/tree/00_start_here"), ("ko", "ko", "/lab/tree/ko/00_start_here"),
])
def test_make_lab_syncs_then_serves_the_learner_folder(lang, edition, start):
    plan = subprocess.run(["make", "-n", "lab", f"LANG={lang}"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert plan.index(f"scripts/workspace.py sync --edition {edition}") < plan.index("jupyter lab")
    assert "--notebook-dir=my-work" in plan and start in plan
