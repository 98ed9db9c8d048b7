"""Live figures driven by ipywidgets controls.

The figure is made once. Each control change calls an update function that edits the
figure's artists in place; the figure is rendered by Agg to a PNG and shown in an
``ipywidgets.Image``. No re-plot per event, no matplotlib frontend extension needed.

Displayed in JupyterLab the explorer is live; displayed anywhere else (nbval, GitHub,
nbconvert) the same output carries a static PNG of its current state.

Works with ipywidgets 7.7+ and 8.x, and imports ipywidgets only when a live figure is made,
so the rest of ``helpers`` runs where no widget stack is installed (a GPU server, a script).
"""

from __future__ import annotations

import base64
import html
import struct
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.text import Text

from .i18n import translate as tr
from .plots import WEIGHT_LABEL, as_matrix, label_axes, mask_overlay

if TYPE_CHECKING:
    import ipywidgets as widgets

Readouts = Mapping[str, float | int | str]


def ipywidgets():
    """The ipywidgets module, imported on first use; a clear error if it is not installed."""
    try:
        import ipywidgets as module
    except ModuleNotFoundError:
        raise ModuleNotFoundError(tr(
            "The live explorers need ipywidgets (7.7 or newer): pip install ipywidgets, "
            "or start Jupyter with `make lab`. The rest of helpers works without it."
        )) from None
    return module


def widget_view_bundle(widget: widgets.Widget) -> dict:
    """The mime bundle that shows a live widget in a Jupyter front end.

    ipywidgets 8 returns it from ``_repr_mimebundle_``; 7.x has no such method and publishes
    the same bundle from ``_ipython_display_``. Built here, it is the same under both.
    """
    view = {"version_major": 2, "version_minor": 0, "model_id": widget.model_id}
    return {"application/vnd.jupyter.widget-view+json": view}


def without_echo(control: widgets.ValueWidget) -> None:
    """Ask the kernel not to echo this control's value back to the front end.

    ipywidgets 8 answers each value a front end sends with an ``echo_update`` message carrying
    the same value, so that other front ends on the kernel see it too; on a slider step that is
    one message more before the picture (ipywidgets 7 sends none). A trait's ``echo_update``
    metadata turns the echo off, here for this one control only (traitlets reads metadata from
    the instance's ``_<trait>_metadata`` before the class's): the model and its front-end view
    stay ipywidgets' own, and a value set in the kernel still reaches the front end. What is
    lost: a second browser window on the same kernel no longer follows this control.
    """
    control._value_metadata = {**getattr(control, "_value_metadata", {}), "echo_update": False}


def new_figure(figsize: tuple[float, float], dpi: int = 90) -> Figure:
    """A figure outside pyplot (so the inline backend never shows it twice), Agg canvas."""
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def png_bytes(fig: Figure) -> bytes:
    """PNG of what the canvas last drew (no redraw): RGB rows without PNG filtering, zlib
    level 1. Half the time of Pillow's encoder (which tries a filter per row), same pixels."""
    canvas = fig.canvas
    width, height = canvas.get_width_height()
    rgba = np.asarray(canvas.buffer_rgba())
    rows = np.zeros((height, 1 + 3 * width), np.uint8)  # each row: filter type 0, then R G B ...
    rows[:, 1:] = rgba[:, :, :3].reshape(height, 3 * width)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, not interlaced
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
            + _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), 1)) + _png_chunk(b"IEND", b""))


def format_readout(value: float | int | str) -> str:
    """One readout as shown beside the picture: a float with 3 decimals, a word in the learner's
    language, anything else as is."""
    return f"{value:.3f}" if isinstance(value, float) else tr(str(value))


def format_readouts(readouts: Readouts) -> str:
    """An HTML table of name: value, floats with 3 decimals; names and words in the learner's
    language (the mapping itself keeps the English names, which code uses as keys)."""
    cell = "padding:0 0.4em;white-space:nowrap"  # a name or value never wraps mid-word
    rows = "".join(
        f"<tr><td style='{cell}'>{html.escape(tr(str(k)))}</td>"
        f"<td style='{cell};text-align:right;font-family:monospace'>"
        f"{html.escape(format_readout(v))}</td></tr>"
        for k, v in readouts.items()
    )
    return f"<table>{rows}</table>"


