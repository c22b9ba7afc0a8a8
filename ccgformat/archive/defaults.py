"""Default values that DEFINITIONS and PARAMETERS members of a BUNDLE block leave out
(spec 4.1, 4.2, format 1.4): the writer strips them, the reader fills them back."""

from __future__ import annotations

from typing import Any, Callable

#: DEFINITIONS members and their defaults
DEFINITIONS: dict[str, Any] = {"regions": [], "system_tree": [], "locations": [], "communicators": [],
                               "metrics": [], "strings": [], "timer_resolution": 1_000_000_000,
                               "clock_offset": 0, "provenance": {}}
#: per DEFINITIONS list, the defaults of its records' fields
RECORDS: dict[str, dict[str, Any]] = {
    "regions": {"role": "function", "paradigm": "user", "group": ""},
    "system_tree": {"parent": None},
    "locations": {"kind": "process", "parent": None},
    "communicators": {"members": []},
    "metrics": {"unit": "", "mode": "accumulated", "value_type": "int64"},
}
#: PARAMETERS members and their defaults; `provenance` defaults to the definitions'
#: (not `leaf_window` nor `representatives`: a file without them, in a 1.4 bundle too, was built
#: before the rules, as with 0)
PARAMETERS: dict[str, Any] = {"abs_dev": 0, "rel_dev": 0.0, "rel_size": 0.0, "rel_metric": 0.0, "branching": 20,
                              "search_length": 1000, "zstd_level": 19, "checkpoint_interval": 65536,
                              "nodes_per_block": 4096}


def _same(value: Any, default: Any) -> bool:
    """Equal and of the same JSON type (``0`` is not ``false``, ``[]`` is not ``{}``)."""
    return type(value) is type(default) and value == default or \
        isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(default, float) \
        and value == default


def _strip(document: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key not in defaults or not _same(value, defaults[key])}


def _fill(document: Any, defaults: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise TypeError(f"expected an object, got {type(document).__name__}")
    return {**defaults, **document}


def _records(document: dict[str, Any], change: Callable[[Any, dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    out = dict(document)
    for name, defaults in RECORDS.items():
        rows = out.get(name)
        if not isinstance(rows, list):
            continue
        out[name] = [change(row, defaults) for row in rows]
    return out


def strip_definitions(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` without the members and record fields that hold their default."""
    return _strip(_records(document, _strip), DEFINITIONS)


def fill_definitions(document: Any) -> dict[str, Any]:
    """The inverse of `strip_definitions`; TypeError when a record is not an object."""
    return _records(_fill(document, DEFINITIONS), _fill)


def strip_parameters(document: dict[str, Any], provenance: Any) -> dict[str, Any]:
    """``document`` without the members that hold their default."""
    return _strip(document, {**PARAMETERS, "provenance": provenance})


def fill_parameters(document: Any, provenance: Any) -> dict[str, Any]:
    """The inverse of `strip_parameters` (``provenance``: the definitions')."""
    return _fill(document, {**PARAMETERS, "provenance": provenance})
