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
  Other children are coded move-to-front over the block's recently referenced ids, so
  the few nodes shared everywhere (a send to the same peer) cost a small number.
* Gaps. A call node's 2n+1 durations alternate gaps and child durations; the child
  durations equal the children's own totals, so only the n+1 gaps are stored, grouped
  by node shape (kind, key, child count) and position, so that values of one kind of
  gap stand together.
* Totals, event counts and metric sums of sub-trees are recomputed while decoding, from
  the block's own nodes and an *import table* that carries them for the children the
  block references in earlier blocks. A block therefore decodes on its own.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import CorruptArchiveError
from ..graph.pool import NodeKind, NodePool, wrap64
from ..model import KIND_FIELDS, EventKind

STREAM_HEADER = struct.Struct("<BI")  # width u8, value count u32
BLOCK_START = struct.Struct("<QI")    # first node id u64, node count u32
WIDTHS = (1, 2, 4, 8)
#: The pending stack keeps at most this many nodes; older ones fall off its bottom.
PENDING_LIMIT = 4096
#: The move-to-front list of recently referenced children holds at most this many ids.
RECENT_LIMIT = 255
STREAMS = ("pending", "kind", "child_count", "child_fresh", "child_recent", "child_id", "gaps", "key", "soft",
           "import_id", "import_total", "import_events", "import_metric_count", "import_metric_id",
           "import_metric_sum")
SIGNED = frozenset({"key", "soft", "import_metric_sum"})

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
    return np.cumsum(values.astype(np.int64)).tolist()


def _refer(recent: list[int], child: int) -> int:
    """Move-to-front step: the child's rank (1-based) in ``recent``, or 0 if absent."""
    try:
        rank = recent.index(child) + 1
        del recent[rank - 1]
    except ValueError:
        rank = 0
    recent.insert(0, child)
    if len(recent) > RECENT_LIMIT:
        recent.pop()
    return rank


class NodeEncoder:
    """Encodes consecutive node ranges of a pool, carrying the pending stack across blocks."""

    def __init__(self) -> None:
        self.pending: list[int] = []  # nodes made but not yet referenced, newest last

    def encode(self, pool: NodePool, first: int, stop: int) -> bytes:
        """The raw payload of a node block holding ids ``first <= id < stop``."""
        columns: dict[str, list[int]] = {name: [] for name in STREAMS}
        columns["pending"] = _deltas(self.pending)
        columns["kind"] = pool.kind[first:stop]
        imported: set[int] = set()
        stack = self.pending
        recent: list[int] = []
        shapes: dict[tuple, list[tuple[int, ...]]] = {}  # node shape -> gap rows, first seen first
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
                for child, is_fresh in zip(children, fresh):
                    if not is_fresh:
                        rank = _refer(recent, child)
                        columns["child_recent"].append(rank)
                        if rank == 0:
                            columns["child_id"].append(child)
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
        parts = [BLOCK_START.pack(first, stop - first)]
        for name in STREAMS:
            values = np.array(columns[name], dtype=np.int64 if name in SIGNED else np.uint64)
            parts.append(encode_stream(zigzag(values) if name in SIGNED else values))
        return b"".join(parts)


@dataclass
class NodeBlock:
    """A decoded node block: per-node offsets into flat columns."""

    first: int
    kind: np.ndarray            # uint8 per node
    child_start: np.ndarray     # per node, offset into ``children`` (count + 1 entries)
    children: np.ndarray        # absolute child ids
    child_events: list[int]     # per child reference: events in the child's sub-tree
    child_sums: list[tuple[tuple[int, int], ...]]  # per child reference: its metric sums
    duration_start: np.ndarray  # per node, offset into ``durations``
    durations: np.ndarray       # the 2n+1 durations of every call and artificial node
    events: list[int]
    total: list[int]
    key_start: np.ndarray
    key: np.ndarray             # int64
    soft_start: np.ndarray
    soft: np.ndarray            # int64
    metric_sums: list[tuple[tuple[int, int], ...]]
    memo: dict[str, dict[int, Any]] = field(default_factory=dict)  # values read so far, per column

    def __len__(self) -> int:
        return len(self.kind)


def decode_nodes(raw: bytes, path: str, offset: int) -> NodeBlock:
    """Decode and check a node block payload (every count and reference is validated)."""
    try:
        return _decode(raw)
    except (ValueError, IndexError, KeyError, OverflowError) as error:
        raise CorruptArchiveError(f"node block: {error}", path=path, offset=offset) from None


def _check(condition: bool, reason: str) -> None:
    if not condition:
        raise ValueError(reason)


