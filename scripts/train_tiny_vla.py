"""Train notebook 11's tiny VLA with both masks and save them to data/tiny_vla.safetensors.

    .venv/bin/python scripts/train_tiny_vla.py            # train both, report, save (and the log)
    .venv/bin/python scripts/train_tiny_vla.py --check    # train both, report, compare with the saved file

Same code and seeds as the notebook (helpers.vla). Each mask trains in its own process on
one CPU thread (the two run side by side on a 2-core machine), so the weights are
bit-identical from run to run on the same machine and PyTorch. The causal mask gets more
steps than the prefix-LM mask, which needs fewer (STEPS). Prints the wall-clock and
CPU time of each training loop (on a shared machine the CPU time is the better estimate of
what a quiet machine would take), the held-out success (all three action tokens right) on
1000 scenes never drawn in training and on 1000 scenes whose target is a colour/shape
combination that never appears in training, and the first step at which the success on a
probe of 256 unseen scenes reached 95 %. The report also goes to data/tiny_vla_training_log.txt.
"""

import argparse
import json
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

import torch

from helpers.data import DATA_DIR
from helpers.vla import (
    WEIGHTS_FILE,
    TinyVLA,
    VLAConfig,
    held_out_scenes,
    load_models,
    save_models,
    success_rate,
    train_and_time,
)

LOG_FILE = "tiny_vla_training_log.txt"
STEPS = {"causal": 4500, "prefix": 1500}  # same total CPU as 3000 + 3000; the prefix-LM mask is done by ~700


def steps_to(curve: list[tuple[int, float]], level: float = 0.95) -> int | None:
    """First evaluated step whose probe success reaches ``level``."""
    return next((step for step, success in curve if success >= level), None)


def train_one(mask: str, bar_position: int, progress: bool) -> tuple[TinyVLA, list[float], list[tuple[int, float]], float, float]:
    """One mask's training in this process, on one thread: (model, losses, curve, wall s, CPU s)."""
    torch.set_num_threads(1)
    cpu_start = time.process_time()
    model, losses, curve, seconds = train_and_time(
        replace(VLAConfig(), mask=mask, steps=STEPS[mask]), progress=progress, bar_position=bar_position
    )
    return model, losses, curve, seconds, time.process_time() - cpu_start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="do not write; compare with the committed weights")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args()

    torch.set_num_threads(1)
    tests = {"unseen scenes": held_out_scenes(1000), "held-out combinations": held_out_scenes(1000, "held out")}
    models, metadata, lines = {}, {"torch": torch.__version__}, []
    wall_start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        runs = {mask: pool.submit(train_one, mask, k, not args.no_progress) for k, mask in enumerate(STEPS)}
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
                     f"{mask}.curve": json.dumps(curve), f"{mask}.losses": json.dumps([round(x, 4) for x in losses])}
    path = DATA_DIR / WEIGHTS_FILE
    if args.check:
        saved = load_models(path)
        for mask, model in models.items():
            same = all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), saved[mask].state_dict().values(), strict=True))
            print(f"{mask}: bit-identical to {path.name}: {same}; saved model's success on unseen scenes "
                  f"{success_rate(saved[mask], tests['unseen scenes']):.1%}")
        return
    save_models(models, path, **metadata)
    lines.append(f"saved {path.name} ({path.stat().st_size:,} bytes) on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    (DATA_DIR / LOG_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(lines[-1])


if __name__ == "__main__":
    main()
