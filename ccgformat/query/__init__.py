"""Queries on the compressed graph, without decompressing the trace (dissertation 3.4,
4.5): `profile` (the cached summary query), `calltree` (the same per call path),
`timeline` (per-pixel exclusive-time shares and their colour blending), `messages` and
`iter_messages` (send/receive and collective matching), `aggregate` (the microscopic model
of paper 000), `overview` (its optimal aggregation, papers 000 and 002) and `logical`
(logical time and lateness, paper 003).

Each takes a `ccgformat.Graph` or an open `ccgformat.Archive` (`overview`: an archive);
`Archive` has them as methods, registered here (`ccgformat.archive.register_query`).
"""

from ..archive import register_query
from .aggregate import aggregate
from .aggregate_tables import levels as aggregation_levels
from .calltree import calltree
from .calltree_result import CallTree
from .logical import logical
from .logical_result import Logical
from .logical_spool import streamed_logical
from .metric_integrals import metric_integrals, metric_levels
from .messages import Messages, MessageStream, iter_messages, messages
from .overview import Overview, overview
from .profile import Profile, profile
from .table_rows import table_rows, walked_window
from .timeline import Timeline, timeline
from .verify_walk import verify_walk

__all__ = ["CallTree", "Logical", "MessageStream", "Messages", "Overview", "Profile", "Timeline", "aggregate",
           "calltree", "iter_messages", "logical", "messages", "overview", "profile", "timeline"]

register_query("profile", profile)
register_query("timeline", timeline)
register_query("calltree", calltree)
register_query("messages", messages)
register_query("iter_messages", iter_messages)
register_query("aggregate", aggregate)
register_query("overview", overview)
register_query("logical", logical)
register_query("streamed_logical", streamed_logical)
register_query("aggregation_levels", aggregation_levels)
register_query("metric_integrals", metric_integrals)
register_query("metric_levels", metric_levels)
register_query("verify_walk", verify_walk)
register_query("table_rows", table_rows)
register_query("walked_window", walked_window)
