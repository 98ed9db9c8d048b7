"""`make bench` keeps working, and speed stays out of the tests.

Speed is measured by ``benchmarks/bench.py`` (``make bench``), never asserted here: a test that
fails on a busy machine says nothing about the course. The first test runs the benchmark in its
quick mode (a handful of steps, numbers meaningless) and checks the table covers every explorer
control and every training script; the others check that no test or notebook asserts a time.
"""

import ast
import json
import re
from pathlib import Path

import pytest

from helpers.explorers.registry import EXPLORER_CELLS, build_explorer

ROOT = Path(__file__).resolve().parent.parent
TIMING = re.compile(r"perf_counter|process_time|monotonic|time\.time|_ms\b|_ms\)|\bms\b|seconds|elapsed|update_ms")


def test_bench_quick_runs_every_part_and_saves_its_table(tmp_path, capsys):
    from benchmarks import bench

    out = tmp_path / "bench.json"
    assert bench.main(["--quick", "--explorers", "02_softmax", "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    controls = build_explorer(ROOT / "notebooks" / "02_softmax.ipynb", "3928e1dc").controls
    assert [(r["explorer"], r["control"]) for r in results["explorers"]] == [("02_softmax", c) for c in controls]
    assert all(r["updates"] >= 2 and r["median_ms"] > 0 for r in results["explorers"])
    assert [r["n"] for r in results["seaborn"]] == [8] and results["seaborn"][0]["ratio"] > 0
    assert {r["script"].split()[0] for r in results["training"]} == {
        f"scripts/{name}.py" for name in ("train_toy_model", "train_induction", "train_tiny_vla")}
    assert all(r["steps_per_s"] > 0 for r in results["training"])
    printed = capsys.readouterr().out
    assert "explorers: kernel-side update" in printed and "training loops" in printed


def test_bench_measures_every_explorer(monkeypatch):
    """The full run measures every explorer of EXPLORER_CELLS (each one's every control: the test
    above); ``--explorers`` picks some. Nothing is built or timed here."""
    from benchmarks import bench

    stepped = []
    monkeypatch.setattr(bench, "build_explorer", lambda notebook, cell_id: (notebook.stem, cell_id))
    monkeypatch.setattr(bench, "step_controls", lambda live, positions: stepped.append(live) or {})
    bench.bench_explorers(positions=12, warm_up=False)
    assert stepped == list(EXPLORER_CELLS)
    stepped.clear()
    bench.bench_explorers(positions=12, warm_up=False, only=["11_tiny_vla"])
    assert stepped == [key for key in EXPLORER_CELLS if key[0] == "11_tiny_vla"]


ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _bounds_a_time(node: ast.AST) -> bool:
    """A comparison ``a < b`` (or <=, >, >=) one of whose sides reads a clock or a duration."""
    return (isinstance(node, ast.Compare) and any(isinstance(op, ORDER) for op in node.ops)
            and any(TIMING.search(ast.unparse(side)) for side in [node.left, *node.comparators]))


def timing_asserts(source: str) -> list[str]:
    """The ``assert`` statements of ``source`` that bound a clock reading or a duration."""
    tree = ast.parse(source)
    return [ast.unparse(node) for node in ast.walk(tree)
            if isinstance(node, ast.Assert) and any(_bounds_a_time(sub) for sub in ast.walk(node.test))]


# Bounds the pattern must catch, written without the keyword so that no scan of this file sees an
# assert in them: each is checked below as "assert <bound>".
TIMING_BOUNDS = (
    "np.median(times_ms) < 50",
    "time.perf_counter() - start < 10",
    "train_seconds < 60, 'too slow'",
    "explorer.last_update_ms < 5000",
    "float(meta['cpu_seconds']) < 30",
)
NOT_TIMING = ("accuracy >= 0.95", "losses[-1] < losses[0] / 100", "'prefix.cpu_seconds' in meta and update_ms == []")


def test_the_timing_pattern_finds_what_it_should():
    for bound in TIMING_BOUNDS:
        assert timing_asserts(f"assert {bound}"), bound
    for claim in NOT_TIMING:
        assert not timing_asserts(f"assert {claim}"), claim


@pytest.mark.parametrize("path", sorted((ROOT / "tests").glob("*.py")), ids=lambda p: p.name)
def test_no_test_asserts_a_time(path):
    if path.name == Path(__file__).name:
        return
    assert not timing_asserts(path.read_text(encoding="utf-8")), "speed belongs in `make bench`, not in a test"


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").rglob("*.ipynb")), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_notebook_asserts_a_time(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))  # magics
    found = timing_asserts(code)
    assert not found, f"a time asserted (it fails on a busy machine; print it instead): {found}"
