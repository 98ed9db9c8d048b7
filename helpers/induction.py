"""Notebook 10b's decoder: a two-layer causal language model that learns induction heads.

The task: a sequence is a block of P different letters in random order (P from
``min_period`` to ``max_period``, drawn per sequence and never given to the model), repeated
until it is n tokens long. A model that predicts the next token can only guess during the
first pass; from position P on, the next token is the one that followed the previous
occurrence of the current token, *if* the model can find it.

- :class:`InductionConfig`, :func:`make_batch`, :func:`repeated_sequence`: the data.
- :class:`TinyDecoder`: token + learned position embeddings, pre-norm
  :class:`helpers.EncoderBlock` s with a causal mask (a decoder-only block is an encoder
  block that may not look ahead), final :class:`helpers.LayerNorm`, linear read-out.
- :func:`previous_token_score`, :func:`prefix_matching_score`: what a head attends to.
- :func:`ov_circuit`, :func:`qk_circuit`, :func:`copying_score`: what a head writes and where it
  looks, read from its weights (Elhage et al. 2021's OV and QK circuits; Olsson et al. 2022's
  copying score).
- :func:`ablate_heads`, :func:`mean_ablate_heads`: a copy of a model with some heads' outputs
  removed (zeroed, or replaced by their mean at each position).
- :func:`generate`: greedy or temperature sampling, with a KV cache or by full recompute.
- :func:`train`, :func:`save_model`, :func:`load_model`: ``scripts/train_induction.py``
  writes ``data/induction_2layer.safetensors`` and ``data/induction_1layer.safetensors``
  (weights plus the training curve; no pickle).
"""

from __future__ import annotations

import copy
import json
import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import save_file
from torch import nn
from tqdm import tqdm

from .attention import scaled_dot_product_attention
from .data import DATA_DIR
from .i18n import N_
from .i18n import translate as tr
from .layers import EncoderBlock, LayerNorm, merge_heads, split_heads
from .masks import causal_mask
from .scale import KVCache
from .training import float64_by_default, float64_training, one_thread

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
WEIGHTS = {2: "induction_2layer.safetensors", 1: "induction_1layer.safetensors"}
CURVE = "curve/"  # prefix of the training-curve tensors stored beside the weights


@dataclass(frozen=True)
class InductionConfig:
    """Sizes of the model and the task, and the seeds and schedule that train it."""

    n: int = 32  # tokens per sequence (and the longest context the positions cover)
    min_period: int = 4
    max_period: int = 16
    vocab_size: int = 26  # the letters A-Z
    d_model: int = 48
    num_heads: int = 2
    num_layers: int = 2
    d_ff: int = 96
    steps: int = 1000
    batch_size: int = 64
    lr: float = 2e-3
    weight_decay: float = 0.01
    init_seed: int = 0
    data_seed: int = 1
    eval_every: int = 25  # steps between the held-out evaluations stored in the curve


# --- data ---------------------------------------------------------------------------


def repeated_sequence(period: int, seed: int, config: InductionConfig = InductionConfig()) -> torch.Tensor:
    """One sequence: ``period`` different random letters, repeated to n tokens. Shape (n,)."""
    if not isinstance(period, int) or not 1 <= period <= min(config.n, config.vocab_size):
        raise ValueError(tr(f"period must be an integer from 1 to {min(config.n, config.vocab_size)}, got {period!r}"))
    generator = torch.Generator().manual_seed(seed)
    block = torch.randperm(config.vocab_size, generator=generator)[:period]
    return block[torch.arange(config.n) % period]


def make_batch(batch_size: int, generator: torch.Generator, config: InductionConfig = InductionConfig()):
    """(x, periods): x (B, n) token ids, each row a random block of P letters repeated; periods (B,)."""
    periods = torch.randint(config.min_period, config.max_period + 1, (batch_size,), generator=generator)
    blocks = torch.rand(batch_size, config.vocab_size, generator=generator).argsort(dim=-1, stable=True)  # a permutation per row
    positions = torch.arange(config.n)[None, :] % periods[:, None]  # (B, n): which block letter
    return blocks.gather(1, positions), periods


def repeat_mask(periods: torch.Tensor, n: int) -> torch.Tensor:
    """(B, n) bool: True at query positions i >= P, where the current token has been seen before."""
    return torch.arange(n)[None, :] >= periods[:, None]


