"""Train notebook 10's toy reverser and save it to data/toy_reverse_model.safetensors.

    .venv/bin/python scripts/train_toy_model.py            # train, report, save
    .venv/bin/python scripts/train_toy_model.py --check    # train, report, compare with the saved file

The same code and seeds as the notebook (helpers.toy_model), on one CPU thread. Prints the
wall-clock and CPU time of the training loop (on a shared machine the CPU time is the
better estimate of what a quiet machine would take) and the held-out token accuracy.
"""

import argparse
import time

import torch

from helpers.data import DATA_DIR
from helpers.toy_model import (
    WEIGHTS_FILE,
    ToyConfig,
    held_out_set,
    load_model,
    save_model,
    token_accuracy,
    train_and_time,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="do not write; compare with the committed weights")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args()

    config = ToyConfig()
    cpu_start = time.process_time()
    model, losses, seconds = train_and_time(config, progress=not args.no_progress)
    cpu_seconds = time.process_time() - cpu_start
    x, y = held_out_set(config)
    accuracy = token_accuracy(model, x, y)
    print(f"{config.steps} steps in {seconds:.2f} s wall, {cpu_seconds:.2f} s CPU; final loss {losses[-1]:.4f}; "
          f"held-out token accuracy {accuracy:.2%}")
    path = DATA_DIR / WEIGHTS_FILE
    if args.check:
        saved = load_model(path)
        same = all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), saved.state_dict().values(), strict=True))
        print(f"bit-identical to {path.name}: {same}; saved model's accuracy {token_accuracy(saved, x, y):.2%}")
        return
    save_model(model, path, train_seconds=f"{seconds:.2f}", cpu_seconds=f"{cpu_seconds:.2f}",
               held_out_accuracy=f"{accuracy:.4f}", torch=torch.__version__)
    print(f"saved {path} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
