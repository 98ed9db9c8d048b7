"""The toy word embeddings of notebooks 04-05: 8 named axes, a few dozen words, no downloads.

The table lives in ``data/toy_embeddings.json`` and is written, vector by vector, by
``scripts/make_toy_embeddings.py`` (hand-designed and explained there). Token id 0 is
``<pad>``, the zero vector, used for padding in notebook 05.

    emb = load_toy_embeddings()
    ids = emb.ids("i went to the bank to fish")   # (7,) token ids
    x = emb.embed("i went to the bank to fish")   # (7, 8) vectors, float32
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import torch

from .data import load_json
from .i18n import translate as tr


def tokenize(sentence: str | Sequence[str]) -> list[str]:
    """Lower-case words split on spaces; a list of tokens is returned as a list unchanged."""
    if isinstance(sentence, str):
        return sentence.lower().split()
    return [str(t) for t in sentence]


@dataclass(frozen=True)
class ToyEmbeddings:
    """A word -> vector table with named axes.

    Attributes:
        vocab: the words, in id order (``vocab[0]`` is the pad token).
        axes: the names of the d_model feature axes.
        axis_meaning: one line per axis saying what it measures.
        table: (len(vocab), d_model) float32 tensor, row i = vector of ``vocab[i]``.
        pad_id: id of the pad token (0).
    """

    vocab: tuple[str, ...]
    axes: tuple[str, ...]
    axis_meaning: dict[str, str]
    table: torch.Tensor
    pad_id: int = 0

    @property
    def d_model(self) -> int:
        return len(self.axes)

    @property
    def pad_token(self) -> str:
        return self.vocab[self.pad_id]

    @property
    def index(self) -> dict[str, int]:
        """word -> id."""
        return {word: i for i, word in enumerate(self.vocab)}

    def ids(self, sentence: str | Sequence[str]) -> torch.Tensor:
        """Token ids, shape (n,), dtype long. Unknown words raise a ValueError naming them."""
        tokens, index = tokenize(sentence), self.index
        unknown = [t for t in tokens if t not in index]
        if unknown:
            raise ValueError(tr(f"words not in the toy vocabulary: {unknown}; known words: {', '.join(self.vocab[1:])}"))
        return torch.tensor([index[t] for t in tokens], dtype=torch.long)

    def __call__(self, ids: torch.Tensor) -> torch.Tensor:
        """Look ids up like ``nn.Embedding``: (...,) long -> (..., d_model) float32."""
        ids = torch.as_tensor(ids)
        if ids.is_floating_point() or ids.dtype == torch.bool:
            raise TypeError(tr(f"ids must be integer token ids, got dtype {ids.dtype}"))
        return self.table[ids]

    def embed(self, sentence: str | Sequence[str]) -> torch.Tensor:
        """The vectors of a sentence, shape (n, d_model)."""
        return self(self.ids(sentence))

    def pad_batch(
        self, sentences: Sequence[str | Sequence[str]], side: str = "right", length: int | None = None
    ) -> torch.Tensor:
        """Token ids of several sentences padded with ``pad_id`` to one length: (B, L) long.

        Args:
            side: "right" puts the pads after the words, "left" before them.
            length: L; default the longest sentence.
        """
        if side not in ("left", "right"):
            raise ValueError(tr(f"side must be 'left' or 'right', got {side!r}"))
        rows = [self.ids(s) for s in sentences]
        longest = max(len(r) for r in rows)
        length = longest if length is None else length
        if length < longest:
            raise ValueError(tr(f"length {length} is shorter than the longest sentence ({longest} tokens)"))
        batch = torch.full((len(rows), length), self.pad_id, dtype=torch.long)
        for b, row in enumerate(rows):
            if side == "right":
                batch[b, : len(row)] = row
            else:
                batch[b, length - len(row) :] = row
        return batch

    def words(self, ids: torch.Tensor) -> list[str]:
        """The tokens of a 1-D id tensor (pads shown as the pad token)."""
        return [self.vocab[int(i)] for i in torch.as_tensor(ids).reshape(-1)]


@lru_cache(maxsize=1)
def _load() -> ToyEmbeddings:
    raw = load_json("toy_embeddings.json")
    vocab = tuple(raw["vectors"])
    table = torch.tensor(list(raw["vectors"].values()), dtype=torch.float32)
    return ToyEmbeddings(vocab, tuple(raw["axes"]), dict(raw["axis_meaning"]), table, int(raw["pad_id"]))


def load_toy_embeddings() -> ToyEmbeddings:
    """The toy embedding table (read once; the tensor is a fresh copy each call)."""
    cached = _load()
    return ToyEmbeddings(cached.vocab, cached.axes, dict(cached.axis_meaning), cached.table.clone(), cached.pad_id)


def load_sentences() -> list[str]:
    """The example sentences of notebooks 04-05 (every word is in the toy vocabulary)."""
    return list(load_json("sentences.json")["sentences"])
