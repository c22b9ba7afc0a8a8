"""The node block codec: a run of consecutive node ids as columnar integer streams.

Every stream holds unsigned integers at the narrowest width that fits them (1, 2, 4 or 8
bytes, cf. dissertation 4.1.3), stored byte-plane-wise (all lowest bytes first), which
lets zstd see the slowly varying high bytes apart from the noisy low ones. Signed values
are zigzag-encoded.

Only what cannot be derived is stored (spec/format.md, "Node blocks"):

* Child references. Nodes are numbered bottom-up (4.6), and a node that was just made is
  first referenced by the next parent made: the writer and the reader keep the same
  *pending stack* of nodes not referenced yet, and a child that is on top of it is
  stored as one "fresh" flag and popped; any other child is stored by its id.
* Gaps. A call node's 2n+1 durations alternate gaps and child durations; the child
  durations equal the children's own totals, so only the n+1 gaps are stored, grouped
  by node shape (kind, key, child count) and position, so that values of one kind of
  gap stand together.
* Totals, event counts and metric sums of sub-trees are recomputed while decoding, from
  the block's own nodes and an *import table* that carries them for the children the
  block references in earlier blocks. A block therefore decodes on its own.
* Predicted references (PREDICTED_NODES blocks, format 1.4): the children that are not
  fresh are stored not by id but by what the decoder can predict - their place in a
  move-to-front list of the children met at the same position of the same parent shape,
  else their import table row, else their distance below the parent (`reference_codes`).
* Coded gaps (CODED_NODES blocks, format 1.6): a predicted block whose gaps stream is
  range-coded row by row of the shape matrices (`gapcoder`, spec 5.8).
* Coded soft values (CODED_SOFT_NODES blocks, format 1.7): a coded block whose soft stream
  is range-coded too, row by row of the soft contexts (`soft_rows`, spec 5.9): a counter's
  increments, a message size, each in a row of its own.

Decoding is vectorised: the pending stack is replayed as a matching of pushes and pops
by stack depth, and the bottom-up sums are iterated to their fixpoint, one numpy pass per
level of nesting inside the block. `children_by_replay` is the plain sequential reference
of the stack replay (and the path taken when the stack grows past its limit).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import CorruptArchiveError
from ..graph.pool import NodeKind, NodePool
from ..model import KIND_FIELDS, EventKind
from .gapcoder import code_gaps, decode_gaps

STREAM_HEADER = struct.Struct("<BI")  # width u8, value count u32
CODED_LENGTH = struct.Struct("<I")    # after a coded stream's header: its byte count u32
#: The width byte of a coded stream (spec 5.8, 5.9: `gaps` since 1.6, `soft` since 1.7).
CODED = 0
#: The streams a node block may store coded (spec 5.8, 5.9).
CODABLE = ("gaps", "soft")
BLOCK_START = struct.Struct("<QI")    # first node id u64, node count u32
WIDTHS = (1, 2, 4, 8)
#: The pending stack keeps at most this many nodes; older ones fall off its bottom.
PENDING_LIMIT = 4096
#: A reader's bound on the memory of a block's metric sums: at most this many (distinct
#: metric) x (node + child reference) cells; a block beyond it is refused as corrupt.
METRIC_CELL_LIMIT = 1 << 24
STREAMS = ("pending", "kind", "child_count", "child_fresh", "child_id", "gaps", "key", "soft",
           "import_id", "import_total", "import_events", "import_metric_count", "import_metric_id",
           "import_metric_sum")
SIGNED = frozenset({"key", "soft", "import_metric_sum"})
#: Predicted references: each move-to-front list keeps at most this many children.
REFERENCE_LIST_LIMIT = 64

_HARD_COUNT = np.zeros(256, dtype=np.int64)
_SOFT_COUNT = np.zeros(256, dtype=np.int64)
_HARD_COUNT[NodeKind.CALL] = 1
for _kind, _fields in KIND_FIELDS.items():
    if _kind not in (EventKind.ENTER, EventKind.LEAVE):
        _HARD_COUNT[_kind] = len(_fields.hard)
        _SOFT_COUNT[_kind] = len(_fields.soft)
_KNOWN_KIND = np.zeros(256, dtype=bool)
_KNOWN_KIND[: len(EventKind)] = True


def zigzag(values: np.ndarray) -> np.ndarray:
    v = values.astype(np.int64)
    return ((v << 1) ^ (v >> 63)).view(np.uint64)


def unzigzag(values: np.ndarray) -> np.ndarray:
    v = values.astype(np.uint64)
    return ((v >> np.uint64(1)).view(np.int64)) ^ -((v & np.uint64(1)).view(np.int64))


def encode_stream(values: np.ndarray) -> bytes:
    """Width byte, count, then the values' little-endian bytes plane by plane."""
    v = np.ascontiguousarray(values, dtype=np.uint64)
    top = int(v.max()) if len(v) else 0
    width = next(w for w in WIDTHS if w == 8 or top < 1 << (8 * w))
    planes = v.astype(f"<u{width}").view(np.uint8).reshape(len(v), width).T
    return STREAM_HEADER.pack(width, len(v)) + planes.tobytes()


def stream_bytes(raw: bytes, name: str) -> bytes:
    """The stored bytes (header included) of the stream ``name`` of a node block payload."""
    start, end = _stream_span(raw, name)
    return raw[start:end]


