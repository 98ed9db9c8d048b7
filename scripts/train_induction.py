"""Train notebook 10b's decoders (2 layers, and the 1-layer control) and save them to data/.

    .venv/bin/python scripts/train_induction.py            # train both, report, save
    .venv/bin/python scripts/train_induction.py --check    # train both, compare with the saved files

Writes data/induction_2layer.safetensors and data/induction_1layer.safetensors: weights, the
training curve (loss per step on the first pass and on the repeats, head scores every
eval_every steps) and the config as metadata. Same code and seeds as the notebook
(helpers.induction), on one CPU thread, so the weights are bit-for-bit reproducible. Prints
the wall-clock and CPU time of each training loop (on a shared machine the CPU time is the
better estimate of what a quiet machine would take).
"""

import argparse

import torch

from helpers.data import DATA_DIR
from helpers.induction import (
    WEIGHTS,
    InductionConfig,
    bump_step,
    held_out_set,
    load_curve,
    load_model,
    one_layer,
    save_model,
    split_metrics,
    train_and_time,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="do not write; compare with the committed weights")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args()

    torch.manual_seed(0)  # build_model reseeds with the config's init_seed; this covers anything else
    mismatches = 0
    for config in (InductionConfig(), one_layer()):
        model, curve, wall, cpu = train_and_time(config, progress=not args.no_progress)
        x, periods = held_out_set(config)
        metrics = split_metrics(model, x, periods)
        print(f"{config.num_layers} layer(s): {config.steps} steps in {wall:.1f} s wall, {cpu:.1f} s CPU; "
              f"induction bump at step {bump_step(curve['loss_repeats'])}; "
              + ", ".join(f"{k} {v:.3f}" for k, v in metrics.items()))
        path = DATA_DIR / WEIGHTS[config.num_layers]
        if args.check:
            saved, saved_curve = load_model(path), load_curve(path)
            same = all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), saved.state_dict().values(), strict=True))
            same_curve = all(torch.equal(curve[k], saved_curve[k]) for k in curve)
            print(f"  bit-identical to {path.name}: weights {same}, training curve {same_curve}")
            mismatches += not (same and same_curve)
            continue
        save_model(model, curve, path, train_seconds=f"{wall:.1f}", cpu_seconds=f"{cpu:.1f}", torch=torch.__version__)
        print(f"  saved {path} ({path.stat().st_size:,} bytes)")
    if mismatches:
        raise SystemExit(f"{mismatches} model(s) differ from the committed files")


if __name__ == "__main__":
    main()
