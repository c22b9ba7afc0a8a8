"""Reading the pictures back for the figure tests: the SVG's layers, texts, plot box and
cell grid, and PNG pixels (decoded by matplotlib's reader, Pillow)."""

from __future__ import annotations

import base64
import io
import xml.etree.ElementTree as ET

import numpy as np

from ccgformat.figures.axes import Box

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def layer(root: ET.Element, role: str) -> ET.Element:
    """The ``<g class=role>`` of a picture; fails when it is missing."""
    found = root.find(f"{SVG}g[@class='{role}']")
    assert found is not None, f"the picture has no {role} layer"
    return found


def texts(root: ET.Element, role: str) -> list[tuple[float, float, str]]:
    """(x, y, text) of the texts of a layer, in order."""
    return [(float(t.get("x")), float(t.get("y")), t.text or "") for t in layer(root, role).iter(f"{SVG}text")]


def axis_box(root: ET.Element, top: float) -> Box:
    """The plot box: its bottom edge is the x axis's first line; ``top`` its top."""
    line = layer(root, "x-axis").find(f"{SVG}line")
    x0, x1, bottom = float(line.get("x1")), float(line.get("x2")), float(line.get("y1"))
    return Box(x0, top, x1 - x0, bottom - top)


def grid(root: ET.Element) -> tuple[Box, np.ndarray]:
    """The cell grid of the plot layer: its box and its pixels, from the embedded PNG."""
    image = layer(root, "plot").find(f"{SVG}image")
    assert image is not None, "the plot has no image of its cells"
    box = Box(*(float(image.get(k)) for k in ("x", "y", "width", "height")))
    data = image.get("href").split(",", 1)[1]
    return box, decode_png(base64.b64decode(data))


def rects(root: ET.Element, role: str) -> list[dict[str, str]]:
    return [dict(r.attrib) for r in layer(root, role).iter(f"{SVG}rect")]


def rgb(fill: str) -> tuple[int, int, int]:
    return int(fill[1:3], 16), int(fill[3:5], 16), int(fill[5:7], 16)


def decode_png(data: bytes) -> np.ndarray:
    """(height, width, 3) uint8 pixels of a PNG (alpha dropped)."""
    from matplotlib.image import imread
    pixels = imread(io.BytesIO(data), format="png")
    if pixels.dtype != np.uint8:
        pixels = np.rint(pixels * 255).astype(np.uint8)
    return pixels[..., :3]
