"""Tables for the Python data ecosystem: an archive's events as Arrow record batches and
tables, pandas and polars data frames (`Archive.to_arrow`, `to_arrow_batches`,
`to_pandas`, `to_polars`), and query results as pandas data frames (`Profile.to_pandas`,
`Messages.to_pandas`, `CallTree.to_pandas`) and call-path profiles as Hatchet GraphFrames
(`CallTree.to_hatchet`), registered here as the queries are. pyarrow, pandas, polars and
llnl-hatchet are optional extras (``arrow``, ``pandas``, ``polars``, ``hatchet``), imported
on first use; a missing one is a `ccgformat.errors.MissingExtraError` naming its extra."""

from ..archive import register_query
from .calltree import calltree_frame, calltree_graphframe
from .events import COLUMN_NAMES, event_batches, event_table
from .frames import arrow_to_pandas, event_frame, event_polars
from .results import messages_frame, profile_frame

__all__ = ["COLUMN_NAMES", "arrow_to_pandas", "calltree_frame", "calltree_graphframe", "event_batches", "event_frame",
           "event_polars", "event_table", "messages_frame", "profile_frame"]

register_query("to_arrow", event_table)
register_query("to_arrow_batches", event_batches)
register_query("to_pandas", event_frame)
register_query("to_polars", event_polars)
register_query("profile_to_pandas", profile_frame)
register_query("messages_to_pandas", messages_frame)
register_query("calltree_to_pandas", calltree_frame)
register_query("calltree_to_hatchet", calltree_graphframe)
