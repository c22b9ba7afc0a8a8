"""Colours: the palette of colour classes and linear blending into pixels (dissertation
4.31)."""

from __future__ import annotations

import colorsys

import numpy as np

#: Class colours in order (then repeating with other hues, see `palette`).
PALETTE = np.array([(31, 119, 180), (214, 39, 40), (44, 160, 44), (255, 127, 14), (148, 103, 189),
                    (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)],
                   dtype=np.float64)
BACKGROUND = np.array((255, 255, 255), dtype=np.float64)
GOLDEN = 0.6180339887498949


def palette(count: int) -> np.ndarray:
    """(count, 3) RGB colours: `PALETTE`, then hues a golden ratio of the circle apart (at
    two brightnesses), so that many colour classes stay distinguishable."""
    extra = [colorsys.hsv_to_rgb((i * GOLDEN) % 1.0, 0.65, 0.9 if i % 2 == 0 else 0.65)
             for i in range(max(count - len(PALETTE), 0))]
    return np.concatenate((PALETTE[:count], np.array(extra, dtype=np.float64).reshape(-1, 3) * 255))


def blend(shares: np.ndarray, colours: np.ndarray) -> np.ndarray:
    """(..., 3) uint8 pixels from (..., classes) ``shares`` summing to at most 1:
    ``sum_g share_g * colour_g + (1 - sum_g share_g) * background``."""
    pixels = shares @ colours + (1 - shares.sum(axis=-1))[..., None] * BACKGROUND
    return np.clip(np.rint(pixels), 0, 255).astype(np.uint8)
