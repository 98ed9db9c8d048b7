"""Train notebook 10b's decoders (2 layers, and the 1-layer control) and save them to data/.

    .venv/bin/python scripts/train_induction.py            # train both, report, save
    .venv/bin/python scripts/train_induction.py --check    # train both, compare with the saved files

Writes data/induction_2layer.safetensors and data/induction_1layer.safetensors: weights, the
training curve (loss per step on the first pass and on the repeats, head scores every
eval_every steps) and the config as metadata. Same code and seeds as the notebook
(helpers.induction), on one CPU thread. Prints the wall-clock and CPU time of each training
loop (on a shared machine the CPU time is the better estimate of what a quiet machine would take).

Training runs in float64 and stores float32 weights (helpers.training), so any CPU gets the
stored weights to within a few units in their last place. ``--check`` compares a fresh run with
the committed files: the weights and the training curve within the tolerances below (it prints
them), and the held-out metrics notebook 10b prints (three decimals) and the step of the
induction bump exactly; it exits with an error if anything differs. About 90 s of CPU.
"""

import argparse

import torch

from helpers.data import DATA_DIR
from helpers.induction import (
    WEIGHTS,
    InductionConfig,
    TinyDecoder,
    bump_step,
    held_out_set,
    load_curve,
    load_model,
    one_layer,
    save_model,
    split_metrics,
    train_and_time,
)
from helpers.training import largest_difference, within

WEIGHT_TOLERANCE = 1e-5  # largest |Δ| of a weight (they are of order 0.1 to 3); measured: under 1e-6
CURVE_TOLERANCE = 1e-5  # largest |Δ| of a stored loss or head score; measured: under 1e-6


def printed_metrics(model: TinyDecoder, curve: dict[str, torch.Tensor]) -> dict[str, str]:
    """The held-out loss and accuracy on the first pass and the repeats, and the bump step, as notebook 10b prints them."""
    x, periods = held_out_set(model.config)
    metrics = {name: f"{value:.3f}" for name, value in split_metrics(model, x, periods).items()}
    return metrics | {"induction bump at step": str(bump_step(curve["loss_repeats"]))}


def check(model: TinyDecoder, curve: dict[str, torch.Tensor], path) -> bool:
    """Compare a fresh run with the committed file; print each comparison; True if all agree."""
    saved, saved_curve = load_model(path), load_curve(path)
    print(f"  compared with {path.name}:")
    ok = within("weights", largest_difference(model.state_dict(), saved.state_dict()), WEIGHT_TOLERANCE)
    ok &= within("training curve", largest_difference(curve, saved_curve), CURVE_TOLERANCE)
    committed = printed_metrics(saved, saved_curve)
    for name, value in printed_metrics(model, curve).items():
        same = value == committed[name]
        print(f"  {name}: {value} (committed: {committed[name]}){'' if same else '  DIFFERENT'}")
        ok &= same
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="do not write; compare with the committed weights")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args()

    torch.manual_seed(0)  # build_model reseeds with the config's init_seed; this covers anything else
    mismatches = 0
    for config in (InductionConfig(), one_layer()):
        model, curve, wall, cpu = train_and_time(config, progress=not args.no_progress)
        print(f"{config.num_layers} layer(s): {config.steps} steps in {wall:.1f} s wall, {cpu:.1f} s CPU; "
              + ", ".join(f"{k} {v}" for k, v in printed_metrics(model, curve).items()))
        path = DATA_DIR / WEIGHTS[config.num_layers]
        if args.check:
            mismatches += not check(model, curve, path)
            continue
        save_model(model, curve, path, train_seconds=f"{wall:.1f}", cpu_seconds=f"{cpu:.1f}", torch=torch.__version__)
        print(f"  saved {path} ({path.stat().st_size:,} bytes)")
    if mismatches:
        raise SystemExit(f"{mismatches} model(s) differ from the committed files beyond the tolerances")
    if args.check:
        print("both models agree with their committed files within the tolerances")


if __name__ == "__main__":
    main()
