"""Reading an EPILOG file into the event model (the package's `read`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...model import Definitions
from ..common import StringTable
from .definitions import DefinitionReader, extension_rows
from .events import Events, LocationStreams
from .layouts import ATTRIBUTES
from .model import Model
from .records import decode
from .source import load, scan
from .times import global_seconds, to_ticks

__all__ = ["EXTENSION_VERSION", "read"]

#: the version of what ``extensions["epilog"]`` holds: 2 keeps the definition records as
#: rows without the texts the model holds (`definitions.extension_rows`); 1 (no member)
#: kept every record, STRING records too, as objects of named fields
EXTENSION_VERSION = 2


def read(path: Path) -> tuple[Definitions, LocationStreams]:
    """Definitions and per-location event batches of an EPILOG file (plain or gzip)."""
    source = load(Path(path))
    starts = scan(source)
    kinds = np.frombuffer(source.data, np.uint8)[starts + 1]
    is_event = (kinds >= 100) | np.isin(kinds, list(ATTRIBUTES))
    defs = DefinitionReader(source, starts[~is_event]).run()
    records = decode(source, defs, starts[is_event])
    model = Model(source, defs, records)
    model.peer_ranks()
    communicators = model.communicators()
    communicators += model.placeholder_comms()
    system_tree, locations = model.system_tree()
    regions, region_index = model.regions()
    seconds = global_seconds(records.times, defs.offsets) if model.per_rank else records.times
    ticks, resolution, exact = to_ticks(source, seconds, records.starts)
    strings = StringTable([])
    events = Events(model, region_index, strings, ticks)
    definitions = Definitions(
        regions=regions, system_tree=system_tree, locations=locations, communicators=communicators,
        metrics=model.metrics(), strings=strings.strings, timer_resolution=resolution, clock_offset=0,
        provenance={"epilog_version": f"{source.major}.{source.minor}"},
        extensions={"epilog": {
            "version": [source.major, source.minor],
            "byte_order": "little" if source.order == "<" else "big",
            "compressed": source.compressed,
            "per_rank": model.per_rank,
            "exact_times": exact,
            "location_ids": model.location_ids + [None] * len(model.placeholders),
            "placeholder_ranks": model.placeholders,
            "region_ids": list(region_index),
            "communicator_ids": model.comm_ids,
            "metric_ids": list(defs.table("METRIC")),
            "extension_version": EXTENSION_VERSION,
            "definitions": extension_rows(defs),
        }})
    return definitions, events.streams()
