"""An archive's events as pandas and polars data frames, through the Arrow table
(`ccgformat.interop.events`): dictionary columns become categoricals, and the integer
and float columns keep missing values apart from NaN (pandas' nullable ``Int64`` and
``Float64``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .events import event_table
from ..extras import require

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    from ..archive import Archive

__all__ = ["arrow_to_pandas", "event_frame", "event_polars"]


def arrow_to_pandas(table: pa.Table) -> pd.DataFrame:
    """A pandas DataFrame of an Arrow table: int64 and float64 columns as nullable
    ``Int64`` and ``Float64``, dictionary columns as categoricals; the schema metadata as
    ``DataFrame.attrs``."""
    pd = require("pandas", "to_pandas")
    pa = require("pyarrow", "to_pandas")
    frame = table.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype(), pa.float64(): pd.Float64Dtype()}.get)
    frame.attrs.update({key.decode(): value.decode() for key, value in (table.schema.metadata or {}).items()})
    return frame


def event_frame(archive: Archive, start: int | None = None, stop: int | None = None,
                locations: list[int] | None = None) -> pd.DataFrame:
    """The events table (`event_table`) as a pandas DataFrame (`arrow_to_pandas`)."""
    require("pandas", "Archive.to_pandas")
    return arrow_to_pandas(event_table(archive, start, stop, locations))


def event_polars(archive: Archive, start: int | None = None, stop: int | None = None,
                 locations: list[int] | None = None) -> pl.DataFrame:
    """The events table (`event_table`) as a polars DataFrame (dictionary columns as
    ``Categorical``)."""
    pl = require("polars", "Archive.to_polars")
    return pl.from_arrow(event_table(archive, start, stop, locations))
