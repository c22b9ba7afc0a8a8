"""The in-memory compressed Complete Call Graph: builder, node pool and walking."""

from .builder import Builder
from .graph import BuildMetrics, Graph, LocationRoot
from .intervals import Interval
from .pool import NodeKind, NodePool
from .walk import Cursor, LocationWalker

__all__ = ["Builder", "BuildMetrics", "Cursor", "Graph", "Interval", "LocationRoot", "LocationWalker",
           "NodeKind", "NodePool"]
