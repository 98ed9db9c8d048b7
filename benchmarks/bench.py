"""`make bench`: how fast the series runs on this machine, as one table (also build/bench.json).

Speed is measured here, never asserted in `make test`: a test that fails on a busy laptop or a
shared CI runner says nothing about the course. What is measured, each in this one run:

- **explorers**: every live explorer of notebooks 00-11 (``helpers.explorers.registry``), built as
  its cell builds it, each control stepped over its range (a warm-up pass, then a timed pass).
  One update is the kernel's work for one slider move: compute, redraw in place, encode the PNG.
  Median and 90th percentile of the wall time, median process CPU time (steadier when other
  work runs), and the time to build the explorer.
- **vs seaborn**: notebook 03's saturation explorer at n = 8, 32 and 64 against seaborn's
  annotated heatmap redrawn from scratch, the usual recipe (``benchmarks/widget_latency.py``).
  The one bound: at n = 32 the explorer is at least RATIO_BOUND times faster. A ratio measured
  in the same run, so a busy machine slows both sides alike.
- **training**: each training script's loop (one thread, float64, as the scripts train) for a
  few steps; steps per second, and what the script's full run takes at that rate.
- **in JupyterLab**: every control of every explorer moved in a real JupyterLab page (headless
  Chromium): key steps and slider drags, each timed in the page from the input event to the first
  frame painted with the new picture, with the breakdown (send, server + kernel, widget manager,
  decode, frame) (``e2e/test_latency.py::test_every_explorer``, ``e2e/explorer_latency.py``).
  ``--lab-compare`` measures each explorer a second time with Agg drawing every artist.
- **site**: when ``build/site`` exists (``make site``), the static site's control -> picture
  latency in headless Chromium (``e2e/test_site.py::test_latency_one_display_frame``).

The load average is printed before and after: compare runs only on a quiet machine.
Exit status 1 only when the ratio bound is missed. ``--quick`` runs every part with a handful
of steps (the unit tests use it to keep this script working; its numbers mean nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import numpy as np  # noqa: E402
import torch  # noqa: E402

from benchmarks.widget_latency import TARGET_N as RATIO_N  # noqa: E402
from benchmarks.widget_latency import TARGET_RATIO as RATIO_BOUND  # noqa: E402
from benchmarks.widget_latency import time_explorer, time_seaborn  # noqa: E402
from helpers.explorers.registry import EXPLORER_CELLS, build_explorer  # noqa: E402
from helpers.training import one_thread  # noqa: E402
from tests.widget_sweep import control_positions  # noqa: E402

OUT = ROOT / "build" / "bench.json"
SITE = ROOT / "build" / "site"
SITE_LATENCY = ROOT / "build" / "site-e2e" / "latency.json"
LAB_OUT = ROOT / "build" / "bench-lab"
LAB_STEPS = 12  # key steps per control in JupyterLab (the e2e suite takes 6)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def step_controls(live, positions: int) -> dict[str, tuple[list[float], list[float]]]:
    """Each control moved over up to ``positions`` values: {control: (wall ms, CPU ms) per update}."""
    timings = {}
    for name, control in live.controls.items():
        start_value, wall, cpu = control.value, [], []
        for value in control_positions(control, positions):
            c0 = time.process_time()
            live.set(**{name: value})
            cpu.append((time.process_time() - c0) * 1e3)
            wall.append(live.last_update_ms)
        live.set(**{name: start_value})
        timings[name] = (wall, cpu)
    return timings


def bench_explorers(positions: int, warm_up: bool, only: list[str] | None = None) -> list[dict]:
    """One row per (explorer, control): update medians; the explorer's build time on its first row.
    ``only``: the notebooks (file stems) whose explorers to measure; default all."""
    rows = []
    for (stem, cell_id) in EXPLORER_CELLS:
        if only and stem not in only:
            continue
        start = time.perf_counter()
        live = build_explorer(ROOT / "notebooks" / f"{stem}.ipynb", cell_id)
        build_s = time.perf_counter() - start
        if warm_up:
            step_controls(live, positions)  # caches filled, every artist drawn once
        for i, (control, (wall, cpu)) in enumerate(step_controls(live, positions).items()):
            rows.append({"explorer": stem, "control": control, "updates": len(wall),
                         "median_ms": statistics.median(wall), "p90_ms": percentile(wall, 90),
                         "cpu_ms": statistics.median(cpu), "build_s": build_s if i == 0 else None})
    return rows


def bench_seaborn(sizes: list[int], repeats: int, seaborn_repeats: int) -> list[dict]:
    rows = []
    for n in sizes:
        live_wall, live_cpu = time_explorer(n, repeats)
        sns_wall, sns_cpu = time_seaborn(n, seaborn_repeats, budget_s=8.0)
        live_ms, sns_ms = statistics.median(live_wall), statistics.median(sns_wall)
        rows.append({"n": n, "explorer_ms": live_ms, "explorer_cpu_ms": statistics.median(live_cpu),
                     "seaborn_ms": sns_ms, "seaborn_cpu_ms": statistics.median(sns_cpu), "ratio": sns_ms / live_ms})
    return rows


def training_loops() -> dict[str, tuple[object, Callable]]:
    """Each training script's loop: {script: (its config, the helpers function it trains with)}."""
    from helpers import induction, toy_model, vla

    return {
        "scripts/train_toy_model.py (notebook 10, one model)": (toy_model.ToyConfig(), toy_model.train_and_time),
        "scripts/train_induction.py (notebook 10b, one model)": (induction.InductionConfig(), induction.train_and_time),
        "scripts/train_tiny_vla.py (notebook 11, one mask)": (vla.VLAConfig(), vla.train_and_time),
    }


