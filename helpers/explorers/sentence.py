"""Notebook 04's explorer: pick a sentence and a query token; see its attention row and the heatmap.

Wires two dropdowns to what notebook 04 builds: the toy embeddings, the hand-set
QKVProjection and single-head self-attention (``helpers.qkv.self_attention``).
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.patches import Rectangle

from ..embeddings import load_sentences, load_toy_embeddings, tokenize
from ..i18n import N_
from ..i18n import translate as tr
from ..plots import KEY_AXIS_LABEL, label_axes
from ..qkv import hand_set_projection, self_attention
from ..widgets import LiveFigure, new_figure


def query_options(tokens: Sequence[str]) -> list[tuple[str, int]]:
    """Dropdown options "position · word" -> position (a word may occur twice)."""
    return [(f"{i} · {tok}", i) for i, tok in enumerate(tokens)]


class SentenceExplorer(LiveFigure):
    """Two panels: the query's attention row as bars, and the sentence's whole heatmap.

    The query dropdown follows the sentence (one redraw per change of either). Drawing is
    layered so that each change redraws only what it changes:

    - the margins are laid out once, for the longest word at the longest sentence, and
      frozen (a layout pass costs as much as a draw);
    - titles, the bars' y-axis and the colour bar are drawn once (the static background);
    - a new sentence draws the heatmap and the axes that name its words over the static
      background, and the result is kept (one background per sentence, so coming back to
      a sentence is as cheap as moving the query);
    - a new query draws only the bars, the label and the row marker (``LiveFigure``'s
      blitting, with the sentence's background as the cached one).
    """

    MAX_CACHED = 16  # sentence backgrounds kept (a full-figure RGBA buffer each, about 1.5 MB)

    def __init__(self, sentences: Sequence[str], sentence: int = 0, query: int = 4) -> None:
        self.emb = load_toy_embeddings()
        self.projection = hand_set_projection(self.emb.axes)
        for s in sentences:
            self.emb.ids(s)  # unknown words: a clear error now, not inside a callback
        self._weights: dict[str, np.ndarray] = {}
        self._syncing = False
        self._static = None  # pixels of what never changes
        self._per_sentence_backgrounds: dict[str | None, object] = {}
        self._laid_out_for: str | None = None

        longest = max(len(tokenize(s)) for s in sentences)
        fig = new_figure((10.0, 4.6))
        self.ax_bar, self.ax_heat = fig.subplots(1, 2, width_ratios=[1.0, 1.05])
        self.bars = self.ax_bar.bar(np.arange(longest), np.zeros(longest), color="tab:blue")
        self.ax_bar.set(ylim=(0, 1.08), ylabel=tr("attention weight (the row sums to 1)"), xlabel=tr(KEY_AXIS_LABEL),
                        title=tr("the query's row (orange: the query itself)"))
        self.bar_label = self.ax_bar.text(0.02, 0.97, "", transform=self.ax_bar.transAxes, va="top")
        self.heat = self.ax_heat.imshow(np.zeros((1, 1)), cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
        fig.colorbar(self.heat, ax=self.ax_heat, label=tr("attention weight"), fraction=0.046, pad=0.04)
        self.ax_heat.set_title(tr("every query of the sentence (red: the chosen row)"))
        self.row_box = Rectangle((-0.5, -0.5), 1, 1, fill=False, edgecolor="tab:red", linewidth=2.5)
        self.ax_heat.add_patch(self.row_box)
        self._freeze_layout(fig, sentences)

        first = sentences[sentence]
        controls = {
            "sentence": widgets.Dropdown(options=list(sentences), value=first, description=tr("sentence"),
                                         layout=widgets.Layout(width="32em")),
            "query": widgets.Dropdown(options=query_options(tokenize(first)),
                                      value=min(query, len(tokenize(first)) - 1), description=tr("query token")),
        }
        super().__init__(fig, self._update, controls, animated=[*self.bars, self.bar_label, self.row_box])

    def _freeze_layout(self, fig, sentences: Sequence[str]) -> None:
        """Lay the margins out once for the widest labels any sentence can need, then freeze them."""
        widest = max((t for s in sentences for t in tokenize(s)), key=len)
        n = max(len(tokenize(s)) for s in sentences)
        self._lay_out(None, [widest] * n, np.zeros((n, n)))  # the longest word n times: rotated labels
        fig.canvas.draw()
        fig.set_layout_engine("none")
        for artist in self._per_sentence_artists():  # from now on drawn by render(), not by canvas.draw()
            artist.set_animated(True)

    def _per_sentence_artists(self) -> list:
        """What a new sentence changes: the heatmap, its frame, and the axes that name the words."""
        return [self.heat, *self.ax_heat.spines.values(), self.ax_heat.xaxis, self.ax_heat.yaxis, self.ax_bar.xaxis]

    def weights_of(self, sentence: str) -> np.ndarray:
        """The (n, n) attention weights of a sentence (computed once, then cached)."""
        if sentence not in self._weights:
            with torch.no_grad():
                _, w = self_attention(self.emb.embed(sentence), self.projection)
            self._weights[sentence] = w.numpy()
        return self._weights[sentence]

    def _on_change(self, change) -> None:
        if self._syncing:
            return
        if change["owner"] is self.controls["sentence"]:
            query = self.controls["query"]
            keep, tokens = query.value, tokenize(change["new"])
            self._syncing = True
            try:  # new options reset the value; keep the old position where it still exists
                query.options = query_options(tokens)
                query.value = min(keep, len(tokens) - 1)
            finally:
                self._syncing = False
        super()._on_change(change)  # redraw, then draw ahead from here

    def _lay_out(self, sentence: str | None, tokens: list[str], w: np.ndarray) -> None:
        n = len(tokens)
        for i, bar in enumerate(self.bars):
            bar.set_visible(i < n)
        self.ax_bar.set_xlim(-0.6, n - 0.4)
        self.ax_bar.set_xticks(np.arange(n), tokens, rotation=60)
        self.heat.set_data(w)
        self.heat.set_extent((-0.5, n - 0.5, n - 0.5, -0.5))
        self.ax_heat.set_xlim(-0.5, n - 0.5)
        self.ax_heat.set_ylim(n - 0.5, -0.5)
        label_axes(self.ax_heat, n, n, tokens, tokens)
        self.row_box.set_width(n)
        self._laid_out_for = sentence

    def _update(self, sentence: str, query: int) -> dict:
        tokens = tokenize(sentence)
        n = len(tokens)
        query = min(int(query), n - 1)
        w = self.weights_of(sentence)
        if self._laid_out_for != sentence:
            self._lay_out(sentence, tokens, w)
            self.invalidate(layout=False)  # the margins stay frozen
        row = w[query]
        for i, bar in enumerate(self.bars[:n]):
            bar.set_height(row[i])
            bar.set_color("tab:orange" if i == query else "tab:blue")
        self.row_box.set_y(query - 0.5)
        self.bar_label.set_text(tr(f'query: "{tokens[query]}" (position {query}, counting from 0)'))
        top = int(np.argmax(row))
        p = row[row > 0]
        return {
            N_("query"): f"{query} · {tokens[query]}",
            N_("most attended key"): f"{top} · {tokens[top]}",
            N_("its weight"): float(row[top]),
            N_("entropy (bits)"): float(-(p * np.log2(p)).sum()),
        }

    def render(self) -> bytes:
        if self._background is None:  # a new sentence: give LiveFigure that sentence's background
            canvas = self.fig.canvas
            if self._static is None:
                canvas.draw()  # everything that is not animated: titles, bars' y-axis, colour bar
                self._static = canvas.copy_from_bbox(self.fig.bbox)
            cached = self._per_sentence_backgrounds.get(self._laid_out_for)
            if cached is None:
                canvas.restore_region(self._static)
                for artist in self._per_sentence_artists():
                    artist.axes.draw_artist(artist)
                cached = canvas.copy_from_bbox(self.fig.bbox)
                if len(self._per_sentence_backgrounds) >= self.MAX_CACHED:
                    self._per_sentence_backgrounds.pop(next(iter(self._per_sentence_backgrounds)))  # the oldest
                self._per_sentence_backgrounds[self._laid_out_for] = cached
            self._background = cached
        return super().render()  # restores the background, draws bars, label and row marker


def sentence_explorer(sentences: Sequence[str] | None = None, sentence: int = 0, query: int = 4) -> SentenceExplorer:
    """Build the explorer.

    Args:
        sentences: the choices (default: ``data/sentences.json``).
        sentence, query: the starting sentence index and query position.
    """
    return SentenceExplorer(list(load_sentences() if sentences is None else sentences), sentence, query)
