"""Notebook 11's tiny vision-language-action model: OpenVLA's design at toy size.

    scenes        32 × 32 px RGB images with two or three coloured objects, an instruction
                  ("pick red cup") and the action: the target's centre (x, y) and a gripper value
    patchify      (B, 3, H, W) -> (B, n_patches, 3·p·p) by reshape; PatchEmbedding does the same
                  cut and a linear map in one strided Conv2d, as ViT's code does
    TinyVLA       patch embedding + learned positions -> projector MLP -> tokens of a Llama-style
                  decoder (helpers.llama) after which come the instruction's and the action's tokens
    actions       each dimension in [-1, 1] cut into N_BINS bins, one token per bin (OpenVLA: 256)
    masks         OpenVLA's plain causal mask, or a prefix-LM mask (image + instruction see each other)
    act           greedy decoding of the action tokens with a KV cache per layer (notebook 09)
    attention     the weights from the colour word and from the queries that write each action
                  token onto the image patches, and their share on the target and on distractors

``scripts/train_tiny_vla.py`` trains both masks and writes ``data/tiny_vla.safetensors``;
``scripts/compare_vla_masks.py`` trains both from several seeds on one schedule and logs each run
(:func:`load_mask_comparison` reads the log).
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import save_file
from torch import nn
from tqdm import tqdm

from .data import DATA_DIR
from .i18n import N_
from .i18n import translate as tr
from .layers import RMSNorm
from .llama import LlamaBlock
from .scale import KVCache
from .training import float64_by_default, float64_training, one_thread

COLOURS = {"red": (0.85, 0.12, 0.12), "green": (0.15, 0.65, 0.15), "blue": (0.15, 0.3, 0.95), "yellow": (0.95, 0.8, 0.1)}
SHAPES = ("cup", "block", "ball")
VERBS = ("pick", "push")
WORDS = (*VERBS, *COLOURS, *SHAPES)
N_BINS = 16
VOCAB = (*WORDS, *(f"<bin{k}>" for k in range(N_BINS)))  # action bins take the last ids
ACTION_DIMS = ("x", "y", "gripper")
QUERIES = (N_("colour word"), N_("writes x"), N_("writes y"), N_("writes gripper"))
IMAGE, PATCH, OBJECT = 32, 8, 8  # pixels; an object fills one patch
GRID = IMAGE // PATCH  # 4 × 4 = 16 patches
FOOT = OBJECT // PATCH  # an object covers FOOT × FOOT patches
BACKGROUND = 0.0
HELD_OUT_COMBOS = (("red", "ball"), ("green", "cup"), ("blue", "block"))  # never in a training scene
WEIGHTS_FILE = "tiny_vla.safetensors"
MASK_COMPARISON_FILE = "vla_mask_comparison.json"  # scripts/compare_vla_masks.py: both masks, several seeds
SCHEDULE_TUNING_FILE = "vla_schedule_tuning.json"  # scripts/compare_vla_masks.py --tuning-log: 1500 against 3000 steps


MASK_LABELS = {"causal": N_("causal"), "prefix": N_("prefix-LM")}  # what a figure calls each mask (keys stay in code)


def mask_label(kind: str) -> str:
    """The name a figure or table shows for the mask ``kind`` ("causal" or "prefix"), in the learner's language."""
    return tr(MASK_LABELS[kind])


def mask_comparison_file(steps: int | None = None) -> str:
    """The comparison log of one schedule: MASK_COMPARISON_FILE for the shipped models' (VLAConfig().steps), else
    vla_mask_comparison_<steps>.json."""
    return MASK_COMPARISON_FILE if steps in (None, VLAConfig.steps) else f"vla_mask_comparison_{steps}.json"


def _shape_masks() -> dict[str, np.ndarray]:
    """8 × 8 pixel masks: a cup (open at the top), a block (filled square), a ball (disk)."""
    block = np.zeros((OBJECT, OBJECT), bool)
    block[1:7, 1:7] = True
    cup = block.copy()
    cup[1:5, 3:5] = False  # the hollow, open at the top
    yy, xx = np.mgrid[:OBJECT, :OBJECT]
    ball = (yy - 3.5) ** 2 + (xx - 3.5) ** 2 <= 3.3**2
    return {"cup": cup, "block": block, "ball": ball}


SHAPE_MASKS = _shape_masks()


@dataclass(frozen=True)
class Scene:
    """Objects as (colour, shape, row, col) with row, col the top-left patch (0 .. GRID - FOOT); object 0 is the target."""

    objects: tuple[tuple[str, str, int, int], ...]
    verb: str

    @property
    def instruction(self) -> tuple[str, str, str]:
        colour, shape, _, _ = self.objects[0]
        return (self.verb, colour, shape)

    def text(self) -> str:
        return " ".join(self.instruction)


def _pick_combo(rng: np.random.Generator, allowed: list, taken: list) -> tuple[str, str]:
    """A (colour, shape) whose colour is not yet in the scene; half the time the target's shape."""
    free = [c for c in allowed if c[0] not in {t[0] for t in taken}]
    if rng.random() < 0.5:
        free = [c for c in free if c[1] == taken[0][1]] or free
    return free[int(rng.integers(len(free)))]