def _stream_span(raw: bytes, name: str) -> tuple[int, int]:
    position = BLOCK_START.size
    for current in STREAMS:
        width, count = STREAM_HEADER.unpack_from(raw, position)
        end = position + STREAM_HEADER.size + width * count
        if width == CODED:
            end += CODED_LENGTH.size + CODED_LENGTH.unpack_from(raw, end)[0]
        if current == name:
            return position, end
        position = end
    raise KeyError(name)


@dataclass(frozen=True)
class CodedStream:
    """A coded stream as read (5.8, 5.9): its value count and its range-coded bytes."""

    count: int
    data: bytes

    def __len__(self) -> int:
        return self.count


def _read_coded(raw: bytes, position: int) -> tuple[CodedStream, int]:
    """The coded stream at ``position`` (width byte CODED) and the position after it."""
    if position + STREAM_HEADER.size + CODED_LENGTH.size > len(raw):
        raise ValueError("the block ends inside a stream header")
    count = STREAM_HEADER.unpack_from(raw, position)[1]
    position += STREAM_HEADER.size
    (length,) = CODED_LENGTH.unpack_from(raw, position)
    position += CODED_LENGTH.size
    if position + length > len(raw):
        raise ValueError(f"a coded stream of {length} bytes runs past the block end")
    return CodedStream(count, raw[position:position + length]), position + length


def with_coded(raw: bytes, name: str, coded: bytes) -> bytes:
    """A node block payload with its plain stream ``name`` replaced by ``coded`` (spec 5.8,
    5.9)."""
    start, end = _stream_span(raw, name)
    count = STREAM_HEADER.unpack_from(raw, start)[1]
    return raw[:start] + STREAM_HEADER.pack(CODED, count) + CODED_LENGTH.pack(len(coded)) + coded + raw[end:]


def moved_block(raw: bytes, shift: int, *, child_ids: bool) -> bytes:
    """A node block payload whose node ids all move up by ``shift`` (a merge, spec 5.3): its
    first id, its pending stack and its import ids, and with ``child_ids`` (a NODES block,
    whose `child_id` stream holds ids rather than reference codes, 5.7) its child ids;
    the delta-coded lists (5.2) move their first entry only. Every other stream is kept
    byte for byte."""
    first, count = BLOCK_START.unpack_from(raw, 0)
    parts, position = [BLOCK_START.pack(first + shift, count)], BLOCK_START.size
    for name in STREAMS:
        width, values = STREAM_HEADER.unpack_from(raw, position)
        end = position + STREAM_HEADER.size + width * values
        if width == CODED:
            end += CODED_LENGTH.size + CODED_LENGTH.unpack_from(raw, end)[0]
        if values and width != CODED and (name in ("pending", "import_id") or (child_ids and name == "child_id")):
            ids = decode_stream(raw, position)[0]
            ids[slice(None) if name == "child_id" else 0] += np.uint64(shift)
            parts.append(encode_stream(ids))
        else:
            parts.append(raw[position:end])
        position = end
    return b"".join(parts)


def decode_stream(raw: bytes, position: int) -> tuple[np.ndarray, int]:
    """One stream at ``position``: its values as uint64 and the position after it."""
    if position + STREAM_HEADER.size > len(raw):
        raise ValueError("the block ends inside a stream header")
    width, count = STREAM_HEADER.unpack_from(raw, position)
    position += STREAM_HEADER.size
    if width not in WIDTHS:
        raise ValueError(f"stream width {width} is not 1, 2, 4 or 8")
    end = position + width * count
    if end > len(raw):
        raise ValueError(f"a stream of {count} values x {width} bytes runs past the block end")
    planes = np.frombuffer(raw, dtype=np.uint8, count=width * count, offset=position).reshape(width, count)
    values = np.ascontiguousarray(planes.T).view(f"<u{width}").reshape(count).astype(np.uint64)
    return values, end


def _deltas(increasing: list[int]) -> list[int]:
    """The first id, then the differences to the previous one (all >= 1)."""
    return [b - a for a, b in zip([0] + increasing[:-1], increasing)]


def _undeltas(values: np.ndarray, what: str) -> list[int]:
    _check(len(values) == 0 or (int(values.max()) < 1 << 62 and int(values[1:].min(initial=1)) >= 1),
           f"{what} ids are not increasing")
    ids = np.cumsum(values.astype(np.int64))  # steps below 2**62: a wrap shows as a negative id
    _check(len(ids) == 0 or int(ids.min()) >= 0, f"{what} ids overflow")
    return ids.tolist()


