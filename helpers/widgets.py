"""Live figures driven by ipywidgets controls.

The figure is made once. Each control change calls an update function that edits the
figure's artists in place; the figure is rendered by Agg to a PNG and shown by a small canvas
widget (:func:`picture_widget`: anywidget, or a plain ``ipywidgets.Image`` where anywidget is not
installed). While the learner looks, the kernel draws the positions one move away and sends them
ahead, so a step to one of them is painted by the browser at once. No re-plot per event, no
matplotlib frontend extension needed.

Displayed in JupyterLab the explorer is live; displayed anywhere else (nbval, GitHub,
nbconvert) the same output carries a static PNG of its current state.

Works with ipywidgets 7.7+ and 8.x, and imports ipywidgets only when a live figure is made,
so the rest of ``helpers`` runs where no widget stack is installed (a GPU server, a script).
"""

from __future__ import annotations

import asyncio
import base64
import html
import json
import math
import os
import struct
import sys
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
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


_FRAME_VIEW = []  # the FrameView class, made on first use (anywidget imported only then)


def _frame_view_class():
    """The canvas widget of helpers/frame_view.js, or None where anywidget is not installed."""
    if not _FRAME_VIEW:
        try:
            import anywidget
            import traitlets
        except ModuleNotFoundError:
            _FRAME_VIEW.append(None)
            return None

        class FrameView(anywidget.AnyWidget):
            """A live explorer's picture on a canvas, with its readouts beside it.

            ``value`` is the PNG of the current picture, ``key`` (a JSON list) the controls'
            values it shows, ``readouts`` the HTML beside it. Pictures sent ahead with
            :meth:`send_ahead` are painted by the browser as soon as the controls reach them.
            """

            _esm = Path(__file__).with_name("frame_view.js").read_text(encoding="utf-8")
            value = traitlets.Bytes(b"").tag(sync=True)
            key = traitlets.Unicode("[]").tag(sync=True)
            readouts = traitlets.Unicode("").tag(sync=True)
            alt = traitlets.Unicode("").tag(sync=True)
            control_ids = traitlets.List(traitlets.Unicode()).tag(sync=True)
            control_traits = traitlets.List(traitlets.Unicode()).tag(sync=True)

            drawing_ahead = traitlets.Bool(False).tag(sync=True)  # the kernel is still drawing ahead

            def send_ahead(self, keys: list[list], readouts: list[str], alts: list[str], pictures: list[bytes]) -> None:
                self.send({"type": "ahead", "keys": keys, "readouts": readouts, "alts": alts}, buffers=pictures)

        _FRAME_VIEW.append(FrameView)
    return _FRAME_VIEW[0]


def picture_kind() -> str:
    """"canvas" (a FrameView, drawn ahead) or "image" (an ``ipywidgets.Image``, every picture from
    the kernel). The canvas is tested in JupyterLab and Notebook 7; Colab and VS Code, where it is
    not, get the image. ``ATTENTION_LAB_PICTURE=image`` or ``=canvas`` chooses."""
    asked = os.environ.get("ATTENTION_LAB_PICTURE", "")
    if asked in ("image", "canvas"):
        return asked
    untested = "google.colab" in sys.modules or "VSCODE_PID" in os.environ
    return "image" if untested else "canvas"


def picture_widget(alt: str = ""):
    """The widget that shows an explorer's picture: a FrameView where :func:`picture_kind` says
    canvas and anywidget is installed, else an ``ipywidgets.Image``."""
    view = _frame_view_class() if picture_kind() == "canvas" else None
    return ipywidgets().Image(format="png") if view is None else view(alt=alt)


def control_key(control: widgets.ValueWidget):
    """What the front end holds for a control: a selection's index, any other control's value."""
    return control.index if hasattr(control, "_options_values") else control.value


def listeners(control: widgets.ValueWidget) -> list:
    """What observes a control's value besides its class's own handlers: another control that
    follows it, say. Drawing ahead along such a control could show a position the kernel would
    not (its follower has not moved yet), so it is not drawn ahead."""
    import traitlets

    found = control._trait_notifiers.get("value", {}).get("change", [])
    return [f for f in found if not isinstance(f, traitlets.ObserveHandler)]


def synced_trait(control: widgets.ValueWidget) -> str:
    return "index" if hasattr(control, "_options_values") else "value"


