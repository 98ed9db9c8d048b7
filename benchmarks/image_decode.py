"""Does a smaller or simpler picture reach the screen sooner? Decode time in headless Chromium.

    .venv/bin/python benchmarks/image_decode.py          # E2E_CHROMIUM picks the browser

An explorer's picture reaches the page as PNG bytes that ipywidgets' Image view wraps in a blob
URL and sets as the <img>'s src. This times that path alone, in a bare page: blob URL made, src
set, ``img.decode()`` resolved, then the next animation frame; median of ``REPEATS`` per
encoding, two rounds, for notebook 03's picture encoded as shipped (RGB, no row filters, zlib
level 1), by Pillow (level 6), as a 256-colour palette, as lossless WebP and JPEG (both only as
yardsticks: the palette and JPEG change pixels), and a 1x1 PNG: what the path costs with
nothing to decode. If the 1x1 picture takes nearly as long as the real one, the picture's
size and format are not where the time goes. Printed with the load average, never checked.
"""

from __future__ import annotations

import base64
import io
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

REPEATS = 30
DECODE_JS = """async ([b64, type, n]) => {
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const img = document.createElement('img');
  document.body.appendChild(img);
  const out = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    const url = URL.createObjectURL(new Blob([bytes], {type}));  // as ipywidgets' ImageView does
    const old = img.src;
    img.src = url;
    if (old) URL.revokeObjectURL(old);
    await img.decode().catch(() => null);
    const decoded = performance.now();
    await new Promise(resolve => requestAnimationFrame(() => resolve()));
    out.push([decoded - start, performance.now() - start]);
    await new Promise(resolve => setTimeout(resolve, 30));
  }
  return out;
}"""


def encodings() -> dict[str, tuple[bytes, str]]:
    import matplotlib

    matplotlib.use("Agg")
    from PIL import Image

    from helpers.explorers.saturation import saturation_explorer

    shipped = saturation_explorer().image.value
    rgb = Image.open(io.BytesIO(shipped)).convert("RGB")

    def encode(image, fmt: str, **options) -> bytes:
        buffer = io.BytesIO()
        image.save(buffer, fmt, **options)
        return buffer.getvalue()

    return {
        "PNG as shipped (RGB, zlib 1)": (shipped, "image/png"),
        "PNG by Pillow (level 6)": (encode(rgb, "PNG", compress_level=6), "image/png"),
        "PNG, 256-colour palette": (encode(rgb.quantize(256, dither=Image.Dither.NONE), "PNG", compress_level=1), "image/png"),
        "WebP lossless": (encode(rgb, "WEBP", lossless=True, method=0), "image/webp"),
        "JPEG quality 90": (encode(rgb, "JPEG", quality=90), "image/jpeg"),
        "PNG 1x1 (nothing to decode)": (encode(Image.new("RGB", (1, 1)), "PNG"), "image/png"),
    }


def main() -> int:
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium")
    pictures = encodings()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; median of {REPEATS} per row")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        page = browser.new_page()
        page.set_content("<html><body></body></html>")
        for rounds in (1, 2):
            for name, (data, mime) in pictures.items():
                times = page.evaluate(DECODE_JS, [base64.b64encode(data).decode(), mime, REPEATS])
                print(f"round {rounds}  {name:<30} {len(data) / 1024:6.1f} KiB   src set -> decoded "
                      f"{statistics.median(t[0] for t in times):5.1f} ms   -> next frame {statistics.median(t[1] for t in times):5.1f} ms")
        browser.close()
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
