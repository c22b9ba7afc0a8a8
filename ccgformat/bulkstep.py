"""Process settings for a bulk step: Python's cyclic garbage collector paused, numpy's
requests for transparent huge pages declined.

Importers and the bulk writer allocate millions of small acyclic objects (events, rows,
per-location roots); the collections they trigger traverse every live object again and
again (half of a Chrome parse, a quarter of building 10^5 locations). What the step leaves
alive goes straight to the oldest generation: else the first two collections after it
traverse all of it (the definitions of 20,000 OTF2 locations: 0.15 s).

numpy asks the kernel for huge pages for every large array (``madvise``); where the
kernel then compacts memory to find them at each first touch (transparent huge pages
with ``defrag`` set to ``madvise``, a common default), the writer's table phase of a
10M-event trace spent 1.7 s of its 2.0 s in the kernel, 0.4 s without them."""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator

from numpy._core import multiarray

__all__ = ["bulk_step", "collector_paused", "hugepages_declined"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off inside the block, and as it was before after it; the
    objects tracked then are in the oldest generation (moved there without a collection)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if not gc.get_freeze_count():   # else the caller's frozen objects would thaw
                gc.freeze()
                gc.unfreeze()
            gc.enable()


@contextlib.contextmanager
def hugepages_declined() -> Iterator[None]:
    """numpy's huge-page requests off inside the block (where this numpy has the switch),
    and as they were before after it."""
    switch = getattr(multiarray, "_set_madvise_hugepage", None)
    if switch is None:
        yield
        return
    previous = switch(False)
    try:
        yield
    finally:
        switch(previous)


@contextlib.contextmanager
def bulk_step() -> Iterator[None]:
    """`collector_paused` and `hugepages_declined` together."""
    with collector_paused(), hugepages_declined():
        yield
