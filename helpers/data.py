"""Paths to and loaders for the small files committed under ``data/`` (no downloads)."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file

from .i18n import translate as tr

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def data_path(name: str) -> Path:
    """Absolute path of ``data/<name>``; a clear error if it is missing."""
    path = DATA_DIR / name
    if not path.exists():
        raise FileNotFoundError(tr(f"{path} is missing: is this a complete checkout of Attention Lab?"))
    return path


def load_json(name: str):
    """Parsed contents of ``data/<name>`` (a JSON file)."""
    return json.loads(data_path(name).read_text(encoding="utf-8"))


def load_tensors(name: str) -> dict[str, torch.Tensor]:
    """Tensors stored in ``data/<name>`` as safetensors (no pickle is ever loaded)."""
    return load_file(str(data_path(name)))
