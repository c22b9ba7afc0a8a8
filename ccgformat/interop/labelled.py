"""The aggregation model as a labelled array (`AggregateModel.to_xarray`; extra
``xarray``): an ``xarray.DataArray`` of the model's ``values`` with dims ``location`` x
``slice`` x ``state`` and coordinates

========= ============= ============================================================
dim       coordinate    value
========= ============= ============================================================
location  location      the archive location id of each row
location  location_name its name (the hierarchy leaf's)
slice     slice         0 .. T-1
slice     start, stop   the slice's bounds in seconds (ticks / timer resolution)
slice     start_tick,   the same in ticks, exactly
          stop_tick
state     state         the state names (regions or region groups)
========= ============= ============================================================

The values stay int64 ticks (attrs ``units`` and ``timer_resolution``), so that
``array.sel(state="MPI_Send").sum("slice") / array.timer_resolution`` gives seconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..aggregate_model import AggregateModel
from ..extras import require

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["model_array"]


def model_array(model: AggregateModel) -> xr.DataArray:
    """The model's ``values`` labelled (see the module docstring)."""
    xr = require("xarray", "AggregateModel.to_xarray")
    bounds = np.asarray(model.bounds, np.int64)
    seconds = bounds / max(model.resolution, 1)
    return xr.DataArray(
        model.values, dims=("location", "slice", "state"), name="exclusive_time",
        coords={"location": np.asarray(model.locations, np.int64),
                "location_name": ("location", list(model.location_names())),
                "slice": np.arange(len(bounds) - 1),
                "start": ("slice", seconds[:-1], {"units": "s"}), "stop": ("slice", seconds[1:], {"units": "s"}),
                "start_tick": ("slice", bounds[:-1]), "stop_tick": ("slice", bounds[1:]),
                "state": list(model.states)},
        attrs={"units": "ticks", "timer_resolution": model.resolution,
               "long_name": "exclusive time of the state as the innermost open region"})