def sample_scene(rng: np.random.Generator, combos: str = "train", n_objects: int = 3) -> Scene:
    """One random scene of n_objects (1-3), each object in its own colour. combos: "train" (no held-out combination anywhere) or
    "held out" (the target is one of HELD_OUT_COMBOS, the distractors are not)."""
    if combos not in ("train", "held out"):
        raise ValueError(tr(f"combos must be 'train' or 'held out', got {combos!r}"))
    seen = [(c, s) for c in COLOURS for s in SHAPES if (c, s) not in HELD_OUT_COMBOS]
    pool = seen if combos == "train" else list(HELD_OUT_COMBOS)
    chosen = [pool[int(rng.integers(len(pool)))]]
    for _ in range(n_objects - 1):
        chosen.append(_pick_combo(rng, seen, chosen))
    cells: list[tuple[int, int]] = []
    while len(cells) < n_objects:  # top-left patches of objects that do not overlap
        r, c = (int(v) for v in rng.integers(0, GRID - FOOT + 1, size=2))
        if all(abs(r - r2) >= FOOT or abs(c - c2) >= FOOT for r2, c2 in cells):
            cells.append((r, c))
    objects = tuple((colour, shape, r, c) for (colour, shape), (r, c) in zip(chosen, cells, strict=True))
    return Scene(objects, VERBS[int(rng.integers(2))])


def render(scenes: list[Scene]) -> torch.Tensor:
    """Scenes -> images (B, 3, IMAGE, IMAGE), values in [0, 1] on a black background."""
    images = np.full((len(scenes), 3, IMAGE, IMAGE), BACKGROUND, np.float32)
    for b, scene in enumerate(scenes):
        for colour, shape, r, c in scene.objects:
            window = images[b, :, r * PATCH : r * PATCH + OBJECT, c * PATCH : c * PATCH + OBJECT]
            window[:, SHAPE_MASKS[shape]] = np.asarray(COLOURS[colour], np.float32)[:, None]
    return torch.from_numpy(images)


# --- actions as tokens ----------------------------------------------------------


def discretise(values: torch.Tensor, n_bins: int = N_BINS) -> torch.Tensor:
    """Values in [-1, 1] -> bin indices 0 .. n_bins - 1 (uniform bins, as OpenVLA's 256)."""
    return ((values.clamp(-1, 1) + 1) / 2 * n_bins).floor().long().clamp(max=n_bins - 1)


def bin_centres(bins: torch.Tensor, n_bins: int = N_BINS) -> torch.Tensor:
    """Bin indices -> the value at each bin's centre (what a robot would be sent)."""
    return -1 + (bins.double() + 0.5) * 2 / n_bins


def scene_actions(scene: Scene) -> torch.Tensor:
    """The action: the target's centre (x, y) scaled to [-1, 1], and the gripper (+1 pick, -1 push). Shape (3,)."""
    _, _, r, c = scene.objects[0]
    centre = lambda cell: (cell * PATCH + OBJECT / 2) / IMAGE * 2 - 1  # noqa: E731
    return torch.tensor([centre(c), centre(r), 1.0 if scene.verb == "pick" else -1.0], dtype=torch.float64)


def action_token_ids(bins: torch.Tensor) -> torch.Tensor:
    """Bin indices -> vocabulary ids (the last N_BINS ids of VOCAB)."""
    return bins + len(WORDS)


