"""Short HTML summaries of an archive and of query results, for Jupyter (``_repr_html_``):
a title, a table of facts and at most `TOP_ROWS` rows of the result's largest entries.
Every text is escaped (names come from traces) and the markup is well-formed XML. The
results that draw a picture (`Timeline`, `Overview`) show it too, as an image
(`ccgformat.interop.pictures`): a notebook displays the HTML in place of their
``_repr_png_`` or ``_repr_svg_`` when it has both.
`html_summary` picks the summary by the object's type; it is registered as the
``repr_html`` query, which the objects' ``_repr_html_`` methods run."""

from __future__ import annotations

from functools import singledispatch
from html import escape
from typing import Any, Iterable, Sequence

import numpy as np

from ..aggregate_model import AggregateModel
from ..archive import Archive
from ..query import Messages, Overview, Profile, Timeline
from ..query.metric_integrals import MetricIntegrals
from .pictures import data_uri

__all__ = ["TOP_ROWS", "html_summary"]

#: the most rows a summary's table shows; a line says how many more there are
TOP_ROWS = 10


def _text(value: Any) -> str:
    """A cell's text: integers with thousands separators, other numbers to 6 digits (whole
    from a million on), None as "-", anything else as str, escaped."""
    if value is None:
        return "-"
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):,.0f}" if abs(value) >= 1e6 else f"{float(value):,.6g}"
    return escape(str(value))


def _facts(facts: Iterable[tuple[str, Any]]) -> str:
    rows = "".join(f"<tr><th>{escape(name)}</th><td>{_text(value)}</td></tr>" for name, value in facts)
    return f"<table>{rows}</table>"


def _rows(caption: str, header: Sequence[str], rows: Sequence[Sequence[Any]], total: int) -> str:
    """A table of ``rows`` (the first `TOP_ROWS` of ``total``) under ``caption``."""
    head = "".join(f"<th>{escape(name)}</th>" for name in header)
    body = "".join("<tr>" + "".join(f"<td>{_text(cell)}</td>" for cell in row) + "</tr>" for row in rows[:TOP_ROWS])
    more = f"<p>and {total - TOP_ROWS:,} more</p>" if total > TOP_ROWS else ""
    return f"<p>{escape(caption)}</p><table><tr>{head}</tr>{body}</table>{more}"


def _card(title: str, subtitle: str, *parts: str) -> str:
    return (f'<div class="ccgformat"><p><strong>{escape(title)}</strong> <code>{escape(subtitle)}</code></p>'
            + "".join(parts) + "</div>")


def _picture(result: Overview | Timeline) -> str:
    """The result's picture as an image (`pictures.data_uri`), or nothing."""
    uri = data_uri(result)
    return f'<img alt="{escape(type(result).__name__)} picture" src="{uri}"/>' if uri else ""


def _window(start: int | None, stop: int | None) -> str:
    return "whole trace" if start is None and stop is None else \
        f"{'first' if start is None else f'{start:,}'} .. {'last' if stop is None else f'{stop:,}'} ticks"


@singledispatch
def html_summary(result: Any) -> str:
    """The HTML summary of an `Archive` or a query result."""
    raise TypeError(f"no HTML summary for {type(result).__name__}")


@html_summary.register
def _archive(archive: Archive) -> str:
    stats = archive.stats
    start, end = archive.time_range
    resolution = archive.timer_resolution
    major, minor = archive.version
    provenance = archive.parameters.get("provenance", archive.definitions.provenance)
    return _card("ccgformat.Archive", archive.path, _facts([
        ("format version", f"{major}.{minor}"),
        ("locations", len(archive.locations)),
        ("events", stats.events),
        ("time range (ticks)", f"{start:,} .. {end:,}"),
        ("duration (s)", (end - start) / resolution if resolution else None),
        ("timer resolution (ticks/s)", resolution),
        ("file bytes", stats.file_bytes),
        ("bytes per event", stats.bytes_per_event if stats.events else None),
        ("nodes N -> n", f"{stats.N:,} -> {stats.n:,}"),
        ("compression R_nodes = N / n", stats.r_nodes),
        ("compression R_memory", stats.r_memory),
        ("source format", provenance.get("source_format")),
        ("converter", archive.parameters.get("converter")),
    ]))