class NodeEncoder:
    """Encodes consecutive node ranges of a pool, carrying the pending stack across blocks."""

    def __init__(self) -> None:
        self.pending: list[int] = []  # nodes made but not yet referenced, newest last

    def encode(self, pool: NodePool, first: int, stop: int) -> bytes:
        """The raw payload of a NODES block holding ids ``first <= id < stop``."""
        return self.encode_both(pool, first, stop)[0]

    def encode_all(self, pool: NodePool, first: int, stop: int) -> tuple[bytes, bytes, bytes, bytes | None]:
        """`encode_both`, and the payload as a CODED_NODES block (spec 5.8): the
        PREDICTED_NODES one with its gaps range-coded by the rows of its shapes; and as a
        CODED_SOFT_NODES block (5.9): that one with its soft values range-coded by the
        rows of their contexts too (None when there are none, or one of 2**62 or more)."""
        ids, predicted = self.encode_both(pool, first, stop)
        first_id, count, s = _read_streams(predicted, ())
        kind = _node_kinds(s, first_id, count)
        key_start, key, soft_start, _ = _properties(s, kind)
        child_count = _edge_counts(s, kind <= NodeKind.ARTIFICIAL)[0]
        coded = with_coded(predicted, "gaps",
                           code_gaps(s["gaps"], _shape_rows(kind, key_start, key, child_count).tolist()))
        if not len(s["soft"]) or int(s["soft"].max()) >= 1 << 62:
            return ids, predicted, coded, None
        order, rows = soft_rows(kind, key_start, key, soft_start)
        return ids, predicted, coded, with_coded(coded, "soft", code_gaps(s["soft"][order], rows))

    def encode_both(self, pool: NodePool, first: int, stop: int) -> tuple[bytes, bytes]:
        """The raw payloads of the same node range as a NODES block (child ids) and as a
        PREDICTED_NODES block (reference codes); the pending stack moves on once."""
        columns: dict[str, list[int]] = {name: [] for name in STREAMS}
        columns["pending"] = _deltas(self.pending)
        columns["kind"] = pool.kind[first:stop]
        imported: set[int] = set()
        stack = self.pending
        shapes: dict[tuple, list[tuple[int, ...]]] = {}  # node shape -> gap rows, first seen first
        references: list[tuple[int, tuple[int, int, int, int], int]] = []  # (parent, context, child)
        for node in range(first, stop):
            if pool.kind[node] <= NodeKind.ARTIFICIAL:
                children = pool.children[node]
                fresh = [False] * len(children)
                for j in range(len(children) - 1, -1, -1):
                    if stack and stack[-1] == children[j]:
                        stack.pop()
                        fresh[j] = True
                columns["child_count"].append(len(children))
                columns["child_fresh"].extend(fresh)
                columns["child_id"].extend(c for c, is_fresh in zip(children, fresh) if not is_fresh)
                region = pool.key[node][0] if pool.kind[node] == NodeKind.CALL else -1
                references.extend((node, (pool.kind[node], region, len(children), j), c)
                                  for j, (c, is_fresh) in enumerate(zip(children, fresh)) if not is_fresh)
                shape = (pool.kind[node], pool.key[node], len(children))
                shapes.setdefault(shape, []).append(pool.durations[node][0::2])
                imported.update(c for c in children if c < first)
            columns["key"].extend(pool.key[node])
            columns["soft"].extend(pool.soft[node])
            stack.append(node)
            if len(stack) > PENDING_LIMIT:
                del stack[0]
        for rows in shapes.values():
            columns["gaps"].extend(gap for position in zip(*rows) for gap in position)
        columns["import_id"] = _deltas(sorted(imported))
        for node in sorted(imported):
            columns["import_total"].append(pool.total[node])
            columns["import_events"].append(pool.events[node])
            columns["import_metric_count"].append(len(pool.metric_sums[node]))
            for metric, total in pool.metric_sums[node]:
                columns["import_metric_id"].append(metric)
                columns["import_metric_sum"].append(total)
        streams = [BLOCK_START.pack(first, stop - first)]
        for name in STREAMS:
            values = np.array(columns[name], dtype=np.int64 if name in SIGNED else np.uint64)
            streams.append(encode_stream(zigzag(values) if name in SIGNED else values))
        ids = b"".join(streams)
        streams[1 + STREAMS.index("child_id")] = encode_stream(
            np.array(reference_codes(references, first, sorted(imported)), dtype=np.uint64))
        return ids, b"".join(streams)


def reference_codes(references: list[tuple[int, tuple[int, int, int, int], int]], first: int,
                    imports: list[int]) -> list[int]:
    """The `child_id` values of a PREDICTED_NODES block (spec 5.7): for each child that is
    not fresh, as (parent id, context, child id) in stream order, its index in the
    context's move-to-front list if there, else the list's length plus its import row,
    else plus the import count plus ``parent - 1 - child``."""
    row = {node: k for k, node in enumerate(imports)}
    lists: dict[tuple[int, int, int, int], list[int]] = {}
    codes = []
    for parent, context, child in references:
        recent = lists.setdefault(context, [])
        if child in recent:
            codes.append(recent.index(child))
            recent.remove(child)
        else:
            codes.append(len(recent) + (row[child] if child < first else len(imports) + parent - 1 - child))
            if len(recent) == REFERENCE_LIST_LIMIT:
                recent.pop()
        recent.insert(0, child)
    return codes


def predicted_children(codes: np.ndarray, first: int, parent: np.ndarray, context: np.ndarray,
                       imports: np.ndarray) -> np.ndarray:
    """The child ids of `reference_codes` back, for references of the parents ``first +
    parent`` and the contexts (rows of 4 integers) given; ValueError on a code that
    points nowhere."""
    lists: dict[tuple[int, ...], list[int]] = {}
    children = np.empty(len(codes), dtype=np.int64)
    count = len(imports)
    for k, (code, p, key) in enumerate(zip(codes.tolist(), (parent + first).tolist(), map(tuple, context.tolist()))):
        recent = lists.setdefault(key, [])
        if code < len(recent):
            child = recent.pop(code)
        else:
            code -= len(recent)
            if code < count:
                child = int(imports[code])
            else:
                _check(code - count < p - first, "a child reference code points outside the block")
                child = p - 1 - (code - count)
            if len(recent) == REFERENCE_LIST_LIMIT:
                recent.pop()
        recent.insert(0, child)
        children[k] = child
    return children