def bench_training(steps: int) -> list[dict]:
    """Steps per second of each training loop, held-out evaluations included where the script makes them."""
    rows = []
    for name, (config, train_and_time) in training_loops().items():
        timed = min(steps, config.steps)
        with one_thread():
            w0, c0 = time.perf_counter(), time.process_time()
            train_and_time(replace(config, steps=timed), progress=False)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        rows.append({"script": name, "steps": timed, "steps_per_s": timed / wall, "cpu_steps_per_s": timed / cpu,
                     "full_steps": config.steps, "full_run_s": config.steps * wall / timed})
    return rows


def bench_site() -> dict:
    """The site's latency, measured by the site test's own measurement, when the site is built."""
    if not (SITE / "en" / "index.html").exists():
        return {"measured": False, "why": "build/site is missing (make site)"}
    chromium = os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium")
    SITE_LATENCY.unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "e2e/test_site.py::test_latency_one_display_frame"], cwd=ROOT,
                          env=os.environ | {"E2E_CHROMIUM": chromium}, capture_output=True, text=True)
    if not SITE_LATENCY.exists():
        last = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
        return {"measured": False, "why": f"the site test did not measure it: {last[0][:200]}"}
    return {"measured": True, **json.loads(SITE_LATENCY.read_text())}


def bench_lab(compare: bool = False) -> dict:
    """Every explorer's controls moved in JupyterLab, timed in the page (e2e/explorer_latency.py)."""
    chromium = os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).exists():
        return {"measured": False, "why": f"{chromium} is missing (make e2e installs it)"}
    result = LAB_OUT / "explorers.json"
    result.unlink(missing_ok=True)
    env = os.environ | {"E2E_CHROMIUM": chromium, "E2E_OUT": str(LAB_OUT), "E2E_EXPLORER_STEPS": str(LAB_STEPS),
                        "E2E_COMPARE": "1" if compare else "0", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                           "e2e/test_latency.py::test_every_explorer"], cwd=ROOT, env=env, capture_output=True, text=True)
    if not result.exists():
        last = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
        return {"measured": False, "why": f"the JupyterLab test did not measure it: {last[0][:200]}"}
    from e2e.explorer_latency import table as lab_table

    found = json.loads(result.read_text())
    return {"measured": True, **found, "lines": lab_table(found)}


