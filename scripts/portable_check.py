"""nbval on both editions as other CPUs would run them: `make test-portable`.

A stored output is part of the textbook and of the test, so it must read the same on a learner's
laptop. This re-runs nbval on every notebook (English, Korean, solutions) once per setting below
and fails if any stored output changes under any of them:

- ``old-cpu``: PyTorch's scalar kernels (ATen ``default``), MKL and oneDNN capped at AVX2,
  numpy's SIMD dispatch off (baseline only), OpenBLAS's oldest x86-64 kernels, 1 thread;
- ``avx2``: PyTorch's AVX2 kernels, MKL and oneDNN capped at AVX2 with MKL's conditional
  numerical reproducibility mode (other summation paths), 2 threads;
- ``nudged``: this CPU's own kernels, 3 threads, and every inexact PyTorch result moved by a
  few ulps (``tests/portable/sitecustomize.py``): any kernel, not only the ones named above;
- ``nudged-2``: the same with another seed, 1 thread.

On an ARM machine (Apple silicon) the x86 switches mean nothing and are left out.

    python scripts/portable_check.py                 # every setting (about 3 minutes each on 2 cores)
    python scripts/portable_check.py old-cpu nudged  # some of them
    python scripts/portable_check.py --list          # the settings and their variables
    python scripts/portable_check.py nudged -- notebooks/08_position.ipynb   # one notebook
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
    nudge = {"PYTHONPATH": str(ROOT / "tests" / "portable")}
    return {
        "old-cpu": {"ATEN_CPU_CAPABILITY": "default", "NPY_DISABLE_CPU_FEATURES": numpy_dispatch_off(),
                    "OMP_NUM_THREADS": "1", **(x86_old if X86 else {})},
        **({"avx2": {"ATEN_CPU_CAPABILITY": "avx2", "OMP_NUM_THREADS": "2", **x86_avx2}} if X86 else {}),
        "nudged": {"ATTENTION_LAB_NUDGE": "1", "OMP_NUM_THREADS": "3", **nudge},
        "nudged-2": {"ATTENTION_LAB_NUDGE": "2", "OMP_NUM_THREADS": "1", **nudge},
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="settings to run (default: all)")
    parser.add_argument("--list", action="store_true", help="print the settings and exit")
    parser.add_argument("targets", nargs=argparse.REMAINDER, help="after --: notebooks or folders")
    args = parser.parse_args()
    table = settings()
    if args.list:
        for name, variables in table.items():
            print(f"{name:>9}: " + " ".join(f"{k}={v}" for k, v in variables.items()))
        return 0
    unknown = set(args.names) - set(table)
    if unknown:
        parser.error(f"unknown setting(s) {sorted(unknown)}; choose from {list(table)}")
    targets = [t for t in args.targets if t != "--"] or ["notebooks"]
    failed = [name for name in (args.names or table) if not run(name, table[name], targets)]
    print("\nportable check: " + (f"FAILED under {', '.join(failed)}" if failed else f"passed under {', '.join(args.names or table)}"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
