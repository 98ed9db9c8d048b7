"""Train notebook 11's tiny VLA with both masks and save them to data/tiny_vla.safetensors.

    .venv/bin/python scripts/train_tiny_vla.py            # train both, report, save (and the log)
    .venv/bin/python scripts/train_tiny_vla.py --check    # train both, report, compare with the saved file

Same code as the notebook (helpers.vla). Each mask trains in its own process on one CPU
thread (the two run side by side on a 2-core machine), on the schedule and from the seed that
scripts/compare_vla_masks.py also uses (helpers.vla.VLAConfig's defaults: 1500 steps, seed 0,
the shape word in the suffix): the shipped models are that comparison's seed-0 rows, and
``--from-runs DIR`` ships them from the weights ``compare_vla_masks.py --save-models DIR`` kept,
without training again (the same code on the same machine gives the same weights). Seed s draws
the initial weights (init_seed = s) and the training scenes (data_seed = s + 1).

Why seed 0. The rule, fixed before the comparison ran, was the first seed whose two runs both
reach 95 % on the unseen scenes, so that notebook 11 looks inside two working models. On this
schedule no seed's causal run reaches 95 % (data/vla_mask_comparison.json), so the rule has no
answer, and the shipped pair is the first seed, which no result chose: a typical pair, whose
causal model stalls (every x right, y a guess when another object shares the target's column).

Prints the wall-clock and CPU time of each training loop (on a shared machine the CPU time is
the better estimate of what a quiet machine would take), the held-out success (all three action
tokens right) on 1000 scenes never drawn in training and on 1000 scenes whose target is a
colour/shape combination that never appears in training, and the first step at which the
success on a probe of 256 unseen scenes reached 95 %. The report also goes to
data/tiny_vla_training_log.txt.

Training runs in float64 and stores float32 weights (helpers.training). On a CPU whose kernels
are ours, ``--check`` reproduces the committed file: it compares a fresh run's weights and loss
curve within the tolerances below (it prints them), and the probe's success at every evaluated
step, the steps at which it first reached 50, 80, 90 and 95 %, and the success on unseen scenes
and held-out combinations (as notebook 11 prints them) exactly; it exits with an error if
anything differs. About a minute of CPU per mask; the two run side by side on 2 cores.

On another CPU it does not, and cannot: this training is chaotic. Scale the initial weights by
1 + 1e-7 and the prefix-LM run's loss differs by 1e-3 by step 195 and the final weights by 0.86;
float64's 1e-16 differences between CPUs grow the same way, only a few hundred steps later.
Measured with PyTorch's scalar kernels
(``ATEN_CPU_CAPABILITY=default MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2``) on the
earlier design (the shape word in the prefix, seed 6): the causal model ended at 82.8 % on
unseen scenes instead of 95.0 %, and the prefix-LM model passed 95 % on the probe at step 500
instead of 700.
Retraining on another CPU is like drawing another seed (scripts/compare_vla_masks.py shows the
spread). Nothing in notebook 11 retrains: it loads the committed weights, so its outputs do not
depend on this.
"""

import argparse
import json
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import torch

from helpers.data import DATA_DIR
from helpers.training import largest_difference, within
from helpers.vla import (
    WEIGHTS_FILE,
    TinyVLA,
    VLAConfig,
    held_out_scenes,
    load_metadata,
    load_models,
    save_models,
    success_rate,
    train_and_time,
)

LOG_FILE = "tiny_vla_training_log.txt"
MASKS = ("causal", "prefix")
LEVELS = (0.5, 0.8, 0.9, 0.95)  # the probe milestones notebook 11 prints
WEIGHT_TOLERANCE = 1e-5  # largest |Δ| of a weight (they are of order 0.01 to 3); measured: under 1e-6
CURVE_TOLERANCE = 1e-5  # largest |Δ| of a stored loss (stored to 6 decimals); measured: under 1e-6


def steps_to(curve: list[tuple[int, float]], level: float = 0.95) -> int | None:
    """First evaluated step whose probe success reaches ``level``."""
    return next((step for step, success in curve if success >= level), None)


def printed_metrics(model: TinyVLA, curve: list[tuple[int, float]], tests: dict[str, list]) -> dict[str, str]:
    """Success on each test set and the probe's milestones, as notebook 11 prints them, and the whole probe curve."""
    metrics = {f"success on {name}": f"{success_rate(model, scenes):.1%}" for name, scenes in tests.items()}
    metrics |= {f"probe first at or above {level:.0%} at step": str(steps_to(curve, level)) for level in LEVELS}
    return metrics | {"probe success by step": ", ".join(f"{s}: {p:.4f}" for s, p in curve)}


