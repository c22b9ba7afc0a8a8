"""A continuous colour scale: a ramp of colours for values from 0 to a maximum, and its
legend - the ramp as a bar with round ticks and a caption."""

from __future__ import annotations

import numpy as np

from .axes import TEXT_SIZE, TICK, fitting_ticks
from .drawing import Drawing
from .shapes import Image, Line, Rect, Text

__all__ = ["RAMP", "SCALE_HEIGHT", "ramp", "scale_legend"]

#: the ramp's colours at 0, 1/3, 2/3 and 1 (ColorBrewer YlOrRd, from a yellow that stays
#: visible on white to a dark red)
RAMP = np.array([(255, 230, 140), (254, 170, 60), (232, 60, 35), (128, 0, 38)], dtype=np.float64)
#: the pixels a `scale_legend` takes below its top
SCALE_HEIGHT = 40.0
_BAR_HEIGHT, _BAR_WIDTH = 10, 240


def ramp(fraction: np.ndarray) -> np.ndarray:
    """(..., 3) uint8 colours of ``fraction`` (0..1, clipped), linear between the stops."""
    position = np.clip(np.asarray(fraction, np.float64), 0.0, 1.0) * (len(RAMP) - 1)
    low = np.minimum(position.astype(np.int64), len(RAMP) - 2)
    part = (position - low)[..., None]
    return np.rint(RAMP[low] * (1 - part) + RAMP[low + 1] * part).astype(np.uint8)


def scale_legend(drawing: Drawing, x: float, y: float, high: float, caption: str) -> None:
    """The ramp from 0 to ``high`` as a bar at (``x``, ``y``), round ticks under it and
    ``caption`` after it."""
    pixels = ramp(np.linspace(0.0, 1.0, _BAR_WIDTH))[None, :, :]
    shapes: list = [Image(round(x), round(y), _BAR_WIDTH, _BAR_HEIGHT, np.repeat(pixels, _BAR_HEIGHT, axis=0)),
                    Rect(round(x), round(y), _BAR_WIDTH, _BAR_HEIGHT, (255.0, 255.0, 255.0), 0.0,
                         outline=(0.0, 0.0, 0.0))]
    top = round(y) + _BAR_HEIGHT
    for tick, label in zip(*fitting_ticks(0.0, high if high > 0 else 1.0, _BAR_WIDTH)):
        at = round(x) + tick / (high if high > 0 else 1.0) * _BAR_WIDTH
        shapes += [Line(at, top, at, top + TICK), Text(at, top + TICK + 8, label, TEXT_SIZE, "middle")]
    shapes.append(Text(round(x) + _BAR_WIDTH + 16, round(y) + _BAR_HEIGHT / 2, caption, TEXT_SIZE))
    drawing.add("legend", *shapes)
