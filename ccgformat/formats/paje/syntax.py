"""Paje text syntax: event definitions, field tokens, exact decimal dates, quoting.

Written from the Paje trace file format description 1.3 (``schnorr/pajeng``,
``doc/lang-paje/lang-paje.tex``) and the original Paje documentation (``schnorr/paje``,
``Documentation/lang-paje``): a header of ``%EventDef <Name> <id>`` blocks, one
``% <Field> <type>`` line per field, then data lines ``<id> field field ...`` separated by
spaces or tabs, strings in double quotes when they hold blanks or are empty (no escapes),
``#`` starting a comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ...errors import FormatError

__all__ = ["EventDef", "FIELD_TYPES", "REFERENCE_HEADER", "canonical_fields", "date_formatter", "date_scale",
           "format_date", "parse_date", "parse_double", "parse_header", "quote", "tokenize"]

FIELD_TYPES = frozenset({"date", "int", "double", "hex", "string", "color", "float"})

#: Deprecated field names (format 1.2 renamed them) and their current names.
OLD_FIELD_NAMES = {
    "ContainerType": "Type",
    "EntityType": "Type",
    "SourceContainerType": "StartContainerType",
    "DestContainerType": "EndContainerType",
    "SourceContainer": "StartContainer",
    "DestContainer": "EndContainer",
}

_DEFINE_REQUIRED = ("Name", "Type")
_STATE_REQUIRED = ("Time", "Type", "Container", "Value")
_STACK_REQUIRED = ("Time", "Type", "Container")

#: Required fields of every Paje event (lang-paje sections 3.1-3.7).
REQUIRED: dict[str, tuple[str, ...]] = {
    "PajeDefineContainerType": _DEFINE_REQUIRED,
    "PajeDefineStateType": _DEFINE_REQUIRED,
    "PajeDefineEventType": _DEFINE_REQUIRED,
    "PajeDefineVariableType": _DEFINE_REQUIRED,
    "PajeDefineLinkType": _DEFINE_REQUIRED + ("StartContainerType", "EndContainerType"),
    "PajeDefineEntityValue": _DEFINE_REQUIRED,
    "PajeCreateContainer": ("Time", "Name", "Type", "Container"),
    "PajeDestroyContainer": ("Time", "Name", "Type"),
    "PajeSetState": _STATE_REQUIRED,
    "PajePushState": _STATE_REQUIRED,
    "PajePopState": _STACK_REQUIRED,
    "PajeResetState": _STACK_REQUIRED,
    "PajeNewEvent": _STATE_REQUIRED,
    "PajeSetVariable": _STATE_REQUIRED,
    "PajeAddVariable": _STATE_REQUIRED,
    "PajeSubVariable": _STATE_REQUIRED,
    "PajeStartLink": ("Time", "Type", "Container", "StartContainer", "Value", "Key"),
    "PajeEndLink": ("Time", "Type", "Container", "EndContainer", "Value", "Key"),
    "PajeTraceFile": ("Container", "Type", "Filename"),
}

#: Optional fields the format names; any other field is a user field, kept as it is.
OPTIONAL: dict[str, tuple[str, ...]] = {
    "PajeDefineContainerType": ("Alias",),
    "PajeDefineStateType": ("Alias",),
    "PajeDefineEventType": ("Alias", "Color"),
    "PajeDefineVariableType": ("Alias", "Color"),
    "PajeDefineLinkType": ("Alias",),
    "PajeDefineEntityValue": ("Alias", "Color"),
    "PajeCreateContainer": ("Alias", "Filename"),
}

#: The reference header of lang-paje section 5 (with aliases), used to write traces that
#: did not come from Paje.
REFERENCE_HEADER = """\
%EventDef PajeDefineContainerType 0
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineVariableType 1
% Alias string
% Type string
% Name string
% Color color
%EndEventDef
%EventDef PajeDefineStateType 2
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineEventType 3
% Alias string
% Type string
% Name string
% Color color
%EndEventDef
%EventDef PajeDefineLinkType 4
% Alias string
% Type string
% StartContainerType string
% EndContainerType string
% Name string
%EndEventDef
%EventDef PajeDefineEntityValue 5
% Alias string
% Type string
% Name string
% Color color
%EndEventDef
%EventDef PajeCreateContainer 6
% Time date
% Alias string
% Container string
% Type string
% Name string
%EndEventDef
%EventDef PajeDestroyContainer 7
% Time date
% Type string
% Name string
%EndEventDef
%EventDef PajeSetVariable 8
% Time date
% Container string
% Type string
% Value double
%EndEventDef
%EventDef PajeAddVariable 9
% Time date
% Container string
% Type string
% Value double
%EndEventDef
%EventDef PajeSubVariable 10
% Time date
% Container string
% Type string
% Value double
%EndEventDef
%EventDef PajeSetState 11
% Time date
% Container string
% Type string
% Value string
%EndEventDef
%EventDef PajePushState 12
% Time date
% Container string
% Type string
% Value string
%EndEventDef
%EventDef PajePopState 13
% Time date
% Container string
% Type string
%EndEventDef
%EventDef PajeResetState 14
% Time date
% Container string
% Type string
%EndEventDef
%EventDef PajeStartLink 15
% Time date
% Container string
% Type string
% StartContainer string
% Value string
% Key string
%EndEventDef
%EventDef PajeEndLink 16
% Time date
% Container string
% Type string
% EndContainer string
% Value string
% Key string
%EndEventDef
%EventDef PajeNewEvent 17
% Time date
% Container string
% Type string
% Value string
%EndEventDef
"""


def canonical_fields(event: str, fields: list[str]) -> list[str]:
    """The current names of a definition's fields: deprecated names are renamed, and a
    ``PajeDestroyContainer`` that names its container ``Container`` instead of ``Name``
    (as the JRastro Java tracer writes it) gets ``Name``."""
    names = [OLD_FIELD_NAMES.get(name, name) for name in fields]
    if event == "PajeDestroyContainer" and "Name" not in names and "Container" in names:
        names[names.index("Container")] = "Name"
    return names


@dataclass
class EventDef:
    """One ``%EventDef`` block: its event name, id, and fields (written names and types)."""

    name: str
    id: str
    fields: list[tuple[str, str]]
    line: int

    def check(self, path: str) -> list[str]:
        """The canonical field names; FormatError for an unknown event, a duplicate field
        or a missing required field."""
        if self.name not in REQUIRED:
            raise FormatError(f"unknown Paje event {self.name!r} in %EventDef {self.id}", path=path, line=self.line)
        names = canonical_fields(self.name, [name for name, _ in self.fields])
        if len(set(names)) != len(names):
            raise FormatError(f"%EventDef {self.name} {self.id} names a field twice", path=path, line=self.line)
        missing = [name for name in REQUIRED[self.name] if name not in names]
        if missing:
            raise FormatError(f"%EventDef {self.name} {self.id} lacks the required field(s) {', '.join(missing)}",
                              path=path, line=self.line)
        return names

    def to_json(self) -> dict:
        return {"name": self.name, "id": self.id, "fields": [list(f) for f in self.fields]}


def parse_header(text: str, path: str = "<reference header>") -> list[EventDef]:
    """The definitions of a header made only of ``%`` lines (used for REFERENCE_HEADER)."""
    defs: list[EventDef] = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line[1:].split()
        if words[0] == "EventDef":
            defs.append(EventDef(words[1], words[2], [], number))
        elif words[0] != "EndEventDef":
            defs[-1].fields.append((words[0], words[1]))
    for definition in defs:
        definition.check(path)
    return defs


# --------------------------------------------------------------------------- tokens

_TOKEN = re.compile(r'[ \t]*(?:"([^"]*)"|([^\s"#]+))(?=[ \t#]|$)')


def tokenize(line: str, path: str, number: int) -> list[str]:
    """The fields of a data line holding quotes or ``#`` (other lines are simply split)."""
    tokens = []
    position = 0
    while True:
        match = _TOKEN.match(line, position)
        if match is None:
            rest = line[position:].lstrip(" \t")
            if not rest or rest.startswith("#"):
                return tokens
            raise FormatError(f"unparseable field at {rest[:20]!r} (unterminated quote?)", path=path, line=number)
        quoted, plain = match.groups()
        tokens.append(plain if quoted is None else quoted)
        position = match.end()


