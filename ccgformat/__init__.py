"""ccgformat: archive parallel-program execution traces as compressed Complete Call Graphs."""

from .errors import CcgError, ParameterError, TraceError
from .graph import Builder, Graph
from .model import Definitions, Event, EventBatch, EventKind
from .params import Params

__version__ = "0.1.0"

__all__ = ["Builder", "CcgError", "Definitions", "Event", "EventBatch", "EventKind", "Graph",
           "ParameterError", "Params", "TraceError", "__version__"]