@dataclass
class NodeBlock:
    """A decoded node block: per-node offsets into flat columns."""

    first: int
    kind: np.ndarray            # uint8 per node
    child_start: np.ndarray     # per node, offset into ``children`` (count + 1 entries)
    children: np.ndarray        # absolute child ids
    child_events: list[int]     # per child reference: events in the child's sub-tree
    duration_start: np.ndarray  # per node, offset into ``durations``
    durations: np.ndarray       # the 2n+1 durations of every call and artificial node
    events: list[int]
    total: list[int]
    key_start: np.ndarray
    key: np.ndarray             # int64
    soft_start: np.ndarray
    soft: np.ndarray            # int64
    metrics: list[int]          # metric ids sampled in the block's sub-trees
    metric_sum: np.ndarray      # (metrics, nodes) sums of differences
    metric_seen: np.ndarray     # (metrics, nodes) True where the sub-tree has a sample
    imports: ImportTable
    memo: dict[str, dict[int, Any]] = field(default_factory=dict)  # values read so far, per column

    def __len__(self) -> int:
        return len(self.kind)

    def metric_sums(self, i: int) -> tuple[tuple[int, int], ...]:
        """(metric, sum) pairs of node ``first + i``, sorted by metric."""
        return tuple((metric, int(self.metric_sum[k, i])) for k, metric in enumerate(self.metrics)
                     if self.metric_seen[k, i])

    def child_metric_sums(self, i: int) -> tuple[tuple[tuple[int, int], ...], ...]:
        """The metric sums of each child of node ``first + i``."""
        children = self.children[self.child_start[i]:self.child_start[i + 1]].tolist()
        return tuple(self.metric_sums(c - self.first) if c >= self.first else self.imports.sums(c)
                     for c in children)


def decode_nodes(raw: bytes, path: str, offset: int, *, predicted: bool = False, coded: bool = False,
                 coded_soft: bool = False) -> NodeBlock:
    """Decode and check a node block payload (every count and reference is validated);
    ``predicted``: a PREDICTED_NODES payload (reference codes instead of child ids);
    ``coded``: a CODED_NODES payload (a PREDICTED_NODES payload with coded gaps, 5.8);
    ``coded_soft``: a CODED_SOFT_NODES payload (soft values coded too, 5.9)."""
    try:
        return _decode(raw, predicted or coded or coded_soft,
                       CODABLE if coded_soft else ("gaps",) if coded else ())
    except (ValueError, IndexError, KeyError, OverflowError) as error:
        raise CorruptArchiveError(f"node block: {error}", path=path, offset=offset) from None


def _check(condition: bool, reason: str) -> None:
    if not condition:
        raise ValueError(reason)


