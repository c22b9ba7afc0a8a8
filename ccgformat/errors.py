"""The exception hierarchy: every error ccgformat raises on bad input is a `CcgError`."""

from __future__ import annotations


class CcgError(ValueError):
    """Base class of all errors about bad input, bad parameters or damaged files."""


class TraceError(CcgError):
    """An event sequence that violates the event model (order, nesting, references).

    The message names the location, the event index within that location, the event's
    timestamp and the reason, so a user can find the record in the source trace.
    """

    def __init__(self, reason: str, *, location: int, index: int, time: int | None):
        self.reason = reason
        self.location = location
        self.index = index
        self.time = time
        where = f"location {location}, event {index}"
        if time is not None:
            where += f", time {time}"
        super().__init__(f"{where}: {reason}")


class ParameterError(CcgError):
    """Compression or query parameters outside their valid range."""