def _decode(raw: bytes) -> NodeBlock:
    _check(len(raw) >= BLOCK_START.size, "shorter than its header")
    first, count = BLOCK_START.unpack_from(raw, 0)
    position = BLOCK_START.size
    s = {}
    for name in STREAMS:
        s[name], position = decode_stream(raw, position)
    _check(position == len(raw), f"{len(raw) - position} bytes after the last stream")
    _check(0 < count == len(s["kind"]), f"{len(s['kind'])} kinds for {count} nodes")
    _check(first + count < 1 << 62, "node ids out of range")
    _check(int(s["kind"].max()) < 256 and bool(_KNOWN_KIND[s["kind"].astype(np.uint8)].all()),
           "unknown node kind")
    kind = s["kind"].astype(np.uint8)
    inner = kind <= NodeKind.ARTIFICIAL
    child_count = np.zeros(count, dtype=np.int64)
    _check(len(s["child_count"]) == int(inner.sum()), "child counts do not match the node kinds")
    child_count[inner] = s["child_count"].astype(np.int64)
    child_start = np.concatenate(([0], np.cumsum(child_count)))
    edges = int(child_start[-1])
    _check(len(s["child_fresh"]) == edges, "fresh flags do not match the child counts")
    fresh = s["child_fresh"]
    _check(edges == 0 or int(fresh.max()) <= 1, "a fresh flag is not 0 or 1")
    recent_rank = s["child_recent"]
    _check(len(recent_rank) == edges - int(fresh.sum()), "move-to-front ranks do not match the fresh flags")
    _check(len(recent_rank) == 0 or int(recent_rank.max()) <= RECENT_LIMIT, "move-to-front rank too large")
    explicit = s["child_id"]
    _check(len(explicit) == int((recent_rank == 0).sum()), "child ids do not match the move-to-front ranks")
    gap_count = np.where(inner, child_count + 1, 0)
    _check(len(s["gaps"]) == int(gap_count.sum()), "gap count does not match the child counts")
    _check(len(s["gaps"]) == 0 or int(s["gaps"].max()) < 1 << 62, "implausible gap")
    key_start = np.concatenate(([0], np.cumsum(_HARD_COUNT[kind])))
    soft_start = np.concatenate(([0], np.cumsum(_SOFT_COUNT[kind])))
    _check(len(s["key"]) == key_start[-1] and len(s["soft"]) == soft_start[-1],
           "property counts do not match the node kinds")
    key, soft = unzigzag(s["key"]), unzigzag(s["soft"])
    imports = _imports(s, first)

    # one pass in id order (children precede parents): rebuild the child references from
    # the pending stack and the explicit ids, and sum totals, event counts and metric sums
    stack = _undeltas(s["pending"], "pending")
    _check(len(stack) <= PENDING_LIMIT and all(0 <= node < first for node in stack),
           "pending stack is too long or names a node outside the earlier blocks")
    gap_start = np.concatenate(([0], np.cumsum(gap_count)))
    gaps = _gaps_in_node_order(s["gaps"].astype(np.int64), kind, key_start, key, child_count, gap_start)
    running = np.concatenate((np.zeros(1, np.uint64), np.cumsum(gaps, dtype=np.uint64)))  # wraps harmlessly
    gap_sum = (running[gap_start[1:]] - running[gap_start[:-1]]).view(np.int64).tolist()
    fresh_list, explicit_list = fresh.tolist(), explicit.astype(np.int64).tolist()
    rank_list = recent_rank.astype(np.int64).tolist()
    recent: list[int] = []
    kinds, counts, starts = kind.tolist(), child_count.tolist(), child_start.tolist()
    key_list, key_start_list = key.tolist(), key_start.tolist()
    soft_list, soft_start_list = soft.tolist(), soft_start.tolist()
    children = [0] * edges
    child_totals = [0] * edges
    child_events = [0] * edges
    child_sums: list[tuple[tuple[int, int], ...]] = [()] * edges
    total: list[int] = [0] * count
    events: list[int] = [1] * count
    sums: list[tuple[tuple[int, int], ...]] = [()] * count
    next_explicit = next_ranked = 0
    for i in range(count):
        node = first + i
        kind_i = kinds[i]
        if kind_i > NodeKind.ARTIFICIAL:
            if kind_i == EventKind.METRIC:
                sums[i] = ((key_list[key_start_list[i]], soft_list[soft_start_list[i]]),)
        else:
            a, b = starts[i], starts[i] + counts[i]
            for j in range(b - 1, a - 1, -1):
                if fresh_list[j]:
                    children[j] = stack.pop()
            node_total = gap_sum[i]
            node_events = 2 if kind_i == NodeKind.CALL else 0
            merged: dict[int, int] | None = None
            for j in range(a, b):
                if not fresh_list[j]:
                    rank = rank_list[next_ranked]
                    next_ranked += 1
                    if rank:
                        children[j] = recent[rank - 1]
                    else:
                        children[j] = explicit_list[next_explicit]
                        next_explicit += 1
                    _refer(recent, children[j])
                child = children[j]
                if first <= child < node:
                    c_total, c_events, c_sums = total[child - first], events[child - first], sums[child - first]
                else:
                    c_total, c_events, c_sums = imports[child]
                child_totals[j], child_events[j], child_sums[j] = c_total, c_events, c_sums
                node_total += c_total
                node_events += c_events
                if c_sums:
                    merged = {} if merged is None else merged
                    for metric, value in c_sums:
                        merged[metric] = wrap64(merged.get(metric, 0) + value)
            _check(node_total < 1 << 63, "sub-tree duration overflows")
            total[i], events[i] = node_total, node_events
            if merged:
                sums[i] = tuple(sorted(merged.items()))
        stack.append(node)
        if len(stack) > PENDING_LIMIT:
            del stack[0]

    # the 2n+1 durations: gaps interleaved with the children's totals
    duration_count = np.where(inner, 2 * child_count + 1, 0)
    duration_start = np.concatenate(([0], np.cumsum(duration_count)))
    durations = np.empty(int(duration_start[-1]), dtype=np.int64)
    node_of_gap = np.repeat(np.arange(count), gap_count)
    gap_rank = np.arange(len(gaps)) - gap_start[node_of_gap]
    durations[duration_start[node_of_gap] + 2 * gap_rank] = gaps
    node_of_edge = np.repeat(np.arange(count), child_count)
    edge_rank = np.arange(edges) - child_start[node_of_edge]
    durations[duration_start[node_of_edge] + 2 * edge_rank + 1] = np.array(child_totals, dtype=np.int64)
    return NodeBlock(first, kind, child_start, np.array(children, dtype=np.int64), child_events, child_sums,
                     duration_start, durations, events, total, key_start, key, soft_start, soft, sums)


