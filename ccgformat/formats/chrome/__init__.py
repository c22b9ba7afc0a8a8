"""Chrome Trace Event JSON (chrome://tracing, Perfetto UI): import and export.

The file is the JSON array form ``[{event}, ...]`` (its closing bracket may be missing) or
the object form ``{"traceEvents": [...], ...}``, optionally gzip-compressed. Times are
microseconds, given as JSON numbers or numeric strings. Mapping to the event model
(docs/formats/chrome.md has the full table):

- Locations are the distinct ``(pid, tid)`` pairs (``tid`` may be absent), in order of
  their first non-metadata event, then those only named by metadata; each ``pid`` is a
  system-tree node of kind ``process``. ``M`` events ``process_name``/``thread_name``
  name them; all ``M`` events are kept in ``extensions["chrome"]["metadata"]``.
- ``X`` (and matched ``B``/``E`` pairs) become ENTER/LEAVE of the region ``(name, cat)``
  (``cat`` is the region group). Calls on one thread nest when one interval contains the
  other; an ``X`` that overlaps another without nesting goes to an extra location
  ("overlap lane") of the same ``pid``/``tid``, appended after all others, so no call is
  lost or cut. Fields without a column (``args``...) travel in a GENERIC
  ``chrome:fields`` record right before the event they belong to.
- ``C`` events become METRIC samples, one metric per (counter name, series key).
- Flow events ``s``/``t``/``f`` chained by ``(cat, id)`` become SEND/RECV pairs between
  consecutive steps, each step preceded by a GENERIC ``chrome:flow`` holding the original
  event; every other event (instants, async, unpaired flows, malformed counters...) is a
  GENERIC ``chrome:event`` holding the whole event.
- Timestamps become integer ticks without rounding: ``timer_resolution`` is 10**(6+d)
  ticks per second for the d fractional digits the file needs.

The exporter writes calls as ``X`` (``B``/``E`` for a location whose order at equal
timestamps ``X`` cannot express; each ``E`` named as its ``B``, as viewers need), messages as ``s``/``f`` flows paired in FIFO order per
(sender, receiver, comm, tag), metrics as ``C``, and markers and other records as
``i`` instants; events of category ``ccgformat`` carry their model event exactly, and
the top-level ``ccgformat`` object carries the timer so a re-import gets the same ticks.
"""

from ...deferred import Deferred
from .common import EXTENSION, OWN
from .detect import sniff

#: `reader.read` and `writer.write`, imported at the first call
read = Deferred("ccgformat.formats.chrome.reader", "read")
write = Deferred("ccgformat.formats.chrome.writer", "write")

__all__ = ["EXTENSION", "OWN", "read", "sniff", "write"]
