"""Every SVG picture - timeline, overview, quality curves, treemap, logical timeline - of a corpus trace and
of a synthetic one, rendered by headless Chromium: no console message, text in the title
and legend, and the same picture as matplotlib's PNG of the same layout (issue 37, item
3). Skipped where Chromium is missing unless CCG_REQUIRE_CORPUS=1 (as in CI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ccgformat
from ccgformat.figures import Drawing
from ccgformat.figures.shapes import Line, Rect, Text, text_width

from .chromium import console_messages, headless
from .corpus import ROOT, require_tool
from .figure_support import decode_png, layer, parse
from .query_support import converted

sys.path.insert(0, str(ROOT / "tools"))
import synth  # noqa: E402


def pictures(archive: ccgformat.Archive) -> dict[str, Drawing]:
    first, last = archive.time_range
    overview = archive.overview(20)
    return {"timeline": archive.timeline(first, last + 1, 700).drawing(),
            "overview": overview.drawing(), "curve": overview.curve_drawing(),
            "treemap": archive.overview(20, p=0.05, kind="spatial").treemap(),
            "logical": archive.logical().drawing()}


def screenshot(chromium: str, folder: Path, drawings: dict[str, Drawing]) -> tuple[dict[str, np.ndarray], list[str]]:
    """Chromium's picture of each drawing's SVG file (each in a frame of its size, one
    under the other on one page: one browser run), and the console messages."""
    frames, top = [], 0
    for name, drawing in drawings.items():
        svg = drawing.save(folder / f"{name}.svg")
        frames.append(f'<iframe src="{svg.name}" scrolling="no" style="position:absolute; left:0; top:{top}px; '
                      f'width:{drawing.width}px; height:{drawing.height}px; border:0"></iframe>')
        top += drawing.height
    page = folder / "pictures.html"
    page.write_text(f'<!DOCTYPE html><html><body style="margin:0">{"".join(frames)}</body></html>')
    shot = folder / "pictures.png"
    width = max(drawing.width for drawing in drawings.values())
    command = headless(chromium, folder / "profile", "--hide-scrollbars", "--force-device-scale-factor=1",
                       "--allow-file-access-from-files", f"--window-size={width},{top}", f"--screenshot={shot}",
                       page.as_uri())
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    pixels, out, top = decode_png(shot.read_bytes()), {}, 0
    for name, drawing in drawings.items():
        out[name] = pixels[top:top + drawing.height, :drawing.width]
        top += drawing.height
    return out, console_messages(done.stderr)


def strokes(drawing: Drawing) -> np.ndarray:
    """(height, width) True around every text, line and outline of the drawing: where the
    two renderers may differ (their fonts, and how they smooth thin strokes); the fills
    elsewhere must not."""
    out = np.zeros((drawing.height, drawing.width), dtype=bool)

    def band(x0: float, y0: float, x1: float, y1: float, pad: int = 2) -> None:
        steps = int(max(abs(x1 - x0), abs(y1 - y0))) + 2
        for x, y in zip(np.linspace(x0, x1, steps).astype(int), np.linspace(y0, y1, steps).astype(int)):
            out[max(y - pad, 0):y + pad + 1, max(x - pad, 0):x + pad + 1] = True

    for shape in drawing.shapes:
        if isinstance(shape, Text):
            width = text_width(shape.text, shape.size) * 1.1
            left = shape.x - {"start": 0.0, "middle": width / 2, "end": width}[shape.anchor]
            out[max(int(shape.y - shape.size), 0):int(shape.y + shape.size) + 1,
                max(int(left) - 3, 0):int(left + width) + 4] = True
        elif isinstance(shape, Line):
            band(shape.x0, shape.y0, shape.x1, shape.y1)
        elif isinstance(shape, Rect) and shape.outline is not None:
            x0, y0, x1, y1 = int(shape.x), int(shape.y), int(shape.x + shape.w), int(shape.y + shape.h)
            for a, b in ((y0, y0), (y1, y1)):
                out[max(a - 2, 0):b + 3, max(x0 - 2, 0):x1 + 3] = True
            for a, b in ((x0, x0), (x1, x1)):
                out[max(y0 - 2, 0):y1 + 3, max(a - 2, 0):b + 3] = True
    return out


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> ccgformat.Archive:
    path = tmp_path_factory.mktemp("synthetic") / "spmd.ccg"
    definitions, events = synth.synthesize(12, 3000, jitter=0.3, seed=3)
    ccgformat.write_trace(path, definitions, ((location, events(location)) for location in range(12)))
    return ccgformat.open(path)


@pytest.mark.parametrize("source", ["otf2-stencil", "synthetic"])
def test_chromium_renders_each_svg_as_matplotlib_draws_its_png(tmp_path_factory, tmp_path, synthetic,
                                                                source) -> None:
    chromium = require_tool("chromium")
    archive = synthetic if source == "synthetic" else converted(tmp_path_factory, source)
    drawings = pictures(archive)
    shots, console = screenshot(chromium, tmp_path, drawings)
    assert console == [], console
    for name, drawing in drawings.items():
        shot, png = shots[name], decode_png(drawing.png())
        assert shot.shape == png.shape == (drawing.height, drawing.width, 3)
        for role in ("title", "legend"):                  # text and swatches were drawn where they belong
            ys = [float(t.get("y")) for t in layer(parse(drawing.svg()), role).iter("{http://www.w3.org/2000/svg}text")]
            band = shot[int(min(ys)) - 5:int(max(ys)) + 6]
            assert (band.max(axis=2) < 128).sum() > 20, f"{name}: no {role} text on the screen"
        close = np.abs(shot.astype(int) - png.astype(int)).max(axis=2) <= 2
        shapes = ~strokes(drawing)
        inked = shapes & ((png.min(axis=2) < 250) | (shot.min(axis=2) < 250))  # where either draws something
        assert inked.sum() > 0.05 * shapes.sum() or name == "curve"
        assert close[shapes].mean() >= 0.999 and close[inked].mean() >= 0.99, \
            f"{name}: {close[shapes].mean():.4f} of the pixels, {close[inked].mean():.4f} of the inked ones agree"