def _gaps_in_node_order(stored: np.ndarray, kind: np.ndarray, key_start: np.ndarray, key: np.ndarray,
                        child_count: np.ndarray, gap_start: np.ndarray) -> np.ndarray:
    """Undo the grouping of the gaps stream: shapes in order of first appearance, within a
    shape position by position, within a position node by node."""
    shapes: dict[tuple, list[int]] = {}
    keys, starts, counts = key.tolist(), key_start.tolist(), child_count.tolist()
    for i in np.flatnonzero(kind <= NodeKind.ARTIFICIAL).tolist():
        shape = (int(kind[i]), tuple(keys[starts[i]:starts[i + 1]]), counts[i])
        shapes.setdefault(shape, []).append(i)
    gaps = np.empty(len(stored), dtype=np.int64)
    position = 0
    for (_, _, children), members in shapes.items():
        width, m = children + 1, len(members)
        rows = gap_start[members][None, :] + np.arange(width)[:, None]
        gaps[rows] = stored[position:position + width * m].reshape(width, m)
        position += width * m
    return gaps


def _imports(s: dict[str, np.ndarray], first: int) -> dict[int, tuple[int, int, tuple[tuple[int, int], ...]]]:
    """The import table: total, event count and metric sums of earlier-block children."""
    ids = _undeltas(s["import_id"], "import")
    n = len(ids)
    _check(len(s["import_total"]) == n and len(s["import_events"]) == n and len(s["import_metric_count"]) == n,
           "import table columns differ in length")
    _check(all(0 <= a < b for a, b in zip(ids, ids[1:] + [first])), "import ids are not sorted and earlier")
    metric_count = s["import_metric_count"].astype(np.int64)
    metric_start = np.concatenate(([0], np.cumsum(metric_count))).tolist()
    _check(len(s["import_metric_id"]) == metric_start[-1] == len(s["import_metric_sum"]),
           "import metric sums do not match their counts")
    _check(n == 0 or int(s["import_total"].max()) < 1 << 63, "implausible imported total")
    metric_id = s["import_metric_id"].astype(np.int64).tolist()
    metric_sum = unzigzag(s["import_metric_sum"]).tolist()
    totals, events = s["import_total"].astype(np.int64).tolist(), s["import_events"].astype(np.int64).tolist()
    return {node: (totals[k], events[k],
                   tuple(zip(metric_id[metric_start[k]:metric_start[k + 1]],
                             metric_sum[metric_start[k]:metric_start[k + 1]])))
            for k, node in enumerate(ids)}