def decode(ids) -> str:
    """Token ids -> letters."""
    return "".join(LETTERS[int(i)] for i in ids)


def encode(text: str) -> torch.Tensor:
    """Letters A-Z -> token ids, shape (len(text),)."""
    if not isinstance(text, str) or not text or any(c not in LETTERS for c in text):
        raise ValueError(tr(f"text must be capital letters A-Z, got {text!r}"))
    return torch.tensor([LETTERS.index(c) for c in text])


# --- model --------------------------------------------------------------------------


class TinyDecoder(nn.Module):
    """Embeddings + learned positions -> causal EncoderBlocks (pre-norm) -> LayerNorm -> logits.

    After a forward pass, ``blocks[l].attn_weights`` holds layer l's weights (B, h, n, n).
    """

    def __init__(self, config: InductionConfig = InductionConfig()) -> None:
        super().__init__()
        self.config = config
        self.tokens = nn.Embedding(config.vocab_size, config.d_model)
        self.positions = nn.Embedding(config.n, config.d_model)
        self.blocks = nn.ModuleList(
            EncoderBlock(config.d_model, config.num_heads, config.d_ff, norm_first=True) for _ in range(config.num_layers)
        )
        self.norm = LayerNorm(config.d_model)
        self.readout = nn.Linear(config.d_model, config.vocab_size)

    def _check_ids(self, ids: torch.Tensor, start: int = 0) -> None:
        if not isinstance(ids, torch.Tensor) or ids.ndim != 2 or ids.is_floating_point():
            shape = f"{ids.dtype} of shape {tuple(ids.shape)}" if isinstance(ids, torch.Tensor) else type(ids).__name__
            raise ValueError(tr(f"ids must be (B, n) integer token ids, got {shape}"))
        if start + ids.shape[1] > self.config.n:
            raise ValueError(tr(f"positions {start}..{start + ids.shape[1] - 1} exceed the model's {self.config.n} positions"))

    def embed(self, ids: torch.Tensor, start: int = 0) -> torch.Tensor:
        """(B, n_new) ids at positions start.. -> (B, n_new, d_model)."""
        return self.tokens(ids) + self.positions(torch.arange(start, start + ids.shape[1]))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids: (B, n) token ids -> logits (B, n, vocab); position i predicts token i + 1."""
        self._check_ids(ids)
        x = self.embed(ids)  # (B, n, d_model)
        mask = causal_mask(ids.shape[1])  # (n, n): query i sees keys 0..i
        for block in self.blocks:
            x = block(x, mask)
        return self.readout(self.norm(x))

    def attention(self) -> torch.Tensor:
        """Weights of the last forward pass, stacked: (layers, B, h, n, n)."""
        return torch.stack([block.attn_weights for block in self.blocks])

    def forward_cached(self, ids: torch.Tensor, caches: list[KVCache]) -> torch.Tensor:
        """The new tokens ids (B, n_new), attending to themselves and to what ``caches`` hold.

        Appends the new keys and values to each layer's cache; returns logits (B, n_new, vocab).
        """
        start = len(caches[0])
        self._check_ids(ids, start)
        x = self.embed(ids, start)  # (B, n_new, d_model)
        for block, cache in zip(self.blocks, caches, strict=True):
            x = x + cached_attention(block.self_attn, block.norm1(x), cache)
            x = x + block.ffn(block.norm2(x))
        return self.readout(self.norm(x))


def decode_mask(n_new: int, n_total: int) -> torch.Tensor:
    """(n_new, n_total) bool: the last n_new rows of ``causal_mask(n_total)``.

    New query q sits at position n_total - n_new + q and sees keys 0..that position. (PyTorch's
    ``is_causal=True`` aligns its triangle to the top-left corner instead, which is only right
    when n_new == n_total.)
    """
    return causal_mask(n_total)[n_total - n_new :]


def cached_attention(attn, x: torch.Tensor, cache: KVCache) -> torch.Tensor:
    """A :class:`helpers.MultiHeadAttention` for new tokens x (B, n_new, d_model) with a KV cache."""
    q = split_heads(attn.w_q(x), attn.num_heads)  # (B, h, n_new, d_k)
    k, v = cache.append(split_heads(attn.w_k(x), attn.num_heads), split_heads(attn.w_v(x), attn.num_heads))
    out, _ = scaled_dot_product_attention(q, k, v, mask=decode_mask(x.shape[1], k.shape[-2]))
    return attn.w_o(merge_heads(out))  # (B, n_new, d_model)


def build_model(config: InductionConfig = InductionConfig()) -> TinyDecoder:
    """A freshly initialised model: the same numbers on any CPU for the same init_seed.

    The random initial weights are drawn in float64 and rounded to float32
    (:func:`helpers.training.float64_by_default` says why).
    """
    torch.manual_seed(config.init_seed)
    with float64_by_default():
        model = TinyDecoder(config)
    return model.float().eval()


# --- what the heads do --------------------------------------------------------------


def _check_weights(weights: torch.Tensor) -> None:
    if not isinstance(weights, torch.Tensor) or weights.ndim < 2 or weights.shape[-1] != weights.shape[-2]:
        shape = tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights).__name__
        raise ValueError(tr(f"weights must be (..., n, n) self-attention weights, got {shape}"))


def previous_token_score(weights: torch.Tensor) -> torch.Tensor:
    """Mean weight query i puts on key i - 1 (i = 1..n-1). weights (..., n, n) -> (...)."""
    _check_weights(weights)
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=-1)


def prefix_targets(tokens: torch.Tensor) -> torch.Tensor:
    """(..., n) ids -> (..., n, n) bool: key j + 1 is a target of query i when j < i and x_j = x_i.

    The key *after* an earlier occurrence of the current token: where an induction head looks.
    """
    n = tokens.shape[-1]
    earlier = (tokens[..., :, None] == tokens[..., None, :]) & torch.ones(n, n, dtype=torch.bool).tril(-1)
    return F.pad(earlier, (1, 0))[..., :, :n]  # shift the matches one key to the right


def prefix_matching_score(weights: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Weight on :func:`prefix_targets`, averaged over the queries that have one.

    weights (..., B, h, n, n) or (B, h, n, n); tokens (B, n) -> score per head (..., h).
    """
    _check_weights(weights)
    if tokens.ndim != 2 or weights.shape[-1] != tokens.shape[-1] or weights.shape[-4] != tokens.shape[0]:
        raise ValueError(tr(f"weights (..., B, h, n, n) and tokens (B, n) disagree: {tuple(weights.shape)}, {tuple(tokens.shape)}"))
    targets = prefix_targets(tokens)[:, None]  # (B, 1, n, n)
    has_target = targets.any(dim=-1)  # (B, 1, n)
    per_query = (weights * targets).sum(dim=-1)  # (..., B, h, n)
    return (per_query * has_target).sum(dim=(-3, -1)) / has_target.sum()