def encode_batch(scenes: list[Scene]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Scenes -> images (B, 3, IMAGE, IMAGE), instruction ids (B, 3), action ids (B, 3)."""
    instructions = torch.tensor([[WORDS.index(w) for w in s.instruction] for s in scenes])
    actions = action_token_ids(discretise(torch.stack([scene_actions(s) for s in scenes])))
    return render(scenes), instructions, actions


def object_patches(scene: Scene) -> torch.Tensor:
    """(n_objects, GRID·GRID) bool: which patches each object's FOOT × FOOT footprint covers."""
    covered = torch.zeros(len(scene.objects), GRID, GRID, dtype=torch.bool)
    for k, (_, _, r, c) in enumerate(scene.objects):
        covered[k, r : r + FOOT, c : c + FOOT] = True
    return covered.flatten(1)


# --- vision front end -----------------------------------------------------------


def patchify(images: torch.Tensor, patch: int = PATCH) -> torch.Tensor:
    """(B, C, H, W) -> (B, (H/p)·(W/p), C·p·p): patches row by row, each flattened channel-first."""
    if not isinstance(images, torch.Tensor) or images.ndim != 4 or images.shape[-1] % patch or images.shape[-2] % patch:
        raise ValueError(tr(f"images must be (B, C, H, W) with H and W multiples of patch={patch}, got {getattr(images, 'shape', images)}"))
    B, C, H, W = images.shape
    x = images.reshape(B, C, H // patch, patch, W // patch, patch)  # (B, C, rows, p, cols, p)
    return x.permute(0, 2, 4, 1, 3, 5).reshape(B, (H // patch) * (W // patch), C * patch * patch)


class PatchEmbedding(nn.Module):
    """Cut into p × p patches and map each linearly to d_vision features: one Conv2d with stride p."""

    def __init__(self, d_vision: int, patch: int = PATCH, channels: int = 3) -> None:
        super().__init__()
        self.patch = patch
        self.conv = nn.Conv2d(channels, d_vision, kernel_size=patch, stride=patch)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """(B, C, H, W) -> (B, n_patches, d_vision)."""
        return self.conv(images).flatten(2).transpose(1, 2)


# --- the model ------------------------------------------------------------------


@dataclass(frozen=True)
class VLAConfig:
    """Sizes, mask and training schedule of the tiny VLA."""

    mask: str = "causal"  # OpenVLA; "prefix": image + instruction attend both ways (PaliGemma, π0)
    d_vision: int = 32
    d_model: int = 48
    num_heads: int = 4
    num_kv_heads: int = 2
    num_layers: int = 2
    d_ff: int = 128
    steps: int = 1500
    batch_size: int = 32
    lr: float = 1e-2
    min_objects: int = 2  # training scenes have min_objects to 3 objects; test scenes 3
    init_seed: int = 0  # the shipped models' seed (scripts/train_tiny_vla.py says why 0)
    data_seed: int = 1
    prefix_words: int = field(default=2, repr=False)  # instruction words in the prefix: the shape word is in the suffix (n_prefix)

    @property
    def n_patches(self) -> int:
        return GRID * GRID

    @property
    def n_prefix(self) -> int:
        """The prefix: the image and the first ``prefix_words`` instruction words (they see each other
        under the prefix mask; the causal mask ignores it).

        The loss scores the shape word at the colour word and the 3 action tokens. With
        ``prefix_words=2`` (the shipped models) the shape word is the first suffix token, so every
        scored token is one the position that predicts it cannot see, under either mask
        (PaliGemma and π0 put no loss on a prefix token). With 3, the whole instruction in the
        prefix, the prefix-LM colour word would see the shape word it is scored on and could copy it.
        """
        if self.prefix_words not in (2, 3):
            raise ValueError(tr(f"prefix_words must be 2 or 3, got {self.prefix_words}"))
        return self.n_patches + self.prefix_words


def vla_mask(n: int, n_prefix: int, kind: str = "causal") -> torch.Tensor:
    """(n, n) bool, True = may attend. "causal": key j <= query i. "prefix": also every key of the prefix."""
    if kind not in ("causal", "prefix"):
        raise ValueError(tr(f"kind must be 'causal' or 'prefix', got {kind!r}"))
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    return (j <= i) | ((j < n_prefix) & (kind == "prefix"))


class TinyVLA(nn.Module):
    """[patch tokens][instruction][action tokens] through Llama blocks; logits over VOCAB.

    After a forward pass, ``attention()`` stacks each layer's weights: (layers, B, h, n_q, n_k).
    """

    def __init__(self, config: VLAConfig = VLAConfig()) -> None:
        super().__init__()
        self.config = config
        self.patch_embed = PatchEmbedding(config.d_vision)
        std = 1.0 / 2**0.5  # row + column: each position starts as a vector of standard deviation 1
        self.patch_rows = nn.Parameter(std * torch.randn(GRID, 1, config.d_vision))  # learned positions, one vector per
        self.patch_cols = nn.Parameter(std * torch.randn(1, GRID, config.d_vision))  # row plus one per column
        self.projector = nn.Sequential(  # OpenVLA's: an MLP from vision features to the LLM's width
            nn.Linear(config.d_vision, config.d_model), nn.GELU(), nn.Linear(config.d_model, config.d_model)
        )
        self.embed = nn.Embedding(len(VOCAB), config.d_model)
        nn.init.normal_(self.embed.weight, std=0.02)  # as Llama's initialisation (PyTorch's default is 1)
        self.blocks = nn.ModuleList(
            LlamaBlock(config.d_model, config.num_heads, config.num_kv_heads, config.d_ff) for _ in range(config.num_layers)
        )
        self.norm = RMSNorm(config.d_model, eps=1e-5)
        self.lm_head = nn.Linear(config.d_model, len(VOCAB), bias=False)

    def image_tokens(self, images: torch.Tensor) -> torch.Tensor:
        """(B, 3, IMAGE, IMAGE) -> (B, n_patches, d_model): patch tokens in the LLM's width."""
        if images.ndim != 4 or images.shape[1:] != (3, IMAGE, IMAGE):
            raise ValueError(tr(f"images must be (B, 3, {IMAGE}, {IMAGE}), got {tuple(images.shape)}"))
        positions = (self.patch_rows + self.patch_cols).flatten(0, 1)  # (n_patches, d_vision), row by row
        return self.projector(self.patch_embed(images.to(positions.dtype)) + positions)  # pixels in the model's dtype

    def _run(self, x, mask, caches=None, zero_heads=None) -> torch.Tensor:
        zero_heads = zero_heads or {}
        for layer, block in enumerate(self.blocks):
            x = block(x, mask, cache=caches[layer] if caches else None, zero_heads=zero_heads.get(layer, ()))
        return self.lm_head(self.norm(x))

    def forward(self, images: torch.Tensor, tokens: torch.Tensor, zero_heads: dict | None = None) -> torch.Tensor:
        """images (B, 3, IMAGE, IMAGE), tokens (B, t) = instruction then actions so far -> logits (B, n_patches + t, vocab).

        zero_heads: {layer: [heads]} whose outputs are zeroed (an ablation).
        """
        if tokens.ndim != 2 or tokens.shape[0] != images.shape[0] or tokens.is_floating_point():
            raise ValueError(tr(f"tokens must be (B={images.shape[0]}, t) integer ids, got {tokens.dtype} {tuple(tokens.shape)}"))
        x = torch.cat([self.image_tokens(images), self.embed(tokens)], dim=1)
        return self._run(x, vla_mask(x.shape[1], self.config.n_prefix, self.config.mask), zero_heads=zero_heads)

    def act(self, images: torch.Tensor, instructions: torch.Tensor, zero_heads: dict | None = None) -> torch.Tensor:
        """Greedy decoding of the 3 action tokens with a KV cache per layer -> action ids (B, 3).

        The prefix (patches + instruction) is run once under the model's mask; each new token
        then attends to every cached key, which both masks allow. Only action tokens are eligible.
        """
        return self.act_with_logits(images, instructions, zero_heads)[0]

    def act_with_logits(
        self, images: torch.Tensor, instructions: torch.Tensor, zero_heads: dict | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`act`, also returning the logits over the N_BINS action tokens each choice was made from: (B, 3, N_BINS)."""
        caches = [KVCache() for _ in self.blocks]
        x = torch.cat([self.image_tokens(images), self.embed(instructions)], dim=1)
        logits = self._run(x, vla_mask(x.shape[1], self.config.n_prefix, self.config.mask), caches, zero_heads)
        out, scores = [], []
        for _ in ACTION_DIMS:
            scores.append(logits[:, -1, len(WORDS) :])  # (B, N_BINS): only action tokens are eligible
            out.append(scores[-1].argmax(-1) + len(WORDS))  # (B,)
            logits = self._run(self.embed(out[-1])[:, None], None, caches, zero_heads)
        return torch.stack(out, dim=1), torch.stack(scores, dim=1)

    def act_without_cache(self, images: torch.Tensor, instructions: torch.Tensor) -> torch.Tensor:
        """The same greedy decoding by recomputing the whole sequence for every token (reference)."""
        tokens = instructions
        for _ in ACTION_DIMS:
            logits = self(images, tokens)[:, -1, len(WORDS) :]
            tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True) + len(WORDS)], dim=1)
        return tokens[:, 3:]

    def attention(self) -> torch.Tensor:
        """Weights of the last forward pass, stacked: (layers, B, h, n_q, n_k)."""
        return torch.stack([block.attn.attn_weights for block in self.blocks])


def build_model(config: VLAConfig = VLAConfig()) -> TinyVLA:
    """A freshly initialised model: the same numbers on any CPU for the same init_seed (whatever the mask).

    The random initial weights are drawn in float64 and rounded to float32
    (:func:`helpers.training.float64_by_default` says why).
    """
    torch.manual_seed(config.init_seed)
    with float64_by_default():
        model = TinyVLA(config)
    return model.float()


# --- data sets, training, success -----------------------------------------------


def held_out_scenes(size: int = 1000, combos: str = "train", seed: int = 1234) -> list[Scene]:
    """Scenes for testing, drawn with their own seed. Training skips every scene of the default set
    (1000 scenes, seed 1234); other sizes and seeds are not excluded, and "held out" targets never occur in training."""
    rng = np.random.default_rng(seed)
    return [sample_scene(rng, combos) for _ in range(size)]


def success_rate(model: TinyVLA, scenes: list[Scene], zero_heads: dict | None = None) -> float:
    """Fraction of scenes whose 3 decoded action tokens are all right."""
    images, instructions, actions = encode_batch(scenes)
    with torch.no_grad():
        predicted = model.act(images, instructions, zero_heads)
    return (predicted == actions).all(dim=1).double().mean().item()


def train(
    model: TinyVLA, progress: bool = True, eval_every: int = 100, bar_position: int = 0
) -> tuple[list[float], list[tuple[int, float]]]:
    """AdamW, one-cycle schedule, gradients clipped to norm 1, cross-entropy on the shape word and the 3 action tokens.

    Scoring the shape word after the colour word (which the image decides: one object per
    colour) makes the colour word look at its object early; OpenVLA scores only the actions.
    With the default ``prefix_words=2`` the shape word is in the suffix, so under either mask no
    scored token is visible to the position that predicts it (:attr:`VLAConfig.n_prefix`).

    Trains in float64 and leaves the model in float32 (:func:`helpers.training.float64_training`),
    so the same CPU kernels give the same weights; other kernels do not (the training is chaotic:
    ``scripts/train_tiny_vla.py`` measures it).
    Returns the losses and the held-out success every ``eval_every`` steps (on 256 scenes).
    Training never draws a scene of :func:`held_out_scenes`. ``bar_position``: the progress
    bar's line on the terminal, for runs in parallel processes.
    """
    config = model.config
    rng = np.random.default_rng(config.data_seed)
    unseen = set(held_out_scenes())
    probe = held_out_scenes(256)
    losses, curve = [], []
    n = config.n_patches + 2  # the query that writes action k sits at n + k; the colour word at n - 1
    with float64_training(model):
        optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.01)
        schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=config.lr, total_steps=config.steps)
        for step in tqdm(range(1, config.steps + 1), desc=f"training ({config.mask})", disable=not progress,
                         mininterval=0.5, position=bar_position):
            scenes = []
            while len(scenes) < config.batch_size:
                scene = sample_scene(rng, n_objects=int(rng.integers(config.min_objects, 4)))
                if scene not in unseen:
                    scenes.append(scene)
            images, instructions, actions = encode_batch(scenes)
            model.train()
            logits = model(images, torch.cat([instructions, actions[:, :2]], dim=1))[:, n - 1 : n + 3]  # (B, 4, vocab)
            targets = torch.cat([instructions[:, 2:], actions], dim=1)  # the shape word, then the action
            loss = F.cross_entropy(logits.reshape(-1, len(VOCAB)), targets.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            losses.append(loss.item())
            if step % eval_every == 0:
                model.eval()
                curve.append((step, success_rate(model, probe)))
    model.eval()
    return losses, curve


def train_and_time(
    config: VLAConfig, progress: bool = True, bar_position: int = 0
) -> tuple[TinyVLA, list[float], list[tuple[int, float]], float]:
    """Build and train on one thread: (model, losses, curve, seconds)."""
    with one_thread():
        model = build_model(config)
        start = time.perf_counter()
        losses, curve = train(model, progress, bar_position=bar_position)
        seconds = time.perf_counter() - start
    return model, losses, curve, seconds


def save_models(models: dict[str, TinyVLA], path: str | Path, **metadata) -> None:
    """Several models in one safetensors file ("causal.blocks.0...", "prefix...."), configs in the metadata."""
    tensors = {f"{name}.{k}": v.contiguous() for name, m in models.items() for k, v in m.state_dict().items()}
    meta = {f"config.{name}": json.dumps(asdict(m.config)) for name, m in models.items()}
    save_file(tensors, str(path), metadata={**meta, **{k: str(v) for k, v in metadata.items()}})


def load_models(path: str | Path | None = None) -> dict[str, TinyVLA]:
    """The models saved by :func:`save_models`; default: the committed ``data/tiny_vla.safetensors``."""
    path = Path(path) if path is not None else DATA_DIR / WEIGHTS_FILE
    if not path.exists():
        raise FileNotFoundError(tr(f"{path} is missing; run `python scripts/train_tiny_vla.py` to make it"))
    models = {}
    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata()
        for key in sorted(k for k in meta if k.startswith("config.")):  # metadata comes in no fixed order
            name = key.removeprefix("config.")
            model = TinyVLA(VLAConfig(**json.loads(meta[key])))
            model.load_state_dict({k.removeprefix(f"{name}."): f.get_tensor(k) for k in f.keys() if k.startswith(f"{name}.")})
            models[name] = model.eval()
    return models


def load_metadata(path: str | Path | None = None) -> dict[str, str]:
    """The metadata strings stored beside the weights (configs, timings, success, curves)."""
    path = Path(path) if path is not None else DATA_DIR / WEIGHTS_FILE
    with safe_open(str(path), framework="pt") as f:
        return dict(f.metadata())


MASK_COMPARISON_FIELDS = (
    "mask", "seed", "init_seed", "data_seed", "steps", "probe", "steps to 95 %", "success on unseen scenes",
    "success on held-out combinations", "accuracy x", "accuracy y", "accuracy gripper", "points at an object",
    "points at the target", "success, target's shape unique", "success, target's shape shared",
    "success, target's column unique", "success, target's column shared", "colour word on the target", "writes x on the colour word", "final loss", "cpu seconds",
)


def load_mask_comparison(path: str | Path | None = None, steps: int | None = None) -> list[dict]:
    """The runs of ``scripts/compare_vla_masks.py``, one dict per (mask, seed) with the keys MASK_COMPARISON_FIELDS.

    "probe" is a list of (step, success on 256 unseen scenes); "steps to 95 %" is the first such
    step at or above 0.95, or None; successes and accuracies are fractions (on 1000 scenes).
    Default: the committed ``data/vla_mask_comparison.json`` (the shipped design: the shape word
    in the suffix, ``prefix_words=2``, on the shipped models' schedule); ``steps``: the committed log
    of that schedule (:func:`mask_comparison_file`).
    """
    path = Path(path) if path is not None else DATA_DIR / mask_comparison_file(steps)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; run `python scripts/compare_vla_masks.py` to make it")
    runs = json.loads(path.read_text(encoding="utf-8"))["runs"]
    for run in runs:
        if tuple(run) != MASK_COMPARISON_FIELDS:
            raise ValueError(f"{path.name}: a run has the fields {tuple(run)}, expected {MASK_COMPARISON_FIELDS}")
        run["probe"] = [tuple(point) for point in run["probe"]]
    return runs


def load_schedule_tuning(path: str | Path | None = None) -> dict:
    """The schedule tuning of ``scripts/compare_vla_masks.py --tuning-log``: a dict with "rule", "mean success"
    (per number of steps, as a string), "chosen steps" and "runs" (one dict per (steps, mask, seed) with the
    keys MASK_COMPARISON_FIELDS, as :func:`load_mask_comparison` gives them). Default: the committed
    ``data/vla_schedule_tuning.json``.
    """
    path = Path(path) if path is not None else DATA_DIR / SCHEDULE_TUNING_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; run `python scripts/compare_vla_masks.py --tuning-log ROWS` to make it")
    log = json.loads(path.read_text(encoding="utf-8"))
    for run in log["runs"]:
        if tuple(run) != MASK_COMPARISON_FIELDS:
            raise ValueError(f"{path.name}: a run has the fields {tuple(run)}, expected {MASK_COMPARISON_FIELDS}")
        run["probe"] = [tuple(point) for point in run["probe"]]
    return log


def untrained(config: VLAConfig = VLAConfig()) -> TinyVLA:
    """The seeded initialisation for config.init_seed, untrained (the default config's is where both shipped models started)."""
    return build_model(config).eval()


# --- where the attention goes ---------------------------------------------------


def image_attention(model: TinyVLA, images: torch.Tensor, instructions: torch.Tensor, actions: torch.Tensor | None = None) -> torch.Tensor:
    """Weights from the 4 QUERIES onto the patches: (layers, B, h, 4, n_patches).

    The sequence is [patches][instruction][first two action tokens] with ``actions`` (B, 3)
    ids (default: the model's own decoded actions). Query "writes x" is the instruction's last
    word, whose output is the x token; "writes y" is the x token; "writes gripper" the y token.
    """
    with torch.no_grad():
        actions = model.act(images, instructions) if actions is None else actions
        model(images, torch.cat([instructions, actions[:, :2]], dim=1))
    n = model.config.n_patches
    return model.attention()[..., n + 1 : n + 5, :n]


def mass_shares(weights: torch.Tensor, scenes: list[Scene]) -> dict[str, torch.Tensor]:
    """Share of each query's image attention on the target's patches and on the distractors'.

    weights: (..., B, h, q, n_patches) from :func:`image_attention`. Returns "target",
    "distractors" (both (..., h, q), shares of the weight on the patches, averaged over the
    scenes), "image" ((..., h, q): the weight on all patches together, the part of the whole
    row that the shares divide up) and the chance levels (patches covered / all patches) as
    floats in "chance target", "chance distractors".
    """
    covered = torch.stack([object_patches(s) for s in scenes]).to(weights.dtype)  # (B, objects, n_patches)
    image_mass = weights.sum(-1).clamp_min(1e-12)  # (..., B, h, q)
    on = torch.einsum("...bhqp,bop->...bhqo", weights, covered) / image_mass[..., None]
    n_patches = covered.shape[-1]
    return {
        "target": on[..., 0].mean(-3),
        "distractors": on[..., 1:].sum(-1).mean(-3),
        "image": weights.sum(-1).mean(-3),
        "chance target": float(covered[:, 0].sum(-1).mean() / n_patches),
        "chance distractors": float(covered[:, 1:].sum((-1, -2)).mean() / n_patches),
    }


def swap_colour(scene: Scene) -> Scene | None:
    """The same image with the instruction's colour word naming another object of the same shape
    (that object becomes the target); None if the scene has no such object."""
    target = scene.objects[0]
    for k, other in enumerate(scene.objects[1:], start=1):
        if other[1] == target[1]:
            rest = tuple(o for i, o in enumerate(scene.objects) if i not in (0, k))
            return replace(scene, objects=(other, target, *rest))
    return None


# --- interventions: ablate a head, or one of its looks ---------------------------


def sequence_length(config: VLAConfig) -> int:
    """Tokens in a whole sequence: patches, the 3 instruction words and the 3 action tokens."""
    return config.n_patches + 3 + len(ACTION_DIMS)


def colour_word_position(config: VLAConfig) -> int:
    """The colour word's position in the sequence (after the patches and the verb)."""
    return config.n_patches + 1


def _inputs_to(sites: list[nn.Module], model: TinyVLA, images: torch.Tensor, tokens: torch.Tensor,
               reduce=lambda x: x) -> list[torch.Tensor]:
    """One forward pass; what each of ``sites`` (modules of ``model``) receives, through ``reduce`` as it is captured."""
    captured = []
    hooks = [site.register_forward_pre_hook(lambda _m, args: captured.append(reduce(args[0]))) for site in sites]
    try:
        with torch.no_grad():
            model(images, tokens)
    finally:
        for hook in hooks:
            hook.remove()
    return captured


def head_means(model: TinyVLA, scenes: list[Scene]) -> torch.Tensor:
    """Each head's output (its slice before W_O) averaged over ``scenes`` at every position.

    The scenes run through the model with their right actions as the action tokens, so every
    position of :func:`sequence_length` has a mean. Returns (layers, h, sequence_length, d_k):
    what :func:`heads_replaced` puts in place of a head for a mean-ablation.
    """
    images, instructions, actions = encode_batch(scenes)
    w_o = [block.attn.w_o for block in model.blocks]
    captured = _inputs_to(w_o, model, images, torch.cat([instructions, actions], dim=1), lambda x: x.mean(0))  # each (n, h · d_k)
    h = model.config.num_heads
    return torch.stack([c.reshape(c.shape[0], h, -1).transpose(0, 1) for c in captured])


def head_outputs(model: TinyVLA, images: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Each head's output (its slice before W_O) in every scene at every position: (B, layers, h, n, d_k).

    images (B, 3, IMAGE, IMAGE), tokens (B, t) as :meth:`TinyVLA.forward`; n = n_patches + t. What
    :func:`heads_replaced` puts in place of a head, scene by scene, to patch it in from another run.
    """
    captured = _inputs_to([block.attn.w_o for block in model.blocks], model, images, tokens)  # each (B, n, h · d_k)
    h = model.config.num_heads
    return torch.stack([c.reshape(*c.shape[:2], h, -1).transpose(1, 2) for c in captured], dim=1)


@contextmanager
def heads_replaced(model: TinyVLA, layer: int, heads: list[int], means: torch.Tensor | None = None,
                   positions: list[int] | None = None):
    """Inside the ``with``, replace the outputs of ``heads`` of ``layer`` before W_O (an ablation).

    means: None zeroes them (zero-ablation); (layers, h, sequence_length, d_k) from
    :func:`head_means` puts each head's mean output at that position in their place
    (mean-ablation); (B, layers, h, n, d_k) from :func:`head_outputs` puts scene b's own
    values in scene b (activation patching: the values of another run). positions: only at
    these sequence positions (default: every position). Works for every call inside (``act``,
    ``success_rate``, a forward pass, cached or not): a pass's queries are the last n_q of the
    n_k positions its attention saw.
    """
    attn = model.blocks[layer].attn
    d_k = attn.d_k
    per_scene = means is not None and means.ndim == 5
    if means is not None and not per_scene and means.shape[1:] != (attn.num_heads, sequence_length(model.config), d_k):
        raise ValueError(tr(f"means must be (layers, {attn.num_heads}, {sequence_length(model.config)}, {d_k}), "
                            f"got {tuple(means.shape)}"))
    if per_scene and (means.shape[2] != attn.num_heads or means.shape[4] != d_k):
        raise ValueError(tr(f"per-scene values must be (B, layers, {attn.num_heads}, n, {d_k}), got {tuple(means.shape)}"))
    chosen = set(range(sequence_length(model.config)) if positions is None else positions)

    def replace_heads(_module, args):
        (x,) = args  # (B, n_q, h · d_k)
        n_q, n_k = x.shape[1], attn.attn_weights.shape[-1]
        if per_scene and (means.shape[0] != x.shape[0] or means.shape[3] < n_k):
            raise ValueError(tr(f"per-scene values {tuple(means.shape)} do not cover {x.shape[0]} scenes of {n_k} positions"))
        rows = [i for i, pos in enumerate(range(n_k - n_q, n_k)) if pos in chosen]
        x = x.clone()
        for head in heads:
            columns = slice(head * d_k, (head + 1) * d_k)
            x[:, rows, columns] = 0.0 if means is None else means[..., layer, head, [n_k - n_q + i for i in rows], :].to(x.dtype)
        return (x,)

    hook = attn.w_o.register_forward_pre_hook(replace_heads)
    try:
        yield model
    finally:
        hook.remove()


@contextmanager
def attention_knocked_out(model: TinyVLA, layer: int, head, query, keys: torch.Tensor):
    """Inside the ``with``, forbid one look: query position ``query`` of ``layer``'s ``head`` may not
    attend to key position ``keys[b]`` in scene b (keys: (B,) positions). The key is masked
    before the softmax, so the head's other weights in that row are renormalised; every other
    head, row and layer is untouched. ``head`` and ``query`` may also be lists (several heads,
    several query positions: each loses the same key), e.g. every patch forbidden to read the
    colour word.
    """
    attn = model.blocks[layer].attn
    heads = [head] if isinstance(head, int) else list(head)
    queries = [query] if isinstance(query, int) else list(query)
    keys = torch.as_tensor(keys)  # (B,): a list of positions is read as one key per scene too

    def forbid(_module, args):
        x, mask, positions, cache, zero_heads = args
        start = len(cache) if cache is not None else 0
        rows = [q - start for q in queries if start <= q < start + x.shape[1]]
        if not rows:
            return None  # this pass computes none of the queries' rows
        if x.shape[0] != len(keys):
            raise ValueError(tr(f"keys must give one key per scene: {x.shape[0]} scenes, got {tuple(keys.shape)}"))
        n_q = x.shape[1]
        n_k = start + n_q
        full = torch.ones(n_q, n_k, dtype=torch.bool) if mask is None else mask
        mask = full.expand(x.shape[0], attn.num_heads, n_q, n_k).clone()  # (B, h, n_q, n_k)
        scenes = torch.arange(x.shape[0])
        for h in heads:
            for row in rows:
                mask[scenes, h, row, keys] = False
        return x, mask, positions, cache, zero_heads

    hook = attn.register_forward_pre_hook(forbid)
    try:
        yield model
    finally:
        hook.remove()


def object_patch(scenes: list[Scene], k: int = 0) -> torch.Tensor:
    """The patch object k of each scene covers (0: the target): (B,) positions. An object fills exactly one patch."""
    covered = torch.stack([object_patches(s)[k] for s in scenes])  # (B, n_patches)
    if not (covered.sum(-1) == 1).all():
        raise ValueError(tr("every object must cover exactly one patch"))
    return covered.int().argmax(-1)


# --- activation patching: one site of a clean run put into a corrupted run -------


def residuals(model: TinyVLA, images: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """The residual stream entering each block and leaving the last: (B, layers + 1, n, d_model).

    images (B, 3, IMAGE, IMAGE), tokens (B, t) as :meth:`TinyVLA.forward`; n = n_patches + t.
    Index ``layer`` is what block ``layer`` reads (0: the embedded tokens); index ``layers`` is
    what the final norm and the unembedding read.
    """
    return torch.stack(_inputs_to([*model.blocks, model.norm], model, images, tokens), dim=1)


@contextmanager
def residual_replaced(model: TinyVLA, layer: int, values: torch.Tensor):
    """Inside the ``with``, the residual stream entering block ``layer`` (``layer`` = num_layers: the one
    leaving the last block) is ``values`` (B, n, d_model) instead, in a forward pass over the whole
    sequence (not a cached pass of ``act``)."""
    site = model.blocks[layer] if layer < len(model.blocks) else model.norm

    def replace(_module, args):
        if args[0].shape != values.shape:
            raise ValueError(tr(f"values must be {tuple(args[0].shape)} (a whole sequence), got {tuple(values.shape)}"))
        return (values.to(args[0].dtype), *args[1:])

    hook = site.register_forward_pre_hook(replace)
    try:
        yield model
    finally:
        hook.remove()


def _position_mask(positions, B: int, n: int) -> torch.Tensor:
    """None (every position), a list of positions for every scene, or a (B, n) bool mask -> (B, n) bool."""
    if positions is None:
        return torch.ones(B, n, dtype=torch.bool)
    if isinstance(positions, torch.Tensor) and positions.dtype == torch.bool:
        if positions.shape != (B, n):
            raise ValueError(tr(f"a position mask must be (B, n) = ({B}, {n}), got {tuple(positions.shape)}"))
        return positions
    chosen = torch.zeros(B, n, dtype=torch.bool)
    chosen[:, list(positions)] = True
    return chosen


def patched_logits(model: TinyVLA, clean: tuple, corrupted: tuple, layer: int, head: int | None = None,
                   positions=None) -> torch.Tensor:
    """The corrupted run with one site patched in from the clean run: logits (B, n, vocab).

    clean, corrupted: (images (B, 3, IMAGE, IMAGE), tokens (B, t)), the same shapes, n = n_patches + t.
    The site: ``head`` given, that head's output (its slice before W_O) in block ``layer``
    (:func:`head_outputs`, :func:`heads_replaced`); ``head`` None, the residual stream entering
    block ``layer`` (:func:`residuals`; ``layer`` = num_layers: the one leaving the last block).
    positions: None (every position), a list of positions, or a (B, n) bool mask (scene by scene).
    Where a position is not patched the corrupted run's own value stays, which changes nothing.
    """
    (images, tokens), (images_c, tokens_c) = clean, corrupted
    if images.shape != images_c.shape or tokens.shape != tokens_c.shape:
        raise ValueError(tr(f"clean and corrupted runs must have the same shapes, got {tuple(images.shape)}, "
                            f"{tuple(tokens.shape)} and {tuple(images_c.shape)}, {tuple(tokens_c.shape)}"))
    B, n = tokens.shape[0], model.config.n_patches + tokens.shape[1]
    chosen = _position_mask(positions, B, n)
    if head is None:
        source, own = residuals(model, images, tokens)[:, layer], residuals(model, images_c, tokens_c)[:, layer]
        context = residual_replaced(model, layer, torch.where(chosen[..., None], source, own))
    else:
        source, own = head_outputs(model, images, tokens), head_outputs(model, images_c, tokens_c)
        values = torch.where(chosen[:, None, None, :, None], source, own)  # (B, layers, h, n, d_k)
        context = heads_replaced(model, layer, [head], values)
    with context, torch.no_grad():
        return model(images_c, tokens_c)


def patching_recovery(model: TinyVLA, clean: tuple, corrupted: tuple, metric, layer: int, head: int | None = None,
                      positions=None) -> float:
    """Activation patching: the fraction of the clean behaviour that one patched site recovers.

    metric: logits (B, n, vocab) -> a float (e.g. a logit difference averaged over scenes).
    Returns (metric(patched) - metric(corrupted)) / (metric(clean) - metric(corrupted)): 0 = the
    site carries none of the difference, 1 = all of it. The other arguments as :func:`patched_logits`.
    """
    with torch.no_grad():
        m_clean, m_corrupted = float(metric(model(*clean))), float(metric(model(*corrupted)))
    if m_clean == m_corrupted:
        raise ValueError(tr("the metric is the same on the clean and the corrupted run: nothing to recover"))
    m_patched = float(metric(patched_logits(model, clean, corrupted, layer, head, positions)))
    return (m_patched - m_corrupted) / (m_clean - m_corrupted)


def patching_scenes(size: int = 200, seed: int = 11) -> list[tuple[Scene, Scene]]:
    """The (clean, corrupted) scene pairs of :func:`patching_pair`: from ``held_out_scenes(size, seed=seed)``
    the scenes with another object of the target's shape in another column, and that scene with the
    colour word naming the other object (:func:`swap_colour`)."""
    pairs = [(s, swap_colour(s)) for s in held_out_scenes(size, seed=seed)]
    return [(a, b) for a, b in pairs if b is not None and a.objects[0][3] != b.objects[0][3]]


def patching_pair(size: int = 200, seed: int = 11) -> tuple[tuple, tuple, object]:
    """A clean and a corrupted run for activation patching, and the metric that tells them apart.

    From ``held_out_scenes(size, seed=seed)`` the scenes with two objects of the target's shape
    whose columns differ; the corrupted run names the other one (:func:`swap_colour`): the same
    image, one word changed, another x. Both runs are (images, tokens) with tokens the
    instruction and the run's own first two action tokens. The metric, on logits (B, n, vocab):
    at the query that writes x, the logit of the clean run's x token minus the corrupted run's,
    averaged over the scenes (positive on the clean run, negative on the corrupted one).
    """
    pairs = patching_scenes(size, seed)
    runs = []
    for scenes in ([a for a, _ in pairs], [b for _, b in pairs]):
        images, instructions, actions = encode_batch(scenes)
        runs.append((images, torch.cat([instructions, actions[:, :2]], dim=1)))
    clean, corrupted = runs
    at = GRID * GRID + 2  # the query that writes x: the shape word
    good, bad, rows = clean[1][:, 3], corrupted[1][:, 3], torch.arange(len(pairs))

    def x_logit_difference(logits: torch.Tensor) -> torch.Tensor:
        return (logits[rows, at, good] - logits[rows, at, bad]).mean()

    return clean, corrupted, x_logit_difference
