"""nbval on the English notebooks as other CPUs would run them: `make test-portable`.

A stored output is part of the textbook and of the test, so it must read the same on a learner's
laptop. This re-runs nbval on every English notebook and solution once per setting below and fails
if any stored output changes under any of them. The Korean twins are left out: their code is the
English code with only strings translated, and every float they print is one the English prints
(both tested in ``tests/test_korean.py``), so a CPU that changed a Korean output would change the
English one too; ``make test`` and ``make test-compat`` run the Korean edition as well.

- ``old-cpu``: PyTorch's scalar kernels (ATen ``default``), MKL and oneDNN capped at AVX2,
  numpy's SIMD dispatch off (baseline only), OpenBLAS's oldest x86-64 kernels, 1 thread;
- ``avx2``: PyTorch's AVX2 kernels, MKL and oneDNN capped at AVX2 with MKL's conditional
  numerical reproducibility mode (other summation paths), 3 threads (more than the 2 cores).

Each setting also moves every inexact PyTorch result by a few ulps (``tests/portable/sitecustomize.py``,
seed 1 under ``old-cpu``, seed 2 under ``avx2``): that stands for any other kernel, not only the
ones named, and it stacks on the named ones rather than replacing them (a stored output that held
under the kernels alone but not with the nudge on top would still be one that a learner's CPU can
change). ``make test`` covers this CPU's own kernels, unnudged. Two settings, not one per kind of
change, keep `.ci/run` within 35 minutes on 2 cores.

On an ARM machine (Apple silicon) the x86 switches mean nothing and are left out (the second
setting is then called ``threads``).

    python scripts/portable_check.py                 # both settings (about 3.5 minutes each on 2 cores)
    python scripts/portable_check.py avx2             # one of them
    python scripts/portable_check.py --list          # the settings and their variables
    python scripts/portable_check.py old-cpu -- notebooks/08_position.ipynb  # one notebook
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
X86 = platform.machine().lower() in {"x86_64", "amd64"}


def numpy_dispatch_off() -> str:
    """The value of NPY_DISABLE_CPU_FEATURES that turns off every SIMD path numpy dispatches to
    on this machine (naming one the CPU lacks would make numpy warn, so only those it has)."""
    probe = ("import numpy as np\n"
             "m = np._core._multiarray_umath if hasattr(np, '_core') else np.core._multiarray_umath\n"
             "print(' '.join(k for k in m.__cpu_dispatch__ if m.__cpu_features__.get(k)))")
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()


def settings() -> dict[str, dict[str, str]]:
    """Each setting's environment variables."""
    x86_old = {"MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2", "OPENBLAS_CORETYPE": "Prescott"}
    x86_avx2 = {"MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "COMPATIBLE"}
    # tests/portable first (its sitecustomize nudges the kernels), then this checkout, so that the kernels
    # import this checkout's helpers even where the installed package points at another one.
    paths = [str(ROOT / "tests" / "portable"), str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    nudge = {"PYTHONPATH": os.pathsep.join(paths)}
    return {
        "old-cpu": {"ATEN_CPU_CAPABILITY": "default", "NPY_DISABLE_CPU_FEATURES": numpy_dispatch_off(),
                    "OMP_NUM_THREADS": "1", **(x86_old if X86 else {}), "ATTENTION_LAB_NUDGE": "1", **nudge},
        "avx2" if X86 else "threads": {**({"ATEN_CPU_CAPABILITY": "avx2", **x86_avx2} if X86 else {}),
                                       "OMP_NUM_THREADS": "3", "ATTENTION_LAB_NUDGE": "2", **nudge},
    }


def run(name: str, variables: dict[str, str], targets: list[str]) -> bool:
    """nbval over ``targets`` under ``variables``; True when every stored output held."""
    env = os.environ | variables | {"MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    command = [sys.executable, "-m", "pytest", *targets, "--nbval", "--nbval-current-env",
               "--nbval-cell-timeout=600", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg",
               "-n", "2", "--dist", "loadfile", "-q", "--no-header", "-p", "no:cacheprovider"]
    print(f"\n=== {name}: " + " ".join(f"{k}={v}" for k, v in variables.items() if k != "PYTHONPATH"), flush=True)
    start = time.perf_counter()
    ok = subprocess.run(command, cwd=ROOT, env=env).returncode == 0
    print(f"=== {name}: {'every stored output held' if ok else 'FAILED'} ({time.perf_counter() - start:.0f} s)", flush=True)
    return ok


def main() -> int:
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     usage="%(prog)s [--list] [SETTING ...] [-- NOTEBOOK_OR_FOLDER ...]")
    parser.add_argument("names", nargs="*", help="settings to run (default: all)")
    parser.add_argument("--list", action="store_true", help="print the settings and exit")
    args = parser.parse_args(argv[:split])
    args.targets = argv[split + 1 :]
    table = settings()
    if args.list:
        for name, variables in table.items():
            print(f"{name:>9}: " + " ".join(f"{k}={v}" for k, v in variables.items()))
        return 0
    unknown = set(args.names) - set(table)
    if unknown:
        parser.error(f"unknown setting(s) {sorted(unknown)}; choose from {list(table)}")
    targets = args.targets or ["notebooks", "--ignore=notebooks/ko"]
    failed = [name for name in (args.names or table) if not run(name, table[name], targets)]
    print("\nportable check: " + (f"FAILED under {', '.join(failed)}" if failed else f"passed under {', '.join(args.names or table)}"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
