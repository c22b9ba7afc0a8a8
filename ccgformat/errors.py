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
        CcgError.__init__(self, f"{where}: {reason}")  # not super(): InputTraceError's next class is FormatError


class ParameterError(CcgError):
    """Compression or query parameters outside their valid range."""


class ArchiveError(CcgError):
    """A problem with a .ccg file; names the file and the byte offset where it was found."""

    def __init__(self, reason: str, *, path: str | None = None, offset: int | None = None):
        self.reason = reason
        self.path = path
        self.offset = offset
        where = path or "<archive>"
        if offset is not None:
            where += f" at byte {offset}"
        super().__init__(f"{where}: {reason}")


class CorruptArchiveError(ArchiveError):
    """The file's structure is inconsistent: a bad magic, offset, length or value."""


class ChecksumError(CorruptArchiveError):
    """A block's CRC32C does not match its stored bytes."""


class TruncatedError(CorruptArchiveError):
    """The file ends before a structure it announces."""


class UnsupportedVersionError(ArchiveError):
    """The file needs a newer reader: an unknown major version or must-understand section."""


class FormatError(CcgError):
    """An input file whose format is unknown, or that a format reader cannot parse.

    The message names the file and, where known, the line or byte offset of the problem.
    """

    def __init__(self, reason: str, *, path: str | None = None, line: int | None = None,
                 offset: int | None = None):
        self.reason = reason
        self.path = path
        self.line = line
        self.offset = offset
        where = path or "<input>"
        if line is not None:
            where += f" line {line}"
        if offset is not None:
            where += f" at byte {offset}"
        super().__init__(f"{where}: {reason}")


class InputTraceError(TraceError, FormatError):
    """A `TraceError` in the events read from an input file (``convert``): also a
    `FormatError`, whose message names the file before the location and event."""

    def __init__(self, reason: str, *, path: str, location: int, index: int, time: int | None):
        TraceError.__init__(self, reason, location=location, index=index, time=time)
        self.path, self.line, self.offset = path, None, None
        self.args = (f"{path}: {self.args[0]}",)


class MissingExtraError(CcgError, ImportError):
    """An optional dependency is not installed; the message names the package and the
    extra that installs it (``pip install 'ccgformat[EXTRA]'``)."""

    def __init__(self, package: str, extra: str, what: str):
        self.package = package
        self.extra = extra
        CcgError.__init__(self, f"{what} needs the {package} package, which is not installed: "
                                f"pip install 'ccgformat[{extra}]'")
        self.name = package  # ImportError's: the module that could not be imported


class MissingToolError(CcgError):
    """A program ccgformat runs is not installed; the message names it and the package that
    installs it."""

    def __init__(self, program: str, package: str, what: str):
        self.program = program
        self.package = package
        CcgError.__init__(self, f"{what} needs the {program} program, which is not installed: install the "
                                f"{package} package (Debian: apt-get install {package})")


class ParallelError(CcgError):
    """Another MPI rank of a parallel conversion or query (``--mpi``) failed; the message
    names the rank and its error. Every rank raises it (or its own error), so that all
    of them end, none waits for the failed one."""

    def __init__(self, rank: int, reason: str):
        self.rank = rank
        self.reason = reason
        super().__init__(f"MPI rank {rank} failed: {reason}")


class MergeConflictError(CcgError):
    """Archives that cannot be merged (`ccgformat.merge`): definitions that disagree (one
    name, two structures; different timer resolutions) or one location's events in two
    archives over overlapping times. The message names both files, the definition and
    the reason."""

    def __init__(self, reason: str, *, paths: tuple[str, ...], what: str):
        self.reason = reason
        self.paths = paths
        self.what = what
        CcgError.__init__(self, f"{' and '.join(paths)}: {what}: {reason}")