def _segment_sums(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Sums of ``values[starts[i]:starts[i+1]]`` (modulo 2**64, as int64), along the last axis."""
    running = np.cumsum(values.astype(np.uint64), axis=-1, dtype=np.uint64)
    running = np.concatenate((np.zeros(values.shape[:-1] + (1,), np.uint64), running), axis=-1)
    return (running[..., starts[1:]] - running[..., starts[:-1]]).view(np.int64)


def _decode(raw: bytes, predicted: bool = False, coded: tuple[str, ...] = ()) -> NodeBlock:
    """`decode_nodes` without the wrapping of its errors: every check raises ValueError."""
    first, count, s = _read_streams(raw, coded)
    kind = _node_kinds(s, first, count)
    inner = kind <= NodeKind.ARTIFICIAL
    child_count, child_start, fresh, gap_count = _edge_counts(s, inner)
    key_start, key, soft_start, soft = _properties(s, kind)
    if isinstance(s["gaps"], CodedStream):
        s["gaps"] = decode_gaps(s["gaps"].data, _shape_rows(kind, key_start, key, child_count).tolist(),
                                s["gaps"].count)
    if predicted:
        s["child_id"] = _predicted_ids(s["child_id"], first, kind, key, key_start, child_count, fresh,
                                       np.array(_undeltas(s["import_id"], "import"), dtype=np.int64))
    children, parent = _children(s, first, child_count, fresh)

    imports = ImportTable(s, first)
    imported = imports.locate(children[children < first])
    gap_start = np.concatenate(([0], np.cumsum(gap_count)))
    gaps = _gaps_in_node_order(s["gaps"].astype(np.int64), kind, key_start, key, child_count, gap_start)
    own_total = _segment_sums(gaps, gap_start)
    own_events = np.where(kind == NodeKind.CALL, 2, np.where(inner, 0, 1)).astype(np.int64)
    metrics, own_sum, own_seen = _own_metric_sums(kind, key, key_start, soft, soft_start, imports, len(children))
    own = np.vstack((own_total, own_events, own_sum, own_seen))
    values, edge_values = _sub_tree_sums(own, children, first, child_start, imports.values(imported, metrics))
    total, events = values[0], values[1]
    _check(bool((total >= 0).all()) and bool((events >= 0).all()), "sub-tree duration or event count overflows")
    _check_no_wrap(gaps, gap_start, edge_values[0], child_start)
    _check_no_wrap(own_events, np.arange(count + 1), edge_values[1], child_start)

    duration_start, durations = _durations(inner, child_count, child_start, parent, gaps, gap_start, edge_values[0])
    m = len(metrics)
    return NodeBlock(first, kind, child_start, children, edge_values[1].tolist(), duration_start, durations,
                     events.tolist(), total.tolist(), key_start, key, soft_start, soft, metrics,
                     values[2:2 + m], values[2 + m:2 + 2 * m] > 0, imports)


def _read_streams(raw: bytes, coded: tuple[str, ...]) -> tuple[int, int, dict[str, Any]]:
    """The block start (first node id, node count) and the streams by name; the streams
    named in ``coded`` are coded (the gaps of a CODED_NODES block, 5.8, and the soft values
    too in a CODED_SOFT_NODES block, 5.9), and only they."""
    _check(len(raw) >= BLOCK_START.size, "shorter than its header")
    first, count = BLOCK_START.unpack_from(raw, 0)
    position = BLOCK_START.size
    s = {}
    for name in STREAMS:
        if name in coded:
            _check(position < len(raw) and raw[position] == CODED,
                   f"the {name} of a coded block are not coded (width {raw[position] if position < len(raw) else '-'})")
            s[name], position = _read_coded(raw, position)
        else:
            s[name], position = decode_stream(raw, position)
    _check(position == len(raw), f"{len(raw) - position} bytes after the last stream")
    return first, count, s


def _node_kinds(s: dict[str, np.ndarray], first: int, count: int) -> np.ndarray:
    """The checked node kinds (uint8) of the ``count`` nodes from ``first``."""
    _check(0 < count == len(s["kind"]), f"{len(s['kind'])} kinds for {count} nodes")
    _check(first + count < 1 << 62, "node ids out of range")
    _check(int(s["kind"].max()) < 256 and bool(_KNOWN_KIND[s["kind"].astype(np.uint8)].all()),
           "unknown node kind")
    return s["kind"].astype(np.uint8)


def _edge_counts(s: dict[str, np.ndarray], inner: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per node its child count and its offset into the child references, per reference
    its fresh flag, and per node its gap count: checked against the node kinds and each
    other."""
    child_count = np.zeros(len(inner), dtype=np.int64)
    _check(len(s["child_count"]) == int(inner.sum()), "child counts do not match the node kinds")
    _check(len(s["child_count"]) == 0 or int(s["child_count"].max()) < 1 << 32, "implausible child count")
    child_count[inner] = s["child_count"].astype(np.int64)
    child_start = np.concatenate(([0], np.cumsum(child_count)))
    edges = int(child_start[-1])
    _check(len(s["child_fresh"]) == edges, "fresh flags do not match the child counts")
    _check(edges == 0 or int(s["child_fresh"].max()) <= 1, "a fresh flag is not 0 or 1")
    fresh = s["child_fresh"].astype(bool)
    _check(len(s["child_id"]) == edges - int(fresh.sum()), "child ids do not match the fresh flags")
    _check(len(s["child_id"]) == 0 or int(s["child_id"].max()) < 1 << 62, "implausible child id")
    gap_count = np.where(inner, child_count + 1, 0)
    _check(len(s["gaps"]) == int(gap_count.sum()), "gap count does not match the child counts")
    _check(isinstance(s["gaps"], CodedStream) or len(s["gaps"]) == 0 or int(s["gaps"].max()) < 1 << 62,
           "implausible gap")
    return child_count, child_start, fresh, gap_count


def _predicted_ids(codes: np.ndarray, first: int, kind: np.ndarray, key: np.ndarray, key_start: np.ndarray,
                   child_count: np.ndarray, fresh: np.ndarray, imports: np.ndarray) -> np.ndarray:
    """The ids of the children that are not fresh from their reference codes: each
    one's parent and context (parent kind, region or -1, child count, position)."""
    parent = np.repeat(np.arange(len(kind), dtype=np.int64), child_count)
    position = np.arange(len(parent)) - np.repeat(np.cumsum(child_count) - child_count, child_count)
    region = np.full(len(kind), -1, dtype=np.int64)
    calls = kind == NodeKind.CALL
    region[calls] = key[key_start[:-1][calls]]
    explicit = ~fresh
    p = parent[explicit]
    context = np.stack((kind[p].astype(np.int64), region[p], child_count[p], position[explicit]), axis=1)
    return predicted_children(codes, first, p, context, imports).astype(np.uint64)


def _properties(s: dict[str, Any], kind: np.ndarray) -> tuple[np.ndarray, ...]:
    """The hard (``key``) and soft property values with each node's offset into them
    (coded soft values decoded, 5.9)."""
    key_start = np.concatenate(([0], np.cumsum(_HARD_COUNT[kind])))
    soft_start = np.concatenate(([0], np.cumsum(_SOFT_COUNT[kind])))
    _check(len(s["key"]) == key_start[-1] and len(s["soft"]) == soft_start[-1],
           "property counts do not match the node kinds")
    key, soft = unzigzag(s["key"]), s["soft"]
    if isinstance(soft, CodedStream):
        order, rows = soft_rows(kind, key_start, key, soft_start)
        soft = np.empty(len(order), dtype=np.uint64)
        soft[order] = decode_gaps(s["soft"].data, rows, s["soft"].count, "soft values")
    return key_start, key, soft_start, unzigzag(soft)


def soft_rows(kind: np.ndarray, key_start: np.ndarray, key: np.ndarray,
              soft_start: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """The rows of a coded soft stream (spec 5.9): the stream position of every soft value
    in row order, and the row lengths. A row holds the values of one *context* - node kind,
    `ref` (its first key value: the metric, the peer, the operation), soft column - in
    stream order; rows in order of first appearance."""
    rows: dict[tuple[int, int, int], list[int]] = {}
    for node in np.flatnonzero(soft_start[1:] > soft_start[:-1]).tolist():
        ref = int(key[key_start[node]])
        for column, at in enumerate(range(int(soft_start[node]), int(soft_start[node + 1]))):
            rows.setdefault((int(kind[node]), ref, column), []).append(at)
    order = [at for row in rows.values() for at in row]
    return np.array(order, dtype=np.int64), [len(row) for row in rows.values()]


def _children(s: dict[str, np.ndarray], first: int, child_count: np.ndarray,
              fresh: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The absolute id of every child reference, through the pending stack the block
    starts with, and the node holding it."""
    pending = _undeltas(s["pending"], "pending")
    _check(len(pending) <= PENDING_LIMIT and all(0 <= node < first for node in pending),
           "pending stack is too long or names a node outside the earlier blocks")
    parent = np.repeat(np.arange(len(child_count), dtype=np.int64), child_count)
    children = children_by_matching(first, child_count, fresh, s["child_id"].astype(np.int64), pending)
    if children is None:
        children = children_by_replay(first, child_count, fresh, s["child_id"].astype(np.int64), pending)
    _check(len(children) == 0 or bool(((children >= 0) & (children < first + parent)).all()),
           "a child reference does not point to an earlier node")
    return children, parent


def _own_metric_sums(kind: np.ndarray, key: np.ndarray, key_start: np.ndarray, soft: np.ndarray, soft_start: np.ndarray,
                     imports: ImportTable, edges: int) -> tuple[list[int], np.ndarray, np.ndarray]:
    """The metrics of the block (sampled in it or in its imports) and, per metric and node,
    the METRIC nodes' own difference and whether the node is a sample of it."""
    count = len(kind)
    is_metric = kind == EventKind.METRIC
    sample_metric = key[key_start[:-1][is_metric]]
    metrics = sorted(set(sample_metric.tolist()) | set(imports.metric_ids.tolist()))
    _check(len(metrics) * (count + edges) <= METRIC_CELL_LIMIT,
           f"{len(metrics)} metrics over {count + edges} nodes and child references exceed the reader's limit")
    row = {metric: k for k, metric in enumerate(metrics)}
    own_sum = np.zeros((len(metrics), count), dtype=np.int64)
    own_seen = np.zeros((len(metrics), count), dtype=np.int64)
    if metrics:
        rows = np.array([row[m] for m in sample_metric.tolist()], dtype=np.int64)
        own_sum[rows, np.flatnonzero(is_metric)] = soft[soft_start[:-1][is_metric]]
        own_seen[rows, np.flatnonzero(is_metric)] = 1
    return metrics, own_sum, own_seen


def _sub_tree_sums(own: np.ndarray, children: np.ndarray, first: int, child_start: np.ndarray,
                   imported: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bottom-up values of every node (total, events, then the sum and the presence
    of each metric): iterate value = own + sum over children until nothing changes
    (children precede parents, so each pass settles one more level of nesting). Also
    returns the values of every child reference: from the block, or ``imported`` (the
    import table's values of the references to earlier blocks, in their order)."""
    internal = children >= first
    metric_rows = (len(own) - 2) // 2
    edge_values = np.zeros((len(own), len(children)), dtype=np.int64)
    edge_values[:, ~internal] = imported
    values = own.copy()
    inside = children[internal] - first
    for _ in range(own.shape[1] + 1):
        edge_values[:, internal] = values[:, inside]
        updated = own + _segment_sums(edge_values, child_start)
        updated[2 + metric_rows:] = np.minimum(updated[2 + metric_rows:], 1)  # presence, not a count
        if np.array_equal(updated, values):
            return values, edge_values
        values = updated
    raise ValueError("sub-tree sums do not settle")


def _durations(inner: np.ndarray, child_count: np.ndarray, child_start: np.ndarray, parent: np.ndarray,
               gaps: np.ndarray, gap_start: np.ndarray, child_totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 2n+1 durations of the call and artificial nodes, the gaps interleaved with the
    children's totals, and each node's offset into them."""
    duration_count = np.where(inner, 2 * child_count + 1, 0)
    duration_start = np.concatenate(([0], np.cumsum(duration_count)))
    durations = np.empty(int(duration_start[-1]), dtype=np.int64)
    node_of_gap = np.repeat(np.arange(len(child_count)), np.diff(gap_start))
    gap_rank = np.arange(len(gaps)) - gap_start[node_of_gap]
    durations[duration_start[node_of_gap] + 2 * gap_rank] = gaps
    edge_rank = np.arange(len(parent)) - child_start[parent]
    durations[duration_start[parent] + 2 * edge_rank + 1] = child_totals
    return duration_start, durations


def _check_no_wrap(own: np.ndarray, own_start: np.ndarray, edge: np.ndarray, edge_start: np.ndarray) -> None:
    """The sums above are taken modulo 2**64; check that no node's true sum of its own
    terms ``own[own_start[i]:own_start[i+1]]`` and its children's values (all
    non-negative) reaches 2**63: estimated in floating point, exact where close."""
    count = len(edge_start) - 1
    approx = (np.bincount(np.repeat(np.arange(count), np.diff(own_start)), own.astype(float), count)
              + np.bincount(np.repeat(np.arange(count), np.diff(edge_start)), edge.astype(float), count))
    for i in np.flatnonzero(approx >= 2.0 ** 62).tolist():
        exact = sum(own[own_start[i]:own_start[i + 1]].tolist()) + sum(edge[edge_start[i]:edge_start[i + 1]].tolist())
        _check(exact < 1 << 63, "sub-tree duration or event count overflows")


def children_by_matching(first: int, child_count: np.ndarray, fresh: np.ndarray, explicit: np.ndarray,
                         pending: list[int]) -> np.ndarray | None:
    """Child ids from the pending-stack rule (spec 5.3) without a loop: every pop is matched
    with the latest earlier push at the same stack depth. None when the stack would exceed
    PENDING_LIMIT (its bottom is then trimmed, which only the replay follows)."""
    count = len(child_count)
    parent = np.repeat(np.arange(count, dtype=np.int64), child_count)
    fresh_edges = np.flatnonzero(fresh)
    pops = np.bincount(parent[fresh_edges], minlength=count).astype(np.int64)
    op_start = np.concatenate(([0], np.cumsum(pops + 1)))[:-1]  # node i: pops, then its push
    ops = int(pops.sum()) + count
    is_push = np.zeros(ops, dtype=bool)
    is_push[op_start + pops] = True
    step = np.where(is_push, 1, -1)
    depth_after = len(pending) + np.cumsum(step)
    _check(len(depth_after) == 0 or int(depth_after.min()) >= 0, "a node pops an empty pending stack")
    if len(depth_after) and int(depth_after.max()) > PENDING_LIMIT:
        return None
    slot = np.where(is_push, depth_after - 1, depth_after)
    value = np.full(ops, -1, dtype=np.int64)
    value[is_push] = first + np.arange(count)
    all_slot = np.concatenate((np.arange(len(pending)), slot))
    all_value = np.concatenate((np.array(pending, dtype=np.int64), value))
    all_push = np.concatenate((np.ones(len(pending), bool), is_push))
    order = np.lexsort((np.arange(len(all_slot)), all_slot))  # by slot, then time
    popped = ~all_push[order[1:]]
    pop_value = np.empty(len(all_slot), dtype=np.int64)
    pop_value[order[1:][popped]] = all_value[order[:-1][popped]]
    pop_value = pop_value[len(pending):]
    # a node pops its fresh children last first
    owner = parent[fresh_edges]
    rank = np.arange(len(fresh_edges)) - (np.cumsum(pops) - pops)[owner]
    children = np.empty(len(fresh), dtype=np.int64)
    children[fresh_edges] = pop_value[op_start[owner] + pops[owner] - 1 - rank]
    children[~fresh] = explicit
    return children


def children_by_replay(first: int, child_count: np.ndarray, fresh: np.ndarray, explicit: np.ndarray,
                       pending: list[int]) -> np.ndarray:
    """Child ids by replaying the pending stack node by node, as spec 5.3 states it."""
    stack = list(pending)
    fresh_list, explicit_list, counts = fresh.tolist(), explicit.tolist(), child_count.tolist()
    children = [0] * len(fresh_list)
    start = next_explicit = 0
    for i, n in enumerate(counts):
        for j in range(start + n - 1, start - 1, -1):
            if fresh_list[j]:
                _check(bool(stack), "a node pops an empty pending stack")
                children[j] = stack.pop()
        for j in range(start, start + n):
            if not fresh_list[j]:
                children[j] = explicit_list[next_explicit]
                next_explicit += 1
        start += n
        stack.append(first + i)
        if len(stack) > PENDING_LIMIT:
            del stack[0]
    return np.array(children, dtype=np.int64)


def _shape_groups(kind: np.ndarray, key_start: np.ndarray, key: np.ndarray,
                  child_count: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The call and artificial nodes, each one's shape label (shapes numbered in order of
    first appearance), and per shape its node count and gaps per node."""
    nodes = np.flatnonzero(kind <= NodeKind.ARTIFICIAL)
    if not len(nodes):
        empty = np.zeros(0, dtype=np.int64)
        return nodes, empty, empty, empty
    # a call or artificial node's shape: (kind, region or -1, child count)
    region = np.full(len(nodes), -1, dtype=np.int64)
    calls = kind[nodes] == NodeKind.CALL
    region[calls] = key[key_start[nodes[calls]]]
    if -(1 << 40) < int(region.min()) and int(region.max()) < 1 << 40 and int(child_count.max()) < 1 << 21:  # one integer per shape
        shapes = ((region + 1) << 22) | (child_count[nodes] << 1) | kind[nodes].astype(np.int64)
        _, first_seen, label = np.unique(shapes, return_index=True, return_inverse=True)
    else:
        shapes = np.stack((kind[nodes].astype(np.int64), region, child_count[nodes]), axis=1)
        _, first_seen, label = np.unique(shapes, axis=0, return_index=True, return_inverse=True)
    label = np.argsort(np.argsort(first_seen, kind="stable"), kind="stable")[label.reshape(-1)]
    members = np.bincount(label)
    width = child_count[nodes][np.argsort(label, kind="stable")][np.cumsum(members) - members] + 1
    return nodes, label, members, width


def _shape_rows(kind: np.ndarray, key_start: np.ndarray, key: np.ndarray, child_count: np.ndarray) -> np.ndarray:
    """The lengths of the rows of the shape matrices, in the order of the gaps stream."""
    _, _, members, width = _shape_groups(kind, key_start, key, child_count)
    return np.repeat(members, width)


def _gaps_in_node_order(stored: np.ndarray, kind: np.ndarray, key_start: np.ndarray, key: np.ndarray,
                        child_count: np.ndarray, gap_start: np.ndarray) -> np.ndarray:
    """Undo the grouping of the gaps stream: shapes in order of first appearance, within a
    shape position by position, within a position node by node."""
    nodes, label, members, width = _shape_groups(kind, key_start, key, child_count)
    if not len(nodes):
        return stored
    group_start = np.concatenate(([0], np.cumsum(members * width)))[:-1]
    by_group = np.argsort(label, kind="stable")
    rank = np.empty(len(nodes), dtype=np.int64)
    rank[by_group] = np.arange(len(nodes)) - (np.cumsum(members) - members)[label[by_group]]
    gaps_per_node = child_count[nodes] + 1
    node_of_gap = np.repeat(np.arange(len(nodes)), gaps_per_node)
    position = np.arange(len(stored)) - np.repeat(gap_start[nodes] - gap_start[nodes[0]], gaps_per_node)
    source = group_start[label[node_of_gap]] + position * members[label[node_of_gap]] + rank[node_of_gap]
    return stored[source]


class ImportTable:
    """The import table: total, event count and metric sums of earlier-block children."""

    def __init__(self, s: dict[str, np.ndarray], first: int):
        self.ids = np.array(_undeltas(s["import_id"], "import"), dtype=np.int64)
        n = len(self.ids)
        _check(len(s["import_total"]) == n and len(s["import_events"]) == n
               and len(s["import_metric_count"]) == n, "import table columns differ in length")
        _check(n == 0 or int(self.ids[-1]) < first, "an imported node is not in an earlier block")
        _check(n == 0 or (int(s["import_total"].max()) < 1 << 62 and int(s["import_events"].max()) < 1 << 62),
               "implausible imported total or event count")
        self.total = s["import_total"].astype(np.int64)
        self.events = s["import_events"].astype(np.int64)
        pair_count = s["import_metric_count"].astype(np.int64)
        _check(n == 0 or int(pair_count.max()) < 1 << 32, "implausible metric count")
        pair_start = np.concatenate(([0], np.cumsum(pair_count)))
        _check(len(s["import_metric_id"]) == pair_start[-1] == len(s["import_metric_sum"]),
               "import metric sums do not match their counts")
        ids = s["import_metric_id"]
        later = np.ones(len(ids), dtype=bool)  # pairs after the first of their node
        later[pair_start[:-1][pair_count > 0]] = False
        _check(len(ids) == 0 or (int(ids.max()) < 1 << 63 and bool((ids[1:] > ids[:-1])[later[1:]].all())),
               "the metric ids of an imported node are not increasing")
        self.metric_ids = ids.astype(np.int64)
        metric_sum = unzigzag(s["import_metric_sum"])
        self.pair_owner = np.repeat(np.arange(n), pair_count)
        self.metric_sum = metric_sum
        self.pair_start = pair_start

    def sums(self, node: int) -> tuple[tuple[int, int], ...]:
        """The (metric, sum) pairs of an imported node."""
        row = int(np.searchsorted(self.ids, node))
        a, b = int(self.pair_start[row]), int(self.pair_start[row + 1])
        return tuple(zip(self.metric_ids[a:b].tolist(), self.metric_sum[a:b].tolist()))

    def locate(self, nodes: np.ndarray) -> np.ndarray:
        """Row of each node in the table; every node must be listed."""
        rows = np.searchsorted(self.ids, nodes)
        _check(bool((rows < len(self.ids)).all()) and bool((self.ids[np.minimum(rows, len(self.ids) - 1)]
                                                             == nodes).all()) if len(nodes) else True,
               "a child in an earlier block is missing from the import table")
        return rows

    def values(self, rows: np.ndarray, metrics: list[int]) -> np.ndarray:
        """Per row: total, events, then the sum and the presence of each metric."""
        out = np.zeros((2 + 2 * len(metrics), len(rows)), dtype=np.int64)
        out[0], out[1] = self.total[rows], self.events[rows]
        if metrics and len(self.metric_ids):
            table = np.zeros((2 * len(metrics), len(self.ids)), dtype=np.int64)
            index = np.searchsorted(np.array(metrics), self.metric_ids)
            table[index, self.pair_owner] = self.metric_sum
            table[len(metrics) + index, self.pair_owner] = 1
            out[2:] = table[:, rows]
        return out
