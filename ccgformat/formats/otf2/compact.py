"""The fields of ``extensions["otf2"]["definitions"]`` that the model regions already
hold, left out on import (`compact_calls`, layout version 2) and put back before export
(`restore_calls`).

A Score-P archive defines a region for every function of every paradigm it wraps (235
in the corpus' ping-pong traces, most of them MPI functions never called). Each region's
name is a String definition, and its role and paradigm are enum values, that the model
`Region` also holds (as its ``name``, and as lower-case enum names). Kept twice, they
were half of the extension's bytes in the file. Version 2 leaves out:

* the text of a String definition that is the name of the model region of the first
  Region definition naming it (``["String", [ref]]`` instead of ``[ref, text]``);
* the role and the paradigm of a Region definition (``null``) when the model region's
  ``role`` and ``paradigm`` give back the same enum values.

Only what the model restores exactly is left out; a version 1 extension holds none of
these gaps and restores as it is."""

from __future__ import annotations

from typing import Any, Sequence

from ...errors import FormatError
from ...model import Region
from .binding import Binding, enum_value

__all__ = ["compact_calls", "restore_calls"]

#: positions of the name, role and paradigm in a Region writer call
_NAME, _ROLE, _PARADIGM = 1, 4, 5
#: each Region argument that may be left out: its position, its enum, the model field naming it
_ENUMS = ((_ROLE, "RegionRole", "role"), (_PARADIGM, "Paradigm", "paradigm"))


def _region_names(calls: list[list[Any]], regions: Sequence[Region]) -> dict[int, str]:
    """String reference -> the name of the model region of the first Region call naming it."""
    region_calls = [args for kind, args in calls if kind == "Region"]
    if len(region_calls) != len(regions):
        raise FormatError(f"extensions['otf2'] has {len(region_calls)} Region definitions; "
                          f"the definitions have {len(regions)} regions")
    names: dict[int, str] = {}
    for args, region in zip(region_calls, regions):
        names.setdefault(args[_NAME], region.name)
    return names


def _enum(binding: Binding, enum: str, name: str) -> int:
    return enum_value(binding, enum, name, "UNKNOWN")


def compact_calls(calls: list[list[Any]], regions: Sequence[Region], binding: Binding) -> list[list[Any]]:
    """``calls`` (the extension's ``definitions``, read from the archive that gave the
    model ``regions``) without the fields the model regions restore."""
    names = _region_names(calls, regions)
    compact: list[list[Any]] = []
    region = iter(regions)
    for call in calls:  # the calls left as they are are shared, not copied (100,000 at 20,000 ranks)
        kind, args = call
        if kind == "String" and len(args) == 2 and names.get(args[0]) == args[1]:
            call = [kind, [args[0]]]
        elif kind == "Region":
            model = next(region)
            args = list(args)
            for position, enum, field in _ENUMS:
                if _enum(binding, enum, getattr(model, field)) == args[position]:
                    args[position] = None
            call = [kind, args]
        compact.append(call)
    return compact


def restore_calls(calls: list[list[Any]], regions: Sequence[Region], binding: Binding) -> list[list[Any]]:
    """The writer calls of ``calls`` (either layout) with the left-out fields put back
    from the model ``regions``; a gap the model cannot fill is a `FormatError`."""
    names = _region_names(calls, regions)
    restored: list[list[Any]] = []
    region = iter(regions)
    for call in calls:
        kind, args = call
        if kind == "String" and len(args) == 1:
            if args[0] not in names:
                raise FormatError(f"extensions['otf2'] String {args[0]} has no text and names no region")
            call = [kind, [args[0], names[args[0]]]]
        elif kind == "Region":
            model = next(region)
            args = list(args)
            for position, enum, field in _ENUMS:
                if args[position] is None:
                    args[position] = _enum(binding, enum, getattr(model, field))
            call = [kind, args]
        restored.append(call)
    return restored
