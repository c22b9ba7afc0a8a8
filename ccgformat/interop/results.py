"""Query results as pandas data frames: `Profile.to_pandas` and `Messages.to_pandas`
(registered in `ccgformat.interop`, as the archive's table methods are). One row per
region, group, location pair, collective operation or metric of a profile; one row per
matched message, unmatched event or collective participant of the messages. Integer
columns are nullable ``Int64`` where a value can be missing (a region's ``min`` without a
call)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..query.messages_query import MESSAGE_COLUMNS, Messages
from ..query.profile_result import Profile
from ..extras import require

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["messages_frame", "profile_frame", "PROFILE_TABLES", "MESSAGE_TABLES"]

#: the tables of a profile and their columns (those of ``ccg profile --json``)
PROFILE_TABLES: dict[str, tuple[str, ...]] = {
    "regions": ("region", "id", "group", "calls", "inclusive", "exclusive", "min", "max", "mean"),
    "groups": ("group", "calls", "inclusive", "exclusive"),
    "messages": ("sender", "receiver", "sent", "sent_bytes", "received", "received_bytes"),
    "collectives": ("operation", "count", "bytes_sent", "bytes_received"),
    "metrics": ("metric", "change"),
}
#: the tables of a message matching and their columns
MESSAGE_TABLES: dict[str, tuple[str, ...]] = {
    "messages": MESSAGE_COLUMNS,
    "unmatched": ("location", "time", "kind", "peer", "comm", "tag", "size"),
    "collectives": ("comm", "index", "operation", "complete", "location", "begin", "end", "bytes_sent",
                    "bytes_received"),
}


def _frame(rows: list[dict[str, Any]] | list[tuple[Any, ...]], columns: tuple[str, ...], what: str) -> pd.DataFrame:
    """A DataFrame of ``rows`` (dicts or tuples in ``columns`` order), a column of
    integers and None as ``Int64``."""
    pd = require("pandas", what)
    cells = [[row[name] for name in columns] if isinstance(row, dict) else list(row) for row in rows]
    data = {}
    for name, values in zip(columns, map(list, zip(*cells)) if cells else ([] for _ in columns)):
        integers = values and all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in values)
        data[name] = pd.array(values, dtype="Int64") if integers else values
    return pd.DataFrame(data, columns=list(columns))


def _table(name: str, tables: dict[str, tuple[str, ...]], what: str) -> tuple[str, ...]:
    if name not in tables:
        raise ValueError(f"{what}: no table {name!r}; choose one of {', '.join(tables)}")
    return tables[name]


def profile_frame(profile: Profile, table: str = "regions") -> pd.DataFrame:
    """One of a profile's tables (`PROFILE_TABLES`) as a pandas DataFrame."""
    columns = _table(table, PROFILE_TABLES, "Profile.to_pandas")
    document = profile.to_json()
    rows = list(document[table].items()) if table == "metrics" else document[table]
    return _frame(rows, columns, "Profile.to_pandas")


def messages_frame(messages: Messages, table: str = "messages") -> pd.DataFrame:
    """One of a message matching's tables (`MESSAGE_TABLES`) as a pandas DataFrame: the
    messages' columns as they are (-1 where a time does not apply), the unmatched events,
    or the collectives with a row per participant."""
    columns = _table(table, MESSAGE_TABLES, "Messages.to_pandas")
    if table == "messages":
        pd = require("pandas", "Messages.to_pandas")
        return pd.DataFrame({name: messages.columns[name] for name in columns}, columns=list(columns))
    if table == "unmatched":
        rows = [tuple(getattr(u, name) for name in columns) for u in messages.unmatched]
    else:
        rows = [(c.comm, c.index, c.operation, c.complete, *participant)
                for c in messages.collectives for participant in c.participants]
    return _frame(rows, columns, "Messages.to_pandas")