@html_summary.register
def _profile(profile: Profile) -> str:
    regions = sorted(profile.regions, key=lambda row: (-row.exclusive, row.region))
    return _card("ccgformat.Profile", _window(profile.start, profile.stop), _facts([
        ("locations", len(profile.locations)),
        ("regions called", len(profile.regions)),
        ("calls", sum(row.calls for row in profile.regions)),
        ("messages sent", sum(pair.sent for pair in profile.messages)),
        ("collective operations", sum(c.count for c in profile.collectives)),
    ]), _rows("regions by exclusive time (ticks)", ("region", "group", "calls", "inclusive", "exclusive", "mean"),
              [(r.name, r.group, r.calls, r.inclusive, r.exclusive, r.mean) for r in regions], len(regions)))


@html_summary.register
def _messages(messages: Messages) -> str:
    sender, receiver, size = (messages.columns[name] for name in ("sender", "receiver", "size"))
    pairs, index, counts = np.unique(np.stack([sender, receiver], axis=1).reshape(-1, 2), axis=0,
                                     return_inverse=True, return_counts=True)
    volume = np.bincount(index.ravel(), weights=size, minlength=len(pairs)).astype(np.int64)
    order = np.lexsort((pairs[:, 1], pairs[:, 0], -counts))
    rows = [(int(pairs[i, 0]), int(pairs[i, 1]), int(counts[i]), int(volume[i])) for i in order[:TOP_ROWS]]
    return _card("ccgformat.Messages", f"{len(messages):,} matched", _facts([
        ("matched messages", len(messages)),
        ("bytes sent", int(size.sum())),
        ("unmatched events", len(messages.unmatched)),
        ("collective operations", len(messages.collectives)),
        ("most events waiting for a peer", messages.peak_pending),
    ]), _rows("location pairs by messages", ("sender", "receiver", "messages", "bytes"), rows, len(pairs)))


def _slices(bounds: np.ndarray, resolution: int) -> tuple[str, Any]:
    first, last = int(bounds[0]), int(bounds[-1])
    return (f"{len(bounds) - 1:,} slices of {first:,} .. {last:,} ticks", (last - first) / max(resolution, 1))


def _state_rows(names: Sequence[str], totals: np.ndarray) -> list[tuple[str, Any, Any]]:
    """(name, total, share of all) by total, largest first (ties by position)."""
    whole = totals.sum()
    order = np.lexsort((np.arange(len(totals)), -totals))
    return [(names[i], totals[i].item(), totals[i] / whole if whole else None) for i in order]


@html_summary.register
def _model(model: AggregateModel) -> str:
    window, seconds = _slices(model.bounds, model.resolution)
    rows = _state_rows(model.states, model.values.sum(axis=(0, 1)))
    return _card("ccgformat.AggregateModel", window, _facts([
        ("locations", len(model.locations)),
        ("slices", model.values.shape[1]),
        ("states", len(model.states)),
        ("window (s)", seconds),
        ("time in states (ticks)", int(model.values.sum())),
    ]), _rows("states by exclusive time (ticks)", ("state", "time", "share"), rows, len(rows)))


@html_summary.register
def _integrals(integrals: MetricIntegrals) -> str:
    window, _ = _slices(integrals.bounds, 1)
    rows = _state_rows(integrals.names, integrals.values.sum(axis=(0, 1)))
    return _card("ccgformat.MetricIntegrals", window, _facts([
        ("locations", len(integrals.locations)),
        ("slices", integrals.values.shape[1]),
        ("metrics", len(integrals.names)),
    ]), _rows("metrics by integral over all slices", ("metric", "integral", "share"), rows, len(rows)))


@html_summary.register
def _timeline(timeline: Timeline) -> str:
    rows = _state_rows(timeline.groups, timeline.exclusive.sum(axis=(0, 1)))
    return _card("ccgformat.Timeline", _window(timeline.start, timeline.stop), _facts([
        ("rows", f"{timeline.exclusive.shape[0]:,} by {timeline.by}"),
        ("columns", timeline.width),
        ("colour classes", len(timeline.groups)),
    ]), _picture(timeline), _rows("colour classes by exclusive time (ticks)", ("class", "time", "share"), rows,
                                  len(rows)))


@html_summary.register
def _overview(overview: Overview) -> str:
    part = overview.partition
    model = overview.model
    return _card("ccgformat.Overview", f"{overview.kind}, p = {overview.p:.4g}", _facts([
        ("locations x slices", f"{len(model.locations):,} x {model.values.shape[1]:,}"),
        ("states", len(model.states)),
        ("p (gain/loss ratio)", overview.p),
        ("parts", len(part)),
        ("gain" + (" (normalized)" if overview.normalize else ""), part.gain),
        ("loss" + (" (normalized)" if overview.normalize else ""), part.loss),
        ("pIC", part.pic),
    ]), _picture(overview))