class LiveFigure:
    """Controls -> ``update(**values)`` edits a figure made once -> PNG in an Image widget.

    Args:
        fig: the figure, ideally from :func:`new_figure`.
        update: called with the controls' current values as keyword arguments; edits the
            figure's artists (``set_data``, ``set_height``, ...) and may return readouts,
            a mapping of name -> value shown beside the picture.
        controls: name -> ipywidgets control; the name is the keyword ``update`` receives.
        animated: the artists ``update`` changes. If given, everything else (axes, ticks,
            labels, legends) is drawn once and cached, and each update only restores that
            background and draws these artists over it (blitting): several times faster.
            An update that changes anything else must call :meth:`invalidate` first.
            Without ``animated`` the whole figure is drawn on every update.

    Attributes:
        readouts: the last readouts returned by ``update``.
        last_update_ms: wall time of the last update (compute + draw + PNG).
    """

    def __init__(
        self,
        fig: Figure,
        update: Callable[..., Readouts | None],
        controls: Mapping[str, widgets.ValueWidget],
        animated: Sequence[Artist] = (),
    ) -> None:
        self.fig = fig
        self.controls = dict(controls)
        self._update = update
        self.animated = list(animated)
        for artist in self.animated:
            artist.set_animated(True)  # left out of the cached background
        self._background = None
        self._relayout = isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
        widgets = ipywidgets()
        self.image = widgets.Image(format="png")
        self.readout_box = widgets.HTML()
        self.readouts: Readouts = {}
        self.last_update_ms = float("nan")
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
            without_echo(control)
        self.refresh()

    @property
    def values(self) -> dict:
        """The controls' current values, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def set(self, **values) -> None:
        """Move controls programmatically (as a learner would); each change refreshes once."""
        for name, value in values.items():
            if name not in self.controls:
                raise ValueError(tr(f"no control named {name!r}; controls are {list(self.controls)}"))
            self.controls[name].value = value

    def _on_change(self, _change) -> None:
        self.refresh()

    _held = False  # inside held(): control changes do not redraw

    @contextmanager
    def held(self, redraw: bool = True) -> Iterator[None]:
        """Move several controls with one redraw: inside, a control change draws nothing
        (the controls' own links, such as a slider whose maximum follows another, still run);
        on leaving, one refresh shows where they ended, unless ``redraw`` is False.

        Used to set a position in one step, e.g. to render the explorer at given values.
        """
        self._held = True
        try:
            yield
        finally:
            self._held = False
        if redraw:
            self.refresh()

    def refresh(self) -> None:
        """Run the update, redraw and publish the new picture and readouts."""
        if self._held:
            return
        start = time.perf_counter()
        self.readouts = dict(self._update(**self.values) or {})
        self.image.value = self.render()
        self.readout_box.value = format_readouts(self.readouts)
        self.last_update_ms = (time.perf_counter() - start) * 1e3

    MAX_BACKGROUNDS = 16  # backgrounds kept by key (a full-figure RGBA buffer each, about 1 MB)

    def invalidate(self, layout: bool = True, key=None) -> None:
        """Redraw the cached background on the next update (ticks, limits or titles changed);
        with ``layout``, also lay out the margins again (a label's width changed).

        ``key`` (hashable, without ``layout``) names what the background shows, e.g. the control
        values the update drew it for: a background drawn under a key is kept, and the next
        ``invalidate`` with that key reuses it instead of drawing again. Only for a background
        that is a function of the key alone."""
        self._background = None
        self._background_key = None if layout else key
        if layout:
            self.__dict__.get("_kept_backgrounds", {}).clear()  # drawn with other margins
            if self._relayout:
                self.fig.set_layout_engine("constrained")

    def render(self) -> bytes:
        """Draw (the whole figure, or only the animated artists over the cached rest) and encode."""
        canvas = self.fig.canvas
        kept = self.__dict__.setdefault("_kept_backgrounds", {})
        key = getattr(self, "_background_key", None)
        if self.animated and self._background is None and key is not None and key in kept:
            self._background = kept[key]
        if not self.animated:
            canvas.draw()
        elif self._background is None:
            canvas.draw()  # animated artists are left out of it
            self._background = canvas.copy_from_bbox(self.fig.bbox)
            if key is not None:
                if len(kept) >= self.MAX_BACKGROUNDS:
                    kept.pop(next(iter(kept)))
                kept[key] = self._background
            if self._relayout:
                self.fig.set_layout_engine("none")  # freeze margins: a layout pass costs more than a draw
        else:
            canvas.restore_region(self._background)
        for artist in self.animated:
            if isinstance(artist, AxesImage) and self._paste_image(artist):
                continue
            if any(artist is text for text in self.cached_texts) and self._paste_text(artist):
                continue
            self.fig.draw_artist(artist)
        return png_bytes(self.fig)

    # Pasting instead of drawing: the same pixels, a fraction of the time (False: Agg draws everything).
    paste = True
    # Animated texts drawn over the cached background alone (no other animated artist under
    # them), so the pixels of their box are kept per text and background and pasted next time.
    cached_texts: Sequence[Text] = ()
    MAX_PIXEL_MAPS = 64
    MAX_CACHED_TEXTS = 128  # a title's box is some 30 KB

    def _paste_text(self, text: Text) -> bool:
        """Draw a text of :attr:`cached_texts`, pasting its box's pixels when this text was drawn
        over this background before; False if it must be drawn by Agg."""
        if not self.paste or self._background is None:
            return False
        cache = self.__dict__.setdefault("_text_boxes", {})
        key = (id(text), text.get_text(), id(self._background))
        found = cache.get(key)
        canvas = self.fig.canvas
        if found is not None and found[0] is self._background:  # the background itself, not a reused id
            canvas.restore_region(found[1])
            return True
        self.fig.draw_artist(text)
        if text.get_visible() and text.get_text():
            box = text.get_window_extent(canvas.get_renderer()).padded(3)  # antialiased edges included
            if len(cache) >= self.MAX_CACHED_TEXTS:
                cache.pop(next(iter(cache)))
            cache[key] = (self._background, canvas.copy_from_bbox(box))
        return True

    def _paste_image(self, image: AxesImage) -> bool:
        """Draw a nearest-neighbour image by copying its cells' colours into the canvas through a
        cached map from canvas pixel to cell; False if it must be drawn by Agg instead.

        Agg resamples the whole image on every draw (most of an update's time); the map says,
        for each canvas pixel, which cell Agg would put there. It is made once per shape and
        placement by letting Agg draw an image whose pixels number the cells, so the pixels are
        Agg's own. Only fully opaque or fully transparent cells are pasted (a transparent cell
        leaves the background, as Agg's blending does); anything else falls back to Agg.
        """
        if not self.paste:
            return False
        if not image.get_visible():
            return True  # draw_artist draws nothing either
        data = image.get_array()
        if (image.get_interpolation() != "nearest" or image.get_alpha() not in (None, 1)
                or image.get_clip_path() is not None or data is None or data.ndim not in (2, 3)):
            return False
        colours = image.to_rgba(data, bytes=True) if data.ndim == 2 else image.to_rgba(data[..., :4], bytes=True, norm=False)
        alpha = colours[..., 3]
        if not np.all((alpha == 255) | (alpha == 0)):
            return False
        ax = image.axes
        key = (id(image), data.shape[:2], tuple(image.get_extent()), tuple(ax.bbox.bounds),
               ax.get_xlim(), ax.get_ylim(), self.fig.canvas.get_width_height())
        maps = self.__dict__.setdefault("_pixel_maps", {})
        if key not in maps:
            if len(maps) >= self.MAX_PIXEL_MAPS:
                maps.pop(next(iter(maps)))
            maps[key] = self._pixel_map(image, data.shape[:2])
        found = maps[key]
        if found is None:
            return False
        (y0, y1, x0, x1), rows, cols = found
        if rows.size and cols.size:
            pixels = colours.take(rows, axis=0).take(cols, axis=1)  # nearest neighbour: rows and columns apart
            region = np.asarray(self.fig.canvas.buffer_rgba())[y0:y1, x0:x1]
            region[...] = pixels if (alpha == 255).all() else np.where(pixels[..., 3:] == 255, pixels, region)
        return True

    def _pixel_map(self, image: AxesImage, shape: tuple[int, int]):
        """((y0, y1, x0, x1), the image row of each canvas row of that box, the image column of
        each canvas column), read back from Agg drawing an image that numbers its cells; None
        where Agg blends any pixel partly or the image does not fill a rectangle of whole pixels
        (the map cannot stand in for Agg then)."""
        canvas = self.fig.canvas
        saved = canvas.copy_from_bbox(self.fig.bbox)
        data = image.get_array()
        number = np.arange(1, shape[0] * shape[1] + 1).reshape(shape)  # 0: no cell
        code = np.stack([number & 255, (number >> 8) & 255, (number >> 16) & 255, np.full(shape, 255)], axis=-1)
        try:
            canvas.get_renderer().clear()
            image.set_data(code.astype(np.uint8))
            self.fig.draw_artist(image)
            drawn = np.asarray(canvas.buffer_rgba())  # the canvas itself: read it before restoring
            alpha = drawn[..., 3]
            if not np.all((alpha == 255) | (alpha == 0)):
                return None
            ys, xs = np.flatnonzero(alpha.any(axis=1)), np.flatnonzero(alpha.any(axis=0))
            if not ys.size:
                return (0, 0, 0, 0), np.empty(0, np.int64), np.empty(0, np.int64)
            y0, y1, x0, x1 = ys[0], ys[-1] + 1, xs[0], xs[-1] + 1
            box = drawn[y0:y1, x0:x1].astype(np.int64)  # only the drawn box, not the whole canvas
        finally:
            image.set_data(data)
            canvas.restore_region(saved)
        if not (box[..., 3] == 255).all():  # not a full rectangle (a rotated or clipped image)
            return None
        cells = box[..., 0] + (box[..., 1] << 8) + (box[..., 2] << 16) - 1
        rows, cols = cells[:, 0] // shape[1], cells[0] % shape[1]
        if not np.array_equal(cells, rows[:, None] * shape[1] + cols[None, :]):
            return None
        return (int(y0), int(y1), int(x0), int(x1)), rows, cols

    @property
    def widget(self) -> widgets.Box:
        """The controls above, the picture and readouts below."""
        widgets = ipywidgets()
        controls = widgets.HBox(list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap"))
        return widgets.VBox([controls, widgets.HBox([self.image, self.readout_box])])

    def _repr_mimebundle_(self, **kwargs) -> dict:
        bundle = widget_view_bundle(self.widget)  # live view in a front end with a kernel
        bundle["image/png"] = base64.b64encode(self.image.value).decode()  # static fallback
        bundle["text/plain"] = f"{type(self).__name__} ({', '.join(self.controls)})"
        return bundle


@dataclass
class HeatmapFrame:
    """What a heatmap explorer's compute function returns for one position of the controls.

    weights: (n_q, n_k). mask: optional bool broadcastable to it, True = may attend.
    readouts: numbers shown beside the picture (entropy, max weight, ...).
    title: the figure's title for this frame (e.g. the current setting), if it changes.
    """

    weights: np.ndarray
    query_labels: Sequence[str] | None = None
    key_labels: Sequence[str] | None = None
    mask: np.ndarray | None = None
    readouts: Readouts = field(default_factory=dict)
    title: str | None = None


class LiveHeatmap(LiveFigure):
    """The series' live attention heatmap: controls -> compute -> heatmap updated in place.

    Args:
        compute: called with the controls' values; returns a :class:`HeatmapFrame` or a
            bare (n_q, n_k) matrix.
        controls: name -> ipywidgets control.
        title: the figure title (a frame's own title replaces it).
        vmin, vmax: colour range (weights: 0..1).

    Drawing is layered so that each update redraws only what it changes:

    - the margins are laid out again only when the widest tick label or the key labels'
      rotation changes (a layout pass costs more than a draw), and are frozen otherwise;
    - the colour bar and the frame are drawn once per layout (the static background);
    - new labels (or a new shape) redraw only the two axes (ticks and labels) over the static
      background; the result is kept for the last ``MAX_LABEL_SETS`` label sets, so moving a
      slider back to where it was costs no more than an update that keeps the labels;
    - every update draws the image, the mask overlay and the title over that (blitting).
    """

    MAX_LABEL_SETS = 32  # labelled backgrounds kept (a full-figure RGBA buffer each, about 1 MB)

    def __init__(
        self,
        compute: Callable[..., HeatmapFrame | np.ndarray],
        controls: Mapping[str, widgets.ValueWidget],
        *,
        title: str = " ",
        vmin: float = 0.0,
        vmax: float = 1.0,
        cmap: str = "viridis",
        figsize: tuple[float, float] = (5.2, 4.4),
        cbar_label: str = WEIGHT_LABEL,
    ) -> None:
        fig = new_figure(figsize)
        self.ax = fig.add_subplot()
        self.heat = self.ax.imshow(np.zeros((1, 1)), cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest")
        self.overlay = self.ax.imshow(np.zeros((1, 1, 4)), interpolation="nearest")
        fig.colorbar(self.heat, ax=self.ax, label=tr(cbar_label), fraction=0.046, pad=0.04)
        self.ax.set_anchor("W")  # square cells leave spare width: put it right of the heatmap, not left
        self._title = tr(title)
        self.ax.set_title(self._title)  # always present, so the layout keeps room for a frame's title
        self._compute = compute
        self._layout_key = None  # shape and labels the axes were last drawn with
        self._layout_size = None  # widest tick labels and key-label rotation the margins were laid out for
        self._static = None  # pixels of what no update changes (colour bar, frame)
        self._labelled: dict = {}  # layout key -> static background plus that key's ticks and labels
        self._set_axes_animated(True)  # drawn per label set by render(), left out of the static background
        self.frame: HeatmapFrame | None = None
        animated = [self.heat, self.overlay, *self.ax.spines.values(), self.ax.title]  # the frame over the image's edge
        self.cached_texts = [self.ax.title]  # above the axes: nothing animated under it
        super().__init__(fig, self._draw_frame, controls, animated=animated)

    def _draw_frame(self, **values) -> Readouts:
        frame = self._compute(**values)
        if not isinstance(frame, HeatmapFrame):
            frame = HeatmapFrame(frame)
        weights = as_matrix(frame.weights)
        n_q, n_k = weights.shape
        key = (n_q, n_k, tuple(frame.query_labels or ()), tuple(frame.key_labels or ()))
        if key != self._layout_key:  # new shape or labels: redraw the axes once
            extent = (-0.5, n_k - 0.5, n_q - 0.5, -0.5)
            self.heat.set_extent(extent)
            self.overlay.set_extent(extent)
            self.ax.set_xlim(extent[:2])
            self.ax.set_ylim(extent[2:])
            label_axes(self.ax, n_q, n_k, frame.query_labels, frame.key_labels)
            widest = tuple(max((len(t.get_text()) for t in ticks), default=0)
                           for ticks in (self.ax.get_yticklabels(), self.ax.get_xticklabels()))
            rotation = self.ax.get_xticklabels()[0].get_rotation() if n_k else 0.0
            relayout = (*widest, rotation) != self._layout_size
            self.invalidate(layout=relayout)
            if relayout:
                self._layout_size, self._static = (*widest, rotation), None
            self._layout_key = key
        self.heat.set_data(weights)
        self.ax.title.set_text(tr(frame.title) if frame.title is not None else self._title)
        blocked = np.zeros((1, 1), bool) if frame.mask is None else ~np.broadcast_to(as_matrix(frame.mask, "mask"), weights.shape)
        self.overlay.set_visible(bool(blocked.any()))  # an invisible artist costs no draw time
        if blocked.any():
            self.overlay.set_data(mask_overlay(blocked))
        self.frame = HeatmapFrame(weights, frame.query_labels, frame.key_labels, frame.mask, dict(frame.readouts), frame.title)
        return frame.readouts

    def _set_axes_animated(self, animated: bool) -> None:
        for axis in (self.ax.xaxis, self.ax.yaxis):
            axis.set_animated(animated)

    def render(self) -> bytes:
        if self._background is None:  # new labels: hand LiveFigure the labelled background
            canvas = self.fig.canvas
            if self._static is None:  # first draw, or the margins changed
                if self._relayout:  # lay out with the axes' labels counted, then freeze the margins
                    self._set_axes_animated(False)
                    self.fig.get_layout_engine().execute(self.fig)
                    self._set_axes_animated(True)
                    self.fig.set_layout_engine("none")
                canvas.draw()  # leaves out the animated artists and the two axes
                self._static = canvas.copy_from_bbox(self.fig.bbox)
                self._labelled.clear()
            labelled = self._labelled.get(self._layout_key)
            if labelled is None:
                canvas.restore_region(self._static)
                self.ax.draw_artist(self.ax.xaxis)
                self.ax.draw_artist(self.ax.yaxis)
                labelled = canvas.copy_from_bbox(self.fig.bbox)
                if len(self._labelled) >= self.MAX_LABEL_SETS:
                    self._labelled.pop(next(iter(self._labelled)))  # the oldest
                self._labelled[self._layout_key] = labelled
            self._background = labelled
        return super().render()