def check(models: dict[str, TinyVLA], metadata: dict[str, str], tests: dict[str, list]) -> bool:
    """Compare fresh runs with the committed file; print each comparison; True if all agree."""
    path = DATA_DIR / WEIGHTS_FILE
    saved, stored = load_models(path), load_metadata(path)
    ok = True
    for mask, model in models.items():
        print(f"{mask} compared with {path.name}:")
        ok &= within("weights", largest_difference(model.state_dict(), saved[mask].state_dict()), WEIGHT_TOLERANCE)
        losses = {mask: torch.tensor(json.loads(metadata[f"{mask}.losses"]), dtype=torch.float64)}
        ok &= within("loss curve", largest_difference(losses, {mask: torch.tensor(json.loads(stored[f"{mask}.losses"]))}),
                     CURVE_TOLERANCE)
        fresh = printed_metrics(model, json.loads(metadata[f"{mask}.curve"]), tests)
        committed = printed_metrics(saved[mask], json.loads(stored[f"{mask}.curve"]), tests)
        for name, value in fresh.items():
            same = value == committed[name]
            print(f"  {name}: {value}" + ("" if same else f"  DIFFERENT (committed: {committed[name]})"))
            ok &= same
    return ok


def train_one(mask: str, bar_position: int, progress: bool) -> tuple[TinyVLA, list[float], list[tuple[int, float]], float, float]:
    """One mask's training in this process, on one thread: (model, losses, curve, wall s, CPU s)."""
    torch.set_num_threads(1)
    cpu_start = time.process_time()
    model, losses, curve, seconds = train_and_time(
        replace(VLAConfig(), mask=mask),
        progress=progress, bar_position=bar_position,
    )
    return model, losses, curve, seconds, time.process_time() - cpu_start


def from_run(directory: Path, mask: str) -> tuple[TinyVLA, list[float], list[tuple[int, float]], float, float]:
    """The run of VLAConfig's seed that scripts/compare_vla_masks.py --save-models left in ``directory``, as train_one returns it."""
    config = replace(VLAConfig(), mask=mask)
    saved = torch.load(directory / f"{mask}-{config.init_seed}.pt")
    model = TinyVLA(config)
    model.load_state_dict(saved["state_dict"])
    return model.eval(), saved["losses"], [tuple(p) for p in saved["curve"]], saved["seconds"], saved["cpu_seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="do not write; compare with the committed weights")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--from-runs", metavar="DIR", help="do not train: ship the pair that scripts/compare_vla_masks.py "
                        "--save-models DIR trained from VLAConfig's seed (the same code and schedule: the same weights)")
    args = parser.parse_args()

    torch.set_num_threads(1)
    tests = {"unseen scenes": held_out_scenes(1000), "held-out combinations": held_out_scenes(1000, "held out")}
    models, metadata, lines = {}, {"torch": torch.__version__}, []
    wall_start = time.perf_counter()
    if args.from_runs:
        results = {mask: from_run(Path(args.from_runs), mask) for mask in MASKS}
        lines.append(f"both masks from {args.from_runs} (scripts/compare_vla_masks.py --save-models, seed {VLAConfig().init_seed})")
    else:
        with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
            runs = {mask: pool.submit(train_one, mask, k, not args.no_progress) for k, mask in enumerate(MASKS)}
            results = {mask: run.result() for mask, run in runs.items()}
        lines.append(f"both masks trained side by side in {time.perf_counter() - wall_start:.1f} s wall")
    print(lines[-1], flush=True)
    for mask, (model, losses, curve, seconds, cpu_seconds) in results.items():
        success = {name: success_rate(model, scenes) for name, scenes in tests.items()}
        lines.append(
            f"{mask}: {model.config.steps} steps in {seconds:.1f} s wall, {cpu_seconds:.1f} s CPU; final loss {losses[-1]:.4f}; "
            f"success {success['unseen scenes']:.1%} on unseen scenes, {success['held-out combinations']:.1%} on "
            f"held-out combinations; probe reached 95 % at step {steps_to(curve)}"
        )
        lines.append(f"{mask} probe success by step: " + ", ".join(f"{s}: {p:.2f}" for s, p in curve))
        print(*lines[-2:], sep="\n", flush=True)
        models[mask] = model
        metadata |= {f"{mask}.train_seconds": f"{seconds:.1f}", f"{mask}.cpu_seconds": f"{cpu_seconds:.1f}",
                     f"{mask}.curve": json.dumps(curve), f"{mask}.losses": json.dumps([round(x, 6) for x in losses])}
    if args.check:
        if not check(models, metadata, tests):
            raise SystemExit("the fresh runs differ from the committed file beyond the tolerances (on a CPU whose "
                             "kernels differ from ours that is expected: this training is chaotic, see the docstring)")
        print("both masks agree with the committed file within the tolerances")
        return
    path = DATA_DIR / WEIGHTS_FILE
    save_models(models, path, **metadata)
    lines.append(f"saved {path.name} ({path.stat().st_size:,} bytes) on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    (DATA_DIR / LOG_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(lines[-1])


if __name__ == "__main__":
    main()