def head_scores(model: TinyDecoder, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """Run the model on x (B, n); each score per head, shape (layers, h)."""
    with torch.no_grad():
        model(x)
    weights = model.attention()  # (L, B, h, n, n)
    return {
        "previous-token": previous_token_score(weights).mean(dim=1),
        "prefix-matching": prefix_matching_score(weights, x),
    }


def ablate_heads(model: TinyDecoder, heads: list[tuple[int, int]]) -> TinyDecoder:
    """A copy of ``model`` whose listed (layer, head) pairs add nothing to the residual stream.

    Zeroes the head's d_k columns of W_O, so its output never reaches the next layer.
    """
    ablated = copy.deepcopy(model)
    for layer, head in heads:
        cols = _head_columns(model, layer, head)
        with torch.no_grad():
            ablated.blocks[layer].self_attn.w_o.weight[:, cols] = 0
    return ablated


def _head_columns(model: TinyDecoder, layer: int, head: int) -> slice:
    """The d_k features of ``head`` in layer ``layer``: its rows of W_Q, W_K, W_V, its columns of W_O."""
    if not (0 <= layer < model.config.num_layers and 0 <= head < model.config.num_heads):
        raise ValueError(tr(f"no head ({layer}, {head}) in a model of {model.config.num_layers} layers × {model.config.num_heads} heads"))
    d_k = model.config.d_model // model.config.num_heads
    return slice(head * d_k, (head + 1) * d_k)


def _written(model: TinyDecoder, layer: int, head: int, inputs: torch.Tensor) -> torch.Tensor:
    """What the head writes into the residual stream when it attends to ``inputs`` (t, d_model): (t, d_model).

    The head's value and output maps, W_O^h W_V^h, after its LayerNorm's gain γ (float64; the
    norm's centring and scaling and the biases left out).
    """
    attn, cols = model.blocks[layer].self_attn, _head_columns(model, layer, head)
    gain = model.blocks[layer].norm1.weight.double()
    w_v, w_o = attn.w_v.weight[cols].double(), attn.w_o.weight[:, cols].double()  # (d_k, d_model), (d_model, d_k)
    return (inputs * gain) @ w_v.T @ w_o.T


@torch.no_grad()
def ov_circuit(model: TinyDecoder, layer: int, head: int) -> torch.Tensor:
    """The head's OV circuit on the direct path: (vocab, vocab), float64.

    Row t, column u: how much the head raises the logit of token u when it attends (with all its
    weight) to a position holding token t, through W_E, the LayerNorm gains, W_V^h, W_O^h and W_U.
    Left out: LayerNorm's centring and division by the spread, the biases, the positions and every
    path through another layer or an FFN. A head that copies has a large positive diagonal.
    """
    written = _written(model, layer, head, model.tokens.weight.double())  # (vocab, d_model)
    return (written * model.norm.weight.double()) @ model.readout.weight.double().T


@torch.no_grad()
def qk_circuit(model: TinyDecoder, head: int, via: int | None = None) -> torch.Tensor:
    """A layer-1 head's QK circuit over tokens: (vocab, vocab), float64; row x the query's token.

    Column y: the score (before the 1/√d_k and the softmax) the query gives a key position that
    holds token y (``via=None``, the direct path), or whose residual stream holds what the layer-0
    head ``via`` writes when it attends to token y (K-composition: y is then the key's *previous*
    token for a previous-token head). LayerNorm gains in, centring, scaling and biases left out.
    """
    if model.config.num_layers < 2:
        raise ValueError(tr(f"qk_circuit reads layer 1; this model has {model.config.num_layers} layer(s)"))
    attn, cols = model.blocks[1].self_attn, _head_columns(model, 1, head)
    gain = model.blocks[1].norm1.weight.double()
    tokens = model.tokens.weight.double()  # (vocab, d_model)
    keys_hold = tokens if via is None else _written(model, 0, via, tokens)
    queries = (tokens * gain) @ attn.w_q.weight[cols].double().T  # (vocab, d_k)
    keys = (keys_hold * gain) @ attn.w_k.weight[cols].double().T  # (vocab, d_k)
    return queries @ keys.T


@torch.no_grad()
def copying_score(matrix: torch.Tensor) -> float:
    """Σλ / Σ|λ| over the eigenvalues λ of a square matrix: +1 for a pure copy (c·I, c > 0), -1 for
    its opposite, near 0 for a map that sends each token somewhere else. Σλ is the trace."""
    if not isinstance(matrix, torch.Tensor) or matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        shape = tuple(matrix.shape) if isinstance(matrix, torch.Tensor) else type(matrix).__name__
        raise ValueError(tr(f"matrix must be square (t, t), got {shape}"))
    eigenvalues = torch.linalg.eigvals(matrix.double())
    return (eigenvalues.sum().real / eigenvalues.abs().sum()).item()


def mean_ablate_heads(model: TinyDecoder, heads: list[tuple[int, int]], x: torch.Tensor) -> TinyDecoder:
    """A copy of ``model`` whose listed heads write, at each position, their mean output over x (B, n).

    The head's d_k features entering W_O are replaced by their mean over the batch at that position
    (measured on the intact model), so the head still adds its average, just nothing specific to the
    sequence. For full forward passes of n tokens (the n of x).
    """
    columns = {layer: [_head_columns(model, layer, head) for lay, head in heads if lay == layer] for layer, _ in heads}
    means = {}
    hooks = [
        model.blocks[layer].self_attn.w_o.register_forward_pre_hook(
            lambda _m, args, layer=layer: means.__setitem__(layer, args[0].mean(dim=0))  # (n, d_model)
        )
        for layer in columns
    ]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for hook in hooks:
            hook.remove()
    ablated = copy.deepcopy(model)
    for layer, slices in columns.items():
        ablated.blocks[layer].self_attn.w_o.register_forward_pre_hook(_mean_hook(means[layer], slices))
    return ablated


def _mean_hook(mean: torch.Tensor, slices: list[slice]):
    """A forward pre-hook for W_O that puts ``mean`` (n, d_model) into the listed heads' features."""

    def hook(_module, args):
        merged = args[0].clone()  # (B, n, d_model): the heads' outputs, side by side
        if merged.shape[-2] != mean.shape[0]:
            raise ValueError(tr(f"a mean-ablated model runs sequences of {mean.shape[0]} tokens, got {merged.shape[-2]}"))
        for cols in slices:
            merged[..., cols] = mean[:, cols]
        return (merged,)

    return hook


def split_metrics(model: TinyDecoder, x: torch.Tensor, periods: torch.Tensor) -> dict[str, float]:
    """Loss and accuracy of the next-token prediction on the first pass (i < P) and the repeats."""
    with torch.no_grad():
        logits = model(x)[:, :-1]  # position i predicts token i + 1
    target = x[:, 1:]
    loss = F.cross_entropy(logits.transpose(1, 2), target, reduction="none")  # (B, n - 1)
    correct = (logits.argmax(dim=-1) == target).float()
    repeat = repeat_mask(periods, x.shape[1])[:, :-1]
    return {
        N_("loss, first pass"): loss[~repeat].mean().item(),
        N_("loss, repeats"): loss[repeat].mean().item(),
        N_("accuracy, first pass"): correct[~repeat].mean().item(),
        N_("accuracy, repeats"): correct[repeat].mean().item(),
    }


def held_out_set(config: InductionConfig = InductionConfig(), size: int = 1000, seed: int = 1234):
    """Held-out sequences (a seed the training never uses): (x, periods)."""
    return make_batch(size, torch.Generator().manual_seed(seed), config)


# --- generation ---------------------------------------------------------------------


def _next_token(logits: torch.Tensor, temperature: float, generator: torch.Generator | None) -> torch.Tensor:
    """(B, vocab) logits -> (B, 1) ids: argmax at temperature 0, else a sample of softmax(logits / T)."""
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    probs = torch.softmax(logits.double() / temperature, dim=-1)
    return torch.multinomial(probs, 1, generator=generator)


def generate(
    model: TinyDecoder,
    prompt: torch.Tensor,
    new_tokens: int,
    temperature: float = 0.0,
    seed: int = 0,
    use_cache: bool = True,
) -> torch.Tensor:
    """Continue ``prompt`` (B, n_p) by ``new_tokens`` tokens: (B, n_p + new_tokens) ids.

    temperature 0 = greedy. With ``use_cache`` each step feeds only the newest token and
    reuses every earlier key and value (one :class:`helpers.scale.KVCache` per layer);
    without it, each step runs the whole sequence again. Both draw from the same seeded
    generator, so they give the same tokens when their logits agree.
    """
    if not isinstance(temperature, (int, float)) or temperature < 0:
        raise ValueError(tr(f"temperature must be a number >= 0, got {temperature!r}"))
    model._check_ids(prompt)
    if prompt.shape[1] + new_tokens > model.config.n:
        raise ValueError(tr(f"prompt {prompt.shape[1]} + {new_tokens} new tokens exceed the model's {model.config.n} positions"))
    generator = torch.Generator().manual_seed(seed)
    out = prompt
    caches = [KVCache() for _ in model.blocks]
    with torch.no_grad():
        step_input = prompt
        for _ in range(new_tokens):
            logits = model.forward_cached(step_input, caches) if use_cache else model(out)
            token = _next_token(logits[:, -1], temperature, generator)
            out = torch.cat([out, token], dim=1)
            step_input = token
    return out


# --- training, saving, loading -----------------------------------------------------


def train(model: TinyDecoder, progress: bool = True) -> dict[str, torch.Tensor]:
    """AdamW with warm-up and cosine decay, next-token cross-entropy on every position.

    Returns the training curve: per step the loss on the first pass and on the repeats;
    every ``eval_every`` steps each head's scores on a held-out batch. Trains in float64 and
    leaves the model in float32 (:func:`helpers.training.float64_training`), so the weights and
    the curve come out the same on any CPU to within a few float32 ulps.
    """
    config = model.config
    generator = torch.Generator().manual_seed(config.data_seed)
    warmup = max(1, config.steps // 20)
    probe, _ = held_out_set(config, size=64, seed=99)
    first, repeats, evals = [], [], []
    with float64_training(model):
        optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * s / config.steps))
        )
        for step in tqdm(range(config.steps), desc="training", disable=not progress, mininterval=0.5):
            if step % config.eval_every == 0:
                model.eval()
                evals.append(torch.stack(list(head_scores(model, probe).values())))
            model.train()
            x, periods = make_batch(config.batch_size, generator, config)
            loss = F.cross_entropy(model(x)[:, :-1].transpose(1, 2), x[:, 1:], reduction="none")  # (B, n - 1)
            repeat = repeat_mask(periods, config.n)[:, :-1]
            optimizer.zero_grad()
            loss.mean().backward()
            optimizer.step()
            schedule.step()
            first.append(loss[~repeat].mean().item())
            repeats.append(loss[repeat].mean().item())
    model.eval()
    return {
        "loss_first_pass": torch.tensor(first),
        "loss_repeats": torch.tensor(repeats),
        "eval_steps": torch.arange(0, config.steps, config.eval_every),
        "head_scores": torch.stack(evals).float(),  # (evals, 2 scores, L, h)
    }


