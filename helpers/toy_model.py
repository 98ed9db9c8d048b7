"""Notebook 10's tiny Transformer and its toy task: reverse a sequence of letters.

The model is the series' own layers stacked: token and learned position embeddings, a few
pre-norm :class:`helpers.EncoderBlock` s, a final :class:`helpers.LayerNorm` and a linear
read-out to the vocabulary. Notebook 10 builds the same class and training loop in its
cells and checks them equal to these; ``scripts/train_toy_model.py`` uses these to write
``data/toy_reverse_model.safetensors`` and the one-layer variant
``data/toy_reverse_model_1layer.safetensors`` (loaded without pickle).
:func:`ablate_attention` switches one layer's attention off, to test what a map suggests.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import save_file
from torch import nn
from tqdm import tqdm

from .data import DATA_DIR
from .i18n import translate as tr
from .layers import EncoderBlock, LayerNorm
from .masks import padding_mask
from .training import float64_by_default, float64_training, one_thread

PAD = 0
LETTERS = "ABCDEFGHIJ"
VOCAB = ["_", *LETTERS]  # id 0 is padding, shown as "_"
WEIGHTS_FILE = "toy_reverse_model.safetensors"
ONE_LAYER_FILE = "toy_reverse_model_1layer.safetensors"  # the same config with num_layers=1


@dataclass(frozen=True)
class ToyConfig:
    """Sizes of the model and the task, and the seeds and schedule that train it."""

    max_len: int = 8  # sequences are padded to this length
    min_len: int = 2
    d_model: int = 32
    num_heads: int = 2
    num_layers: int = 2
    d_ff: int = 64
    steps: int = 200
    batch_size: int = 128
    lr: float = 5e-3
    init_seed: int = 0
    data_seed: int = 1

    @property
    def vocab_size(self) -> int:
        return len(VOCAB)


def encode(text: str, max_len: int = 8) -> torch.Tensor:
    """Letters A-J -> token ids, padded with 0 to ``max_len``: shape (max_len,)."""
    if not 1 <= len(text) <= max_len or any(c not in LETTERS for c in text):
        raise ValueError(tr(f"text must be 1 to {max_len} letters from {LETTERS!r}, got {text!r}"))
    ids = [VOCAB.index(c) for c in text] + [PAD] * (max_len - len(text))
    return torch.tensor(ids)


def decode(ids) -> str:
    """Token ids -> letters, padding dropped."""
    return "".join(VOCAB[int(i)] for i in ids if int(i) != PAD)


def reverse_targets(x: torch.Tensor) -> torch.Tensor:
    """The answer to the task: each row's real tokens reversed, padding left in place."""
    lengths = (x != PAD).sum(dim=-1, keepdim=True)  # (B, 1)
    positions = torch.arange(x.shape[-1])
    source = (lengths - 1 - positions).clamp(min=0)  # output position i copies input n - 1 - i
    return torch.where(positions < lengths, x.gather(-1, source), torch.full_like(x, PAD))


def make_batch(batch_size: int, generator: torch.Generator, config: ToyConfig = ToyConfig()):
    """Random sequences of min_len..max_len letters, padded: (x, y), both (B, max_len) ids."""
    lengths = torch.randint(config.min_len, config.max_len + 1, (batch_size, 1), generator=generator)
    letters = torch.randint(1, config.vocab_size, (batch_size, config.max_len), generator=generator)
    x = torch.where(torch.arange(config.max_len) < lengths, letters, torch.full_like(letters, PAD))
    return x, reverse_targets(x)


class ToyReverser(nn.Module):
    """Embeddings + learned positions -> EncoderBlocks (pre-norm) -> LayerNorm -> logits.

    After a forward pass, ``blocks[i].attn_weights`` holds layer i's weights (B, h, n, n).
    """

    def __init__(self, config: ToyConfig = ToyConfig()) -> None:
        super().__init__()
        self.config = config
        self.tokens = nn.Embedding(config.vocab_size, config.d_model)
        self.positions = nn.Embedding(config.max_len, config.d_model)
        self.blocks = nn.ModuleList(
            EncoderBlock(config.d_model, config.num_heads, config.d_ff, norm_first=True) for _ in range(config.num_layers)
        )
        self.norm = LayerNorm(config.d_model)
        self.readout = nn.Linear(config.d_model, config.vocab_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, n) token ids, 0 = padding -> logits (B, n, vocab)."""
        if x.ndim != 2 or x.is_floating_point():
            raise ValueError(tr(f"x must be (B, n) integer token ids, got {x.dtype} of shape {tuple(x.shape)}"))
        if x.shape[1] > self.config.max_len:
            raise ValueError(tr(f"sequences of at most {self.config.max_len} tokens, got {x.shape[1]}"))
        mask = padding_mask(x, PAD)  # (B, 1, 1, n): no query looks at padding
        stream = self.tokens(x) + self.positions(torch.arange(x.shape[1]))  # the residual stream (B, n, d_model)
        for block in self.blocks:
            stream = block(stream, mask)
        return self.readout(self.norm(stream))

    def attention(self) -> torch.Tensor:
        """Weights of the last forward pass, stacked: (layers, B, heads, n, n)."""
        return torch.stack([block.attn_weights for block in self.blocks])


def build_model(config: ToyConfig = ToyConfig()) -> ToyReverser:
    """A freshly initialised model: the same numbers on any CPU for the same init_seed.

    The random initial weights are drawn in float64 and rounded to float32
    (:func:`helpers.training.float64_by_default` says why).
    """
    torch.manual_seed(config.init_seed)
    with float64_by_default():
        model = ToyReverser(config)
    return model.float()


def token_accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of real (non-pad) output tokens predicted right."""
    with torch.no_grad():
        predicted = model(x).argmax(dim=-1)
    real = x != PAD
    return (predicted == y)[real].float().mean().item()


