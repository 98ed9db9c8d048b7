"""Train notebook 10's toy reversers and save them to data/ as safetensors.

    .venv/bin/python scripts/train_toy_model.py            # train, report, save
    .venv/bin/python scripts/train_toy_model.py --check    # train, report, compare with the saved files

Two models, the same code and seeds as the notebook (helpers.toy_model), on one CPU thread:
the two-layer reverser (data/toy_reverse_model.safetensors) and the same config with one
layer (data/toy_reverse_model_1layer.safetensors, for exercise 10.5). The one-layer model
is also trained ten times longer, and that run's held-out accuracy is stored in its file's
metadata (the long run's weights are not kept). Prints the wall-clock and CPU time of each
training loop (on a shared machine the CPU time is the better estimate of what a quiet
machine would take) and the held-out token accuracy.

Training runs in float64 and stores float32 weights (helpers.training), so any CPU gets the
stored weights to within a few units in their last place. ``--check`` compares a fresh run with
the committed files: the weights and the loss curve within the tolerances below (it prints
them), and the accuracies notebook 10 prints from these files exactly; it exits with an error
if anything differs. About 30 s of CPU.
"""

import argparse
import json
import time
from dataclasses import replace

import torch

from helpers.data import DATA_DIR
from helpers.toy_model import (
    ONE_LAYER_FILE,
    WEIGHTS_FILE,
    ToyConfig,
    ToyReverser,
    ablate_attention,
    held_out_set,
    load_metadata,
    load_model,
    save_model,
    token_accuracy,
    train_and_time,
)
from helpers.training import largest_difference, within

LONG_RUN = 10  # the one-layer model's long run: this many times the steps
WEIGHT_TOLERANCE = 1e-5  # largest |Δ| of a weight (they are of order 0.1 to 3); measured: under 1e-6
CURVE_TOLERANCE = 1e-6  # largest |Δ| of a training loss; measured: under 1e-9


def train_one(config: ToyConfig, progress: bool) -> tuple[ToyReverser, dict[str, str]]:
    """Train on one thread; print and return the model and its metadata strings."""
    cpu_start = time.process_time()
    model, losses, seconds = train_and_time(config, progress=progress)
    cpu_seconds = time.process_time() - cpu_start
    accuracy = token_accuracy(model, *held_out_set(config))
    print(f"{config.num_layers} layer(s), {config.steps} steps in {seconds:.2f} s wall, {cpu_seconds:.2f} s CPU; "
          f"final loss {losses[-1]:.4f}; held-out token accuracy {accuracy:.2%}")
    meta = {"train_seconds": f"{seconds:.2f}", "cpu_seconds": f"{cpu_seconds:.2f}", "losses": json.dumps(losses),
            "held_out_accuracy": f"{accuracy:.4f}", "torch": torch.__version__}
    return model, meta


def printed_metrics(model: ToyReverser) -> dict[str, str]:
    """Held-out token accuracy intact and with each layer's attention switched off, as notebook 10 prints them."""
    x, y = held_out_set(model.config)
    metrics = {"held-out accuracy": f"{token_accuracy(model, x, y):.1%}"}
    for layer in range(model.config.num_layers):
        with ablate_attention(model, layer):
            metrics[f"layer {layer}'s attention off"] = f"{token_accuracy(model, x, y):.1%}"
    return metrics


def check(model: ToyReverser, meta: dict[str, str], path) -> bool:
    """Compare a fresh run with the committed file; print each comparison; True if all agree."""
    saved, stored = load_model(path), load_metadata(path)
    print(f"{path.name}:")
    ok = within("weights", largest_difference(model.state_dict(), saved.state_dict()), WEIGHT_TOLERANCE)
    losses, saved_losses = torch.tensor(json.loads(meta["losses"])), torch.tensor(json.loads(stored["losses"]))
    ok &= within("loss curve", largest_difference({"losses": losses}, {"losses": saved_losses}), CURVE_TOLERANCE)
    fresh_metrics, saved_metrics = printed_metrics(model), printed_metrics(saved)
    fresh_metrics |= {k: v for k, v in meta.items() if k.startswith("held_out")}
    saved_metrics |= {k: v for k, v in stored.items() if k.startswith("held_out")}
    for name, value in fresh_metrics.items():
        same = value == saved_metrics.get(name)
        print(f"  {name}: {value} (committed: {saved_metrics.get(name)}){'' if same else '  DIFFERENT'}")
        ok &= same
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="do not write; compare with the committed weights")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args()

    two_layers = ToyConfig()
    one_layer = replace(two_layers, num_layers=1)
    models = {WEIGHTS_FILE: train_one(two_layers, not args.no_progress), ONE_LAYER_FILE: train_one(one_layer, not args.no_progress)}
    long_config = replace(one_layer, steps=LONG_RUN * one_layer.steps)
    _, long_meta = train_one(long_config, not args.no_progress)
    models[ONE_LAYER_FILE][1][f"held_out_accuracy_{long_config.steps}_steps"] = long_meta["held_out_accuracy"]

    if args.check:
        differ = [name for name, (model, meta) in models.items() if not check(model, meta, DATA_DIR / name)]
        if differ:
            raise SystemExit(f"differ from the committed files beyond the tolerances: {', '.join(differ)}")
        print("every model agrees with its committed file within the tolerances")
        return
    for name, (model, meta) in models.items():
        path = DATA_DIR / name
        save_model(model, path, **meta)
        print(f"saved {path} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
