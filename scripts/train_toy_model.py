"""Train notebook 10's toy reversers and save them to data/ as safetensors.

    .venv/bin/python scripts/train_toy_model.py            # train, report, save
    .venv/bin/python scripts/train_toy_model.py --check    # train, report, compare with the saved files

Two models, the same code and seeds as the notebook (helpers.toy_model), on one CPU thread:
the two-layer reverser (data/toy_reverse_model.safetensors) and the same config with one
layer (data/toy_reverse_model_1layer.safetensors, for exercise 10.5). The one-layer model
is also trained ten times longer, and that run's held-out accuracy is stored in its file's
metadata (the long run's weights are not kept). Prints the wall-clock and CPU time of each
training loop (on a shared machine the CPU time is the better estimate of what a quiet
machine would take) and the held-out token accuracy. About a minute on a 2-core laptop.
"""

import argparse
import time
from dataclasses import replace

import torch

from helpers.data import DATA_DIR
from helpers.toy_model import (
    ONE_LAYER_FILE,
    WEIGHTS_FILE,
    ToyConfig,
    held_out_set,
    load_metadata,
    load_model,
    save_model,
    token_accuracy,
    train_and_time,
)

LONG_RUN = 10  # the one-layer model's long run: this many times the steps


def train_one(config: ToyConfig, progress: bool) -> tuple[torch.nn.Module, dict[str, str]]:
    """Train on one thread; print and return the model and its metadata strings."""
    cpu_start = time.process_time()
    model, losses, seconds = train_and_time(config, progress=progress)
    cpu_seconds = time.process_time() - cpu_start
    accuracy = token_accuracy(model, *held_out_set(config))
    print(f"{config.num_layers} layer(s), {config.steps} steps in {seconds:.2f} s wall, {cpu_seconds:.2f} s CPU; "
          f"final loss {losses[-1]:.4f}; held-out token accuracy {accuracy:.2%}")
    meta = {"train_seconds": f"{seconds:.2f}", "cpu_seconds": f"{cpu_seconds:.2f}",
            "held_out_accuracy": f"{accuracy:.4f}", "torch": torch.__version__}
    return model, meta


def check(model: torch.nn.Module, path) -> None:
    """Compare a fresh run with the committed file: bit for bit, else by how much and by predictions.

    On the machine and PyTorch build that wrote the file the run is bit-identical; another CPU
    may round a few operations differently, and the differences grow a little over training.
    """
    saved = load_model(path)
    pairs = list(zip(model.state_dict().values(), saved.state_dict().values(), strict=True))
    largest = max((a - b).abs().max().item() for a, b in pairs)
    x, _ = held_out_set(saved.config)
    with torch.no_grad():
        agree = (model(x).argmax(-1) == saved(x).argmax(-1))[x != 0].float().mean().item()
    stored = {k: v for k, v in load_metadata(path).items() if k.startswith("held_out")}
    print(f"{path.name}: bit-identical {largest == 0}; largest weight difference {largest:.2e}; "
          f"same held-out predictions on {agree:.2%} of tokens; stored accuracies {stored}")


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

    for name, (model, meta) in models.items():
        path = DATA_DIR / name
        if args.check:
            check(model, path)
            continue
        save_model(model, path, **meta)
        print(f"saved {path} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