def positions_along(control: widgets.ValueWidget, moved: int = 0, reach: int = 32) -> list:
    """Values of ``control`` one move or more away from its value, nearest first, at most
    ``reach`` of them: a slider's positions (at equal distance, those in the direction ``moved``,
    +1 or -1, first), a selection's other options, a checkbox's other state. Values a front end
    would send."""
    if hasattr(control, "_options_values"):
        others = sorted((i for i in range(len(control._options_values)) if i != control.index),
                        key=lambda i: (abs(i - control.index), -moved * (i - control.index)))
        return [control._options_values[i] for i in others[:reach]]
    if isinstance(control.value, bool):
        return [not control.value]
    if not hasattr(control, "step") or not control.step:
        return []
    log = hasattr(control, "base")  # FloatLogSlider: the step is in the exponent
    at = math.log(control.value, control.base) if log else control.value
    low, high = control.min, control.max
    step = control.step
    ahead, back = [], []
    for i in range(1, reach + 1):
        for sign, found in ((1, ahead), (-1, back)):
            value = at + sign * i * step
            if low - 1e-9 * step <= value <= high + 1e-9 * step:
                found.append(value)
    first, second = (back, ahead) if moved < 0 else (ahead, back)
    order = [v for pair in zip(first, second, strict=False) for v in pair]
    order += first[len(second):] + second[len(first):]
    order = order[:reach]
    if isinstance(control.value, int):
        order = [int(round(v)) for v in order]
    return [control.base**v for v in order] if log else order


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
        limits: a slider whose maximum follows another control: follower name -> (leader
            name, function of the leader's value giving the follower's maximum). Declared here
            (not as an observer of the leader's own) so that positions of the leader can be
            drawn ahead too, the follower clamped as it will be.

    Attributes:
        readouts: the last readouts returned by ``update``.
        last_update_ms: wall time of the last update (compute + draw + PNG).

    Shown in a front end by a FrameView, the explorer draws ahead: after each change, between
    messages, it draws the positions of each control nearest the current one (the whole range of
    a slider, every option of a selection) and sends them, so a move there is painted at once.
    """

    def __init__(
        self,
        fig: Figure,
        update: Callable[..., Readouts | None],
        controls: Mapping[str, widgets.ValueWidget],
        animated: Sequence[Artist] = (),
        limits: Mapping[str, tuple[str, Callable[[object], int]]] | None = None,
    ) -> None:
        self.fig = fig
        self.controls = dict(controls)
        self._update = update
        self.animated = list(animated)
        for artist in self.animated:
            artist.set_animated(True)  # left out of the cached background
        self._background = None
        self._relayout = isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
        # where each axes stood before any layout: every layout starts from there, so the margins
        # depend on what the figure shows, not on the positions shown before (constrained layout
        # refines its margins from where the axes stand)
        self._unlaid = [(ax, ax.get_position(original=True).frozen(), ax.get_position().frozen()) for ax in fig.axes]
        widgets = ipywidgets()
        self.image = picture_widget()
        self.readout_box = widgets.HTML()  # beside a plain Image; a FrameView shows its own
        self.readouts: Readouts = {}
        self.last_update_ms = float("nan")
        # the pictures sent ahead, oldest first: key -> (PNG, readouts, their HTML, text alternative)
        self._ahead_sent: dict[str, tuple] = {}
        self._ahead_plan: list[dict] = []
        self._ahead_running = False
        self._figure_moved = False  # drawn ahead since the last refresh: the figure shows another position
        # drawn ahead only along controls no other code listens to (it could move another control)
        self._free = {name: not listeners(control) for name, control in self.controls.items()}
        self.limits = dict(limits or {})
        for follower, (leader, maximum) in self.limits.items():
            self.controls[leader].observe(self._follower(follower, maximum), names="value")  # before the redraw
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
            without_echo(control)
        if hasattr(self.image, "send_ahead"):
            self.image.control_ids = [control.model_id for control in self.controls.values()]
            self.image.control_traits = [synced_trait(control) for control in self.controls.values()]
            self.image.on_msg(self._on_view_message)
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

    def _follower(self, follower: str, maximum: Callable[[object], int]) -> Callable:
        def follow(change) -> None:
            self.controls[follower].max = maximum(change["new"])
        return follow

    def _on_change(self, change) -> None:
        self.refresh()
        name = next((n for n, c in self.controls.items() if c is change["owner"]), None)
        old, new = change["old"], change["new"]
        moved = (new > old) - (new < old) if isinstance(new, int | float) and isinstance(old, int | float) else 0
        self._plan_ahead(name, moved)

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
        key = json.dumps(self.key())
        drawn = self._ahead_sent.get(key)
        if drawn is not None:  # drawn ahead (and painted by the front end already): not again
            picture, self.readouts, readouts, alt = drawn
            self._figure_moved = True  # the figure itself is put back when drawing ahead stops
        else:
            self.readouts = dict(self._update(**self.values) or {})
            self._figure_moved = False
            picture, readouts, alt = self.render(), format_readouts(self.readouts), self.alt_text()
        if hasattr(self.image, "send_ahead"):
            with self.image.hold_sync():  # one message: picture, readouts and the position they show
                self.image.value, self.image.readouts, self.image.key, self.image.alt = picture, readouts, key, alt
        else:
            self.image.value = picture
        self.readout_box.value = readouts
        self.last_update_ms = (time.perf_counter() - start) * 1e3

    def key(self, values: Mapping | None = None) -> list:
        """The controls' values as the front end holds them (a selection by its index), for
        ``values`` (name -> value, the current ones where left out)."""
        values = {**self.values, **(values or {})}
        return [control._options_values.index(values[name]) if hasattr(control, "_options_values")
                else values[name] for name, control in self.controls.items()]

    def alt_text(self) -> str:
        """The figure's titles, as the picture's text alternative."""
        titles = [t for ax in self.fig.axes for t in (ax.get_title(),) if t.strip()]
        suptitle = getattr(self.fig, "_suptitle", None)
        return "; ".join(dict.fromkeys([*([suptitle.get_text()] if suptitle else []), *titles]))

    # Drawing ahead: while a front end shows the explorer, other positions of the controls are
    # drawn between messages and sent to its FrameView, nearest the current position first.
    AHEAD_PAUSE = 0.01  # seconds between two pictures drawn ahead: a message from the front end goes first
    MAX_AHEAD = 250  # the FrameView keeps 320 (helpers/frame_view.js, the kernel's own pictures too): what was sent is still there
    NEAR = 24  # the FrameView keeps 40 decoded: the nearest positions among them

    def draw_at(self, **values) -> tuple[bytes, str, str]:
        """The picture, readouts (HTML) and text alternative of another position of the controls
        (name -> value, the current ones where left out; a follower of :attr:`limits` clamped as
        the leader's move will clamp it), without moving the controls. The figure shows that
        position until the next refresh."""
        values = {**self.values, **values}
        for follower, (leader, maximum) in self.limits.items():
            values[follower] = min(values[follower], maximum(values[leader]))
        readouts = self._update(**values) or {}
        self._figure_moved = True
        self._drawn_readouts = dict(readouts)
        return self.render(), format_readouts(readouts), self.alt_text()

    def ahead_plan(self, moved: str | None = None, direction: int = 0) -> list[dict]:
        """The positions to draw ahead, nearest first: one move of each control (``moved``
        first, in its ``direction``), then two moves, and so on; each position a change of one
        control, name -> value."""
        free = [n for n in ([moved] if moved else []) + list(self.controls) if self._free[n]]
        along = {n: positions_along(self.controls[n], direction if n == moved else 0, reach=self.MAX_AHEAD)
                 for n in dict.fromkeys(free)}
        depth = max(map(len, along.values()), default=0)
        return [{n: values[i]} for i in range(depth) for n, values in along.items() if i < len(values)]

    def _on_view_message(self, _view, content, _buffers) -> None:
        if content.get("type") == "ready":  # a new view: it holds nothing ahead yet
            self._ahead_sent.clear()
            self._plan_ahead(None, 0)

    def _plan_ahead(self, moved: str | None, direction: int) -> None:
        if not hasattr(self.image, "send_ahead"):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not in a kernel's event loop (a script, a test): nobody to send to
            return
        self._ahead_plan = self.ahead_plan(moved, direction)[:self.MAX_AHEAD]
        near = [self.key(values) for values in self._ahead_plan[:self.NEAR]]
        if near:  # those sent before: the front end decodes them now, ready to paint
            self.image.send({"type": "near", "keys": near})
        if self._ahead_plan and not self._ahead_running:
            self._ahead_running = self.image.drawing_ahead = True
            loop.call_later(self.AHEAD_PAUSE, self._draw_ahead, loop)

    def _draw_ahead(self, loop) -> None:
        """Draw and send the next position of the plan, then pause, so that a message from the
        front end (a move to a position not drawn yet) waits for one picture at most."""
        while self._ahead_plan:
            values = self._ahead_plan.pop(0)
            try:
                where = self.key(values)  # as the front end holds it, before any follower moves
                key = json.dumps(where)
                if key in self._ahead_sent:
                    continue
                start = time.perf_counter()
                picture, readouts, alt = self.draw_at(**values)
                spent = time.perf_counter() - start
            except Exception:  # a position the explorer cannot show (now): the front end asks the kernel
                continue
            try:
                self.image.send_ahead([where], [readouts], [alt], [picture])
            except Exception:  # the view is gone (its widget closed): nobody to draw for
                self._ahead_plan.clear()
                break
            self._ahead_sent[key] = (picture, self._drawn_readouts, readouts, alt)
            if len(self._ahead_sent) > self.MAX_AHEAD:
                self._ahead_sent.pop(next(iter(self._ahead_sent)))
            # rest as long as it drew (at least AHEAD_PAUSE): at most half a core, the browser and the
            # server that carry the pictures need the other half on a 2-core machine
            loop.call_later(max(self.AHEAD_PAUSE, spent), self._draw_ahead, loop)
            return
        self._ahead_running = self.image.drawing_ahead = False
        if self._figure_moved:  # leave the figure and readouts at the controls' position
            self.readouts = dict(self._update(**self.values) or {})
            self._figure_moved = False

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
                for ax, original, active in self._unlaid:
                    ax._set_position(original, which="original")
                    ax._set_position(active, which="active")
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
        shown = [self.image] if hasattr(self.image, "send_ahead") else [self.image, self.readout_box]
        return widgets.VBox([controls, widgets.HBox(shown)])

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

    - new labels (or a new shape, or a title of another height) lay the margins out for them,
      always from where the axes stood at first, so the picture of a position never depends on
      the positions shown before it (a picture drawn ahead is the one the kernel would draw
      later); the colour bar, the frame, the ticks and the labels are then drawn once and kept,
      with the margins, for the last ``MAX_LABEL_SETS`` label sets: moving a slider back to
      where it was costs no more than an update that keeps the labels;
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
        limits: Mapping[str, tuple[str, Callable[[object], int]]] | None = None,
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
        # layout key -> (each axes' position laid out for those labels, the pixels of everything no
        # update changes: colour bar, frame, ticks and labels); a function of the labels alone
        self._labelled: dict = {}
        self._set_axes_animated(True)  # drawn per label set by render(), left out of the static background
        self.frame: HeatmapFrame | None = None
        animated = [self.heat, self.overlay, *self.ax.spines.values(), self.ax.title]  # the frame over the image's edge
        self.cached_texts = [self.ax.title]  # above the axes: nothing animated under it
        super().__init__(fig, self._draw_frame, controls, animated=animated, limits=limits)

    def _draw_frame(self, **values) -> Readouts:
        frame = self._compute(**values)
        if not isinstance(frame, HeatmapFrame):
            frame = HeatmapFrame(frame)
        weights = as_matrix(frame.weights)
        n_q, n_k = weights.shape
        self.ax.title.set_text(tr(frame.title) if frame.title is not None else self._title)
        # the margins make room for the title's height (√ and Hangul reach above 'l'), so it is part
        # of what they are laid out for; its width moves them only where it is wider than the
        # heatmap, which no title that changes with the controls is (tests/test_frame_history.py)
        title_height = self.ax.title.get_window_extent(self.fig.canvas.get_renderer()).height
        key = (n_q, n_k, tuple(frame.query_labels or ()), tuple(frame.key_labels or ()), title_height)
        if key != self._layout_key:  # new shape, labels or title height: redraw the axes once
            extent = (-0.5, n_k - 0.5, n_q - 0.5, -0.5)
            self.heat.set_extent(extent)
            self.overlay.set_extent(extent)
            self.ax.set_xlim(extent[:2])
            self.ax.set_ylim(extent[2:])
            label_axes(self.ax, n_q, n_k, frame.query_labels, frame.key_labels)
            self._layout_key = key
            laid_out = self._labelled.get(key)
            if laid_out is None:  # lay out for these labels (from where the axes stood at first)
                self.invalidate(layout=True)
            else:  # laid out before: the same margins, and the pixels drawn then
                for ax, (original, active) in zip(self.fig.axes, laid_out[0], strict=True):
                    ax._set_position(original, which="original")
                    ax._set_position(active, which="active")
                self.invalidate(layout=False)
        self.heat.set_data(weights)
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
            laid_out = self._labelled.get(self._layout_key)
            if laid_out is None:  # first draw of these labels: lay out, draw what no update changes, then the axes
                canvas = self.fig.canvas
                self._set_axes_animated(False)  # lay out with the axes' labels counted, then freeze the margins
                self.fig.get_layout_engine().execute(self.fig)
                self._set_axes_animated(True)
                self.fig.set_layout_engine("none")
                canvas.draw()  # leaves out the animated artists and the two axes
                self.ax.draw_artist(self.ax.xaxis)
                self.ax.draw_artist(self.ax.yaxis)
                positions = [(ax.get_position(original=True).frozen(), ax.get_position().frozen()) for ax in self.fig.axes]
                laid_out = (positions, canvas.copy_from_bbox(self.fig.bbox))
                if len(self._labelled) >= self.MAX_LABEL_SETS:
                    self._labelled.pop(next(iter(self._labelled)))  # the oldest
                self._labelled[self._layout_key] = laid_out
            self._background = laid_out[1]
        return super().render()
