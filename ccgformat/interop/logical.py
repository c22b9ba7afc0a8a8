"""`Logical.to_pandas`: a row per communication event of a logical-time answer, its
columns (`ccgformat.query.logical_result.COLUMNS`) with the location's name and the
event kind's name as categoricals (registered in `ccgformat.interop`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..extras import require
from ..model import EventKind
from ..query.logical_result import COLUMNS, Logical

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["logical_frame"]


def logical_frame(result: Logical) -> pd.DataFrame:
    """The events of ``result`` as a pandas DataFrame."""
    pd = require("pandas", "Logical.to_pandas")
    data = {name: column for name, column in result.columns().items()}
    data["location_name"] = pd.Categorical.from_codes(result.location, categories=list(result.names)) \
        if len(set(result.names)) == len(result.names) else np.array(result.names, dtype=object)[result.location]
    kinds = [kind.name for kind in EventKind]
    data["kind"] = pd.Categorical.from_codes(result.kind, categories=kinds)
    frame = pd.DataFrame(data, columns=[*COLUMNS[:1], "location_name", *COLUMNS[1:]])
    frame.attrs.update({"scheme": result.scheme, "timer_resolution": result.timer_resolution})
    return frame