_PLAIN = re.compile(r'[^\s"#]+')


def quote(text: str) -> str:
    """A field as written in a data line: quoted when empty or holding blanks or ``#``.
    Characters a Paje string cannot hold (double quotes, line breaks) become ``'`` and
    a space."""
    if _PLAIN.fullmatch(text):
        return text
    return '"' + text.replace('"', "'").replace("\n", " ").replace("\r", " ") + '"'


# --------------------------------------------------------------------------- numbers

_DATE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]{1,4}))?")
MAX_DECIMALS = 18


def parse_date(text: str) -> tuple[int, int] | None:
    """A decimal date as ``(integer, decimals)`` with value ``integer / 10**decimals``,
    parsed exactly (never through a float); None when it is not a number."""
    whole, _, fraction = text.partition(".")
    if whole.isdigit() and fraction.isdigit() and text.isascii():  # the usual form, fast
        return int(whole + fraction), len(fraction)
    match = _DATE.fullmatch(text)
    if match is None:
        return None
    sign, whole, fraction, exponent = match.groups()
    fraction = fraction or ""
    if not whole and not fraction:
        return None
    value = int(whole + fraction)
    decimals = len(fraction) - (int(exponent) if exponent else 0)
    if decimals < 0:
        value *= 10 ** -decimals
        decimals = 0
    return (-value if sign == "-" else value), decimals


def format_date(ticks: int, decimals: int) -> str:
    """``ticks / 10**decimals`` written exactly with ``decimals`` digits after the point."""
    if decimals == 0:
        return str(ticks)
    whole, fraction = divmod(abs(ticks), 10 ** decimals)
    return f"{'-' if ticks < 0 else ''}{whole}.{fraction:0{decimals}d}"


def date_scale(resolution: int) -> tuple[int, int]:
    """How dates are written at a timer resolution: ``(scale, decimals)``, a date being
    ``ticks * scale`` with ``decimals`` digits after the point, exact when the resolution
    divides a power of ten (10**k, or any 2**a * 5**b); else scale 0, and dates rounded
    (half up) to two digits more than the resolution has."""
    for decimals in range(MAX_DECIMALS + 13):
        if 10 ** decimals % resolution == 0:
            return 10 ** decimals // resolution, decimals
    return 0, len(str(resolution)) + 2


def date_formatter(resolution: int, offset: int) -> Callable[[int], str]:
    """Seconds since the tick ``offset`` as text (see `date_scale`)."""
    scale, decimals = date_scale(resolution)
    if scale:
        return lambda ticks: format_date((ticks - offset) * scale, decimals)
    return lambda ticks: format_date((2 * (ticks - offset) * 10 ** decimals + resolution) // (2 * resolution),
                                     decimals)


_DOUBLE = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE)


def parse_double(text: str) -> float | None:
    """A ``double`` field's value, or None when it is not a decimal number."""
    return float(text) if _DOUBLE.fullmatch(text) else None