def train_and_time(config: InductionConfig, progress: bool = True):
    """Build and train on one thread: (model, curve, wall seconds, CPU seconds)."""
    with one_thread():
        model = build_model(config)
        wall, cpu = time.perf_counter(), time.process_time()
        curve = train(model, progress=progress)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return model, curve, wall, cpu


def save_model(model: TinyDecoder, curve: dict[str, torch.Tensor], path: str | Path, **metadata: str) -> None:
    """Weights and the training curve as safetensors, the config as JSON metadata (no pickle)."""
    tensors = {k: v.contiguous() for k, v in model.state_dict().items()}
    tensors |= {CURVE + k: v.contiguous() for k, v in curve.items()}
    meta = {"config": json.dumps(asdict(model.config)), **{k: str(v) for k, v in metadata.items()}}
    save_file(tensors, str(path), metadata=meta)


def _path(num_layers: int | str | Path) -> Path:
    if isinstance(num_layers, int):
        if num_layers not in WEIGHTS:
            raise ValueError(tr(f"shipped models have {sorted(WEIGHTS)} layers, got {num_layers}"))
        path = DATA_DIR / WEIGHTS[num_layers]
        if not path.exists():
            raise FileNotFoundError(tr(f"{path} is missing; run `python scripts/train_induction.py` to make it"))
        return path
    return Path(num_layers)