def train(model: ToyReverser, config: ToyConfig | None = None, progress: bool = True) -> list[float]:
    """AdamW with a one-cycle schedule, cross-entropy on real tokens; returns the losses.

    Trains in float64 and leaves the model in float32 (:func:`helpers.training.float64_training`),
    so the weights come out the same on any CPU to within a few float32 ulps. Seeded data.
    The progress bar goes to stderr.
    """
    config = config or model.config
    generator = torch.Generator().manual_seed(config.data_seed)
    losses = []
    with float64_training(model):
        optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
        schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=config.lr, total_steps=config.steps)
        model.train()
        for _ in tqdm(range(config.steps), desc="training", disable=not progress, mininterval=0.5):
            x, y = make_batch(config.batch_size, generator, config)
            logits = model(x)
            real = x != PAD
            loss = F.cross_entropy(logits[real], y[real])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            losses.append(loss.item())
    model.eval()
    return losses


@contextmanager
def ablate_attention(model: ToyReverser, layer: int) -> Iterator[ToyReverser]:
    """Inside the ``with``, layer ``layer``'s attention sublayer adds zeros to the residual stream.

    Its weights are still computed (and stored in ``attn_weights``); only its output, the
    weighted sum of values after W_O, is replaced by zeros. The MLPs and other layers run as usual.
    """
    if not 0 <= layer < len(model.blocks):
        raise ValueError(tr(f"layer must be 0..{len(model.blocks) - 1}, got {layer!r}"))
    handle = model.blocks[layer].self_attn.register_forward_hook(lambda _m, _i, out: (torch.zeros_like(out[0]), out[1]))
    try:
        yield model
    finally:
        handle.remove()


def held_out_set(config: ToyConfig = ToyConfig(), size: int = 2000, seed: int = 1234):
    """Held-out sequences (a seed the training never uses): (x, y)."""
    return make_batch(size, torch.Generator().manual_seed(seed), config)


def save_model(model: ToyReverser, path: str | Path, **metadata: str) -> None:
    """Weights as safetensors, the config as JSON in the file's metadata (no pickle)."""
    meta = {"config": json.dumps(asdict(model.config)), **{k: str(v) for k, v in metadata.items()}}
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(path), metadata=meta)


def load_model(path: str | Path | None = None) -> ToyReverser:
    """Load a model saved by :func:`save_model`; default: the committed trained weights."""
    path = Path(path) if path is not None else DATA_DIR / WEIGHTS_FILE
    if not path.exists():
        raise FileNotFoundError(tr(f"{path} is missing; run `python scripts/train_toy_model.py` to make it"))
    with safe_open(str(path), framework="pt") as f:
        config = ToyConfig(**json.loads(f.metadata()["config"]))
        state = {k: f.get_tensor(k) for k in f.keys()}
    model = ToyReverser(config)
    model.load_state_dict(state)
    return model.eval()


def load_metadata(path: str | Path | None = None) -> dict[str, str]:
    """The metadata strings stored beside the weights (config, training time, accuracy)."""
    path = Path(path) if path is not None else DATA_DIR / WEIGHTS_FILE
    with safe_open(str(path), framework="pt") as f:
        return dict(f.metadata())


def train_and_time(config: ToyConfig = ToyConfig(), progress: bool = True) -> tuple[ToyReverser, list[float], float]:
    """Build, train on one thread, and return (model, losses, seconds)."""
    with one_thread():
        model = build_model(config)
        start = time.perf_counter()
        losses = train(model, config, progress=progress)
        seconds = time.perf_counter() - start
    return model, losses, seconds
