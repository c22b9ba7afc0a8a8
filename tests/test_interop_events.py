"""`Archive.to_arrow`, `to_arrow_batches`, `to_pandas` and `to_polars`: one row per event,
equal to the events of `Archive.events` read through a per-event oracle written from the
documented columns, for random traces with every kind and for the corpus traces."""

from __future__ import annotations

import math
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccgformat as ccg
from ccgformat.errors import CcgError, MissingExtraError
from ccgformat.model import Definitions, EventKind as K, Location, Metric, Region

from .corpus import corpus_path
from .query_support import CORPUS, converted, windows
from .traces import batches, traces

pa = pytest.importorskip("pyarrow")

#: the documented columns, in order (ccgformat/interop/events.py, README)
COLUMNS = ("location", "location_name", "time", "kind", "region", "peer", "tag", "communicator", "size", "metric",
           "value", "request", "recv_size", "ref", "data")
P2P = (K.SEND, K.RECV, K.ISEND, K.IRECV)


def definitions() -> Definitions:
    """What `traces.traces` refers to (regions 0-3, locations and metrics 0-2), with a
    metric of each value type."""
    return Definitions(regions=[Region(f"r{i}") for i in range(4)],
                       locations=[Location(f"rank {i}") for i in range(3)],
                       metrics=[Metric("ints"), Metric("counter", value_type="uint64"),
                                Metric("seconds", value_type="double")],
                       timer_resolution=1_000_003, provenance={"source_format": "test"})


def sample(metric: Metric, raw: int) -> float:
    """A METRIC event's value column read as its metric's type."""
    bits = struct.pack("<q", raw)
    code = {"int64": "<q", "uint64": "<Q", "double": "<d"}[metric.value_type]
    return float(struct.unpack(code, bits)[0])


def expected_row(definitions: Definitions, location: int, e) -> dict:
    """One event as the table documents it: null where its kind has no such property."""
    kind = K(e.kind)
    names = [loc.name for loc in definitions.locations]
    row = dict.fromkeys(COLUMNS)
    row.update(location=location, location_name=names[location] if location < len(names) else None, time=e.time,
               kind=kind.name)
    if kind in (K.ENTER, K.LEAVE):
        row["region"] = definitions.regions[e.ref].name
    elif kind in P2P:
        row.update(peer=e.ref, tag=e.tag, communicator=e.comm, size=e.size)
        if kind in (K.ISEND, K.IRECV):
            row["request"] = e.request
    elif kind in (K.IRECV_REQUEST, K.REQUEST_COMPLETE):
        row["request"] = e.request
    elif kind == K.COLL_END:
        row.update(ref=e.ref, communicator=e.comm, tag=e.tag, size=e.size, recv_size=e.recv_size)
    elif kind == K.METRIC:
        metric = definitions.metrics[e.ref]
        row.update(metric=metric.name, value=sample(metric, e.value))
    elif kind in (K.MARKER, K.GENERIC):
        row.update(ref=e.ref, data=e.value)
    return row


def expected_rows(archive, start=None, stop=None, locations=None) -> list[dict]:
    return [expected_row(archive.definitions, int(location), e)
            for where, batch in archive.events(start, stop, locations=locations)
            for location, e in zip(where.tolist(), batch.rows())]


def comparable(rows: list[dict]) -> list[dict]:
    """Rows with a NaN sample as "nan" (NaN != NaN) and missing values as None (pandas: NA,
    or NaN in a categorical)."""
    def one(key, value):
        if value is None or value is getattr(sys.modules.get("pandas"), "NA", None):
            return None
        if isinstance(value, float) and math.isnan(value):
            return "nan" if key == "value" else None
        return value.item() if isinstance(value, np.generic) else value
    return [{key: one(key, value) for key, value in row.items()} for row in rows]


def write(folder, trace) -> ccg.Archive:
    path = folder / "t.ccg"
    ccg.write_trace(path, definitions(), ((loc, batches(events)) for loc, events in trace.items()))
    return ccg.open(path)


@given(traces(), st.data())
@settings(max_examples=25)
def test_random_traces(tmp_path_factory, trace, data):
    with write(tmp_path_factory.mktemp("arrow"), trace) as archive:
        table = archive.to_arrow()
        assert table.column_names == list(COLUMNS)
        assert comparable(table.to_pylist()) == comparable(expected_rows(archive))
        for start, stop, locations in windows(data, trace, 2):
            chosen = sorted(locations)
            table = archive.to_arrow(start, stop, chosen)
            assert comparable(table.to_pylist()) == comparable(expected_rows(archive, start, stop, chosen))
            size = data.draw(st.integers(1, 7))
            parts = list(archive.to_arrow_batches(start, stop, chosen, batch_size=size))
            assert all(0 < part.num_rows <= size for part in parts)
            joined = pa.Table.from_batches(parts, table.schema)
            assert comparable(joined.to_pylist()) == comparable(table.to_pylist())  # NaN samples: not equals()