def table(rows: list[list[str]], header: list[str]) -> str:
    """Columns padded to their widest cell: the first left-aligned, the others right-aligned."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(row: list) -> str:
        return "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *map(line, rows)])


def report(results: dict) -> str:
    out = [results["machine"], "--quick: a smoke test; these numbers mean nothing" if results["quick"] else "", ""]
    out.append("explorers: kernel-side update (compute + redraw + PNG), ms")
    out.append(table([[r["explorer"], r["control"], r["updates"], f"{r['median_ms']:.1f}", f"{r['p90_ms']:.1f}",
                       f"{r['cpu_ms']:.1f}", "" if r["build_s"] is None else f"{r['build_s']:.2f}"]
                      for r in results["explorers"]],
                     ["explorer", "control", "updates", "median", "p90", "CPU", "build s"]))
    medians = [r["median_ms"] for r in results["explorers"]]
    out.append(f"all controls: median {statistics.median(medians):.1f} ms, slowest control {max(medians):.1f} ms")
    out += ["", "notebook 03's explorer against seaborn's annotated heatmap (median ms)"]
    out.append(table([[r["n"], f"{r['explorer_ms']:.1f}", f"{r['seaborn_ms']:.1f}", f"{r['ratio']:.1f}x"]
                      for r in results["seaborn"]], ["n", "explorer", "seaborn", "faster"]))
    out += ["", "training loops (one thread, float64)"]
    out.append(table([[r["script"], r["steps"], f"{r['steps_per_s']:.1f}", f"{r['cpu_steps_per_s']:.1f}",
                       f"{r['full_steps']}", f"{r['full_run_s']:.0f}"] for r in results["training"]],
                     ["script", "steps timed", "steps/s", "steps/CPU s", "full run steps", "full run s"]))
    lab = results["lab"]
    out += ["", "in JupyterLab: input event -> first frame painted with the new picture, ms "
            "(headless Chromium; key steps and slider drags)"]
    out += lab["lines"] if lab["measured"] else [f"not measured ({lab['why']})"]
    site = results["site"]
    out += ["", "site: control -> picture painted, 03's d_k slider: " + (
        f"median {site['median_ms']:.1f} ms, p90 {site['p90_ms']:.1f} ms over {site['changes']} changes"
        if site["measured"] else f"not measured ({site['why']})")]
    out += ["", results["verdict"], results["load"]]
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few steps of everything (a smoke test, not a measurement)")
    parser.add_argument("--no-site", action="store_true", help="skip the site's latency even when it is built")
    parser.add_argument("--no-lab", action="store_true", help="skip the explorers' latency in JupyterLab")
    parser.add_argument("--lab-compare", action="store_true",
                        help="in JupyterLab, measure each explorer also with Agg drawing every artist (twice as long)")
    parser.add_argument("--explorers", nargs="+", metavar="NOTEBOOK", choices=sorted({s for s, _ in EXPLORER_CELLS}),
                        help="measure only these notebooks' explorers (e.g. 03_scaling_sqrt_dk)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the JSON goes (default {OUT.relative_to(ROOT)})")
    args = parser.parse_args(argv)

    load_before = os.getloadavg()
    machine = (f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; Python {platform.python_version()}, "
               f"torch {torch.__version__}, numpy {np.__version__}, matplotlib {matplotlib.__version__}; "
               f"torch threads {torch.get_num_threads()}")
    print(machine, flush=True)
    results = {"machine": machine, "quick": args.quick, "time": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    print("explorers ...", flush=True)
    results["explorers"] = bench_explorers(positions=2 if args.quick else 12, warm_up=not args.quick, only=args.explorers)
    print("seaborn ...", flush=True)
    results["seaborn"] = bench_seaborn([8] if args.quick else [8, 32, 64], repeats=3 if args.quick else 60,
                                       seaborn_repeats=1 if args.quick else 12)
    print("training ...", flush=True)
    results["training"] = bench_training(steps=1 if args.quick else 100)
    print("JupyterLab ...", flush=True)
    results["lab"] = {"measured": False, "why": "skipped"} if args.quick or args.no_lab else bench_lab(args.lab_compare)
    results["site"] = {"measured": False, "why": "skipped"} if args.quick or args.no_site else bench_site()

    ratio = next((r["ratio"] for r in results["seaborn"] if r["n"] == RATIO_N), None)
    ok = ratio is None or ratio >= RATIO_BOUND
    results["verdict"] = (f"bound: the explorer at least {RATIO_BOUND:.0f}x faster than seaborn at n = {RATIO_N}: "
                          + ("not measured" if ratio is None else f"{ratio:.1f}x, {'met' if ok else 'MISSED'}"))
    load_after = os.getloadavg()
    results["load"] = (f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
                       f"({os.cpu_count()} CPUs: above that, other work was running and the times are slower)")
    print(report(results))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    print(f"saved {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