def load_model(num_layers: int | str | Path = 2) -> TinyDecoder:
    """The committed trained model with 2 (or 1) layers, or one saved at a path."""
    with safe_open(str(_path(num_layers)), framework="pt") as f:
        config = InductionConfig(**json.loads(f.metadata()["config"]))
        state = {k: f.get_tensor(k) for k in f.keys() if not k.startswith(CURVE)}
    model = TinyDecoder(config)
    model.load_state_dict(state)
    return model.eval()


def load_curve(num_layers: int | str | Path = 2) -> dict[str, torch.Tensor]:
    """The training curve stored with the weights (see :func:`train`)."""
    with safe_open(str(_path(num_layers)), framework="pt") as f:
        return {k.removeprefix(CURVE): f.get_tensor(k) for k in f.keys() if k.startswith(CURVE)}


def load_metadata(num_layers: int | str | Path = 2) -> dict[str, str]:
    """The strings stored beside the weights (config, training time, torch version)."""
    with safe_open(str(_path(num_layers)), framework="pt") as f:
        return dict(f.metadata())


def one_layer(config: InductionConfig = InductionConfig()) -> InductionConfig:
    """The control: the same model and training with a single layer."""
    return replace(config, num_layers=1)


def smooth(values: torch.Tensor, window: int = 25) -> np.ndarray:
    """Moving average over ``window`` steps (the first window - 1 steps average what exists)."""
    values = np.asarray(values, dtype=np.float64)
    sums = np.cumsum(np.concatenate([[0.0], values]))
    starts = np.maximum(np.arange(1, len(values) + 1) - window, 0)
    return (sums[1:] - sums[starts]) / (np.arange(1, len(values) + 1) - starts)


def bump_step(loss: torch.Tensor, window: int = 25) -> int:
    """The step where the smoothed loss falls fastest: the middle of the induction bump."""
    smoothed = smooth(loss, window)
    drop = smoothed[window:] - smoothed[:-window]  # change over the window ending at step k + window
    return int(np.argmin(drop))  # trailing averages: the fastest fall is centred near step k