def test_schema_metadata_and_types(tmp_path):
    trace = {0: [ccg.Event(5, K.ENTER, 1), ccg.Event(7, K.METRIC, 2, value=struct.unpack("<q", struct.pack("<d", 1.5))[0]),
                 ccg.Event(9, K.LEAVE, 1)]}
    with write(tmp_path, trace) as archive:
        table = archive.to_arrow()
        metadata = {key.decode(): value.decode() for key, value in table.schema.metadata.items()}
        assert int(metadata["ccgformat.timer_resolution"]) == 1_000_003
        assert '"source_format": "test"' in metadata["ccgformat.provenance"]
        assert metadata["ccgformat.format_version"] == "%d.%d" % archive.version
        assert pa.types.is_dictionary(table.schema.field("kind").type)
        assert table.column("kind").to_pylist() == ["ENTER", "METRIC", "LEAVE"]
        assert table.column("value").to_pylist() == [None, 1.5, None]
        assert table.column("region").to_pylist() == ["r1", None, "r1"]
        assert table.column("time").type == pa.int64()


def test_pandas_and_polars_hold_the_same_rows(tmp_path):
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    trace = {0: [ccg.Event(5, K.ENTER, 1), ccg.Event(6, K.SEND, 1, 2, 3, 0, 64), ccg.Event(9, K.LEAVE, 1)],
             1: [ccg.Event(4, K.ENTER, 0), ccg.Event(8, K.RECV, 0, 2, 3, 0, 64), ccg.Event(7 + 3, K.LEAVE, 0),
                 ccg.Event(11, K.METRIC, 1, value=-1)]}
    with write(tmp_path, trace) as archive:
        expected = comparable(expected_rows(archive))
        frame = archive.to_pandas()
        assert isinstance(frame, pd.DataFrame) and list(frame.columns) == list(COLUMNS)
        assert isinstance(frame["kind"].dtype, pd.CategoricalDtype)
        assert str(frame["peer"].dtype) == "Int64"
        assert frame.attrs["ccgformat.timer_resolution"] == "1000003"
        assert comparable(frame.to_dict("records")) == expected
        polars = archive.to_polars()
        assert isinstance(polars, pl.DataFrame) and polars.columns == list(COLUMNS)
        assert comparable(polars.to_dicts()) == expected
        assert frame[frame["kind"] == "METRIC"]["value"].tolist() == [float(2**64 - 1)]  # uint64 metric 1


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_traces(tmp_path_factory, name):
    corpus_path(*CORPUS[name])
    archive = converted(tmp_path_factory, name)
    table = archive.to_arrow()
    assert table.num_rows == archive.stats.events
    assert comparable(table.to_pylist()) == comparable(expected_rows(archive))
    locations = archive.locations[:2]
    first, last = archive.time_range
    middle = (first + last) // 2
    assert comparable(archive.to_arrow(middle, last, locations).to_pylist()) == \
        comparable(expected_rows(archive, middle, last, locations))


@pytest.mark.parametrize("package, method, extra", [("pyarrow", "to_arrow", "arrow"),
                                                    ("pyarrow", "to_arrow_batches", "arrow"),
                                                    ("pandas", "to_pandas", "pandas"),
                                                    ("polars", "to_polars", "polars")])
def test_a_missing_package_names_its_extra(tmp_path, monkeypatch, package, method, extra):
    with write(tmp_path, {0: [ccg.Event(1, K.ENTER, 0), ccg.Event(2, K.LEAVE, 0)]}) as archive:
        monkeypatch.setitem(sys.modules, package, None)  # import fails as if not installed
        with pytest.raises(MissingExtraError) as caught:
            getattr(archive, method)()
    assert isinstance(caught.value, CcgError) and isinstance(caught.value, ImportError)
    assert f"ccgformat[{extra}]" in str(caught.value) and package in str(caught.value)


def test_batches_are_streamed_one_at_a_time(tmp_path):
    """What Arrow holds while the batches are read (and let go of) stays one batch's worth,
    whatever the trace's length: the same shape at two lengths."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import synth

    held = []
    for events in (4_000, 16_000):
        path = tmp_path / f"{events}.ccg"
        definitions, streams = synth.synthesize(2, events, jitter=0.2, seed=1)
        ccg.write_trace(path, definitions, ((loc, streams(loc)) for loc in range(2)))
        with ccg.open(path) as archive:
            before = pa.total_allocated_bytes()
            most = rows = 0
            for batch in archive.to_arrow_batches(batch_size=500):
                rows += batch.num_rows
                most = max(most, pa.total_allocated_bytes() - before)
                del batch
            assert rows == archive.stats.events
        held.append(most)
    assert 0 < held[1] <= 1.25 * held[0]
