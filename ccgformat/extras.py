"""The optional packages (the tables' pyarrow, pandas and polars, Hatchet, xarray, the figures'
matplotlib): imported on first use, or a `MissingExtraError` naming the extra that
installs them."""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingExtraError

#: the import name of each optional package and the extra (pyproject.toml) that installs it
EXTRAS = {"pyarrow": "arrow", "pandas": "pandas", "polars": "polars", "hatchet": "hatchet", "xarray": "xarray",
          "matplotlib": "plot", "mpi4py": "mpi"}


def require(package: str, what: str) -> ModuleType:
    """The module ``package`` (a key of `EXTRAS`); `MissingExtraError` saying that ``what``
    needs it, and which extra installs it, when it is not installed."""
    try:
        return importlib.import_module(package)
    except ImportError:
        raise MissingExtraError(package, EXTRAS[package], what) from None
