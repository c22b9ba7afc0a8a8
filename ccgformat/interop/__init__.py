"""Tables for the Python data ecosystem: an archive's events as Arrow record batches and
tables, pandas and polars data frames (`Archive.to_arrow`, `to_arrow_batches`,
`to_pandas`, `to_polars`), and query results as pandas data frames (`Profile.to_pandas`,
`Messages.to_pandas`, `CallTree.to_pandas`, `Logical.to_pandas`), call-path profiles as Hatchet GraphFrames
(`CallTree.to_hatchet`), the aggregation model as an xarray DataArray
(`AggregateModel.to_xarray`), and the HTML summaries and pictures that archives and
results show in Jupyter (``_repr_html_``, ``_repr_svg_``, ``_repr_png_``), registered
here as the queries are. pyarrow, pandas, polars, llnl-hatchet and xarray are optional
extras (``arrow``, ``pandas``, ``polars``, ``hatchet``, ``xarray``), imported on first
use; a missing one is a `ccgformat.errors.MissingExtraError` naming its extra."""

from ..archive import register_query
from .calltree import calltree_frame, calltree_graphframe
from .events import COLUMN_NAMES, event_batches, event_table
from .frames import arrow_to_pandas, event_frame, event_polars
from .html import html_summary
from .labelled import model_array
from .logical import logical_frame
from .pictures import overview_svg, timeline_png
from .results import messages_frame, profile_frame

__all__ = ["COLUMN_NAMES", "arrow_to_pandas", "calltree_frame", "calltree_graphframe", "event_batches", "event_frame",
           "event_polars", "event_table", "html_summary", "logical_frame", "messages_frame", "model_array", "overview_svg",
           "profile_frame", "timeline_png"]

register_query("to_arrow", event_table)
register_query("to_arrow_batches", event_batches)
register_query("to_pandas", event_frame)
register_query("to_polars", event_polars)
register_query("profile_to_pandas", profile_frame)
register_query("messages_to_pandas", messages_frame)
register_query("calltree_to_pandas", calltree_frame)
register_query("logical_to_pandas", logical_frame)
register_query("calltree_to_hatchet", calltree_graphframe)
register_query("model_to_xarray", model_array)
register_query("repr_html", html_summary)
register_query("overview_svg", overview_svg)
register_query("timeline_png", timeline_png)
