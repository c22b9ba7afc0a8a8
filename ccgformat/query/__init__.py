"""Queries on the compressed graph, without decompressing the trace (dissertation 3.4,
4.5): `profile` (the cached summary query), `timeline` (per-pixel exclusive-time shares
and their colour blending), `messages` (send/receive and collective matching) and
`aggregate` (the microscopic model of paper 000).

Each takes a `ccgformat.Graph` or an open `ccgformat.Archive`; `Archive` has the same
four as methods, registered here (`ccgformat.archive.register_query`).
"""

from ..archive import register_query
from .aggregate import aggregate
from .aggregate_tables import levels as aggregation_levels
from .messages import Messages, messages
from .profile import Profile, profile
from .timeline import Timeline, timeline

__all__ = ["Messages", "Profile", "Timeline", "aggregate", "messages", "profile", "timeline"]

register_query("profile", profile)
register_query("timeline", timeline)
register_query("messages", messages)
register_query("aggregate", aggregate)
register_query("aggregation_levels", aggregation_levels)
