"""Model definitions (system tree, locations, regions, metrics, communicators) and id lookups."""

from __future__ import annotations

import numpy as np

from ...model import Communicator, Location, Metric, Region, SystemTreeNode
from .definitions import DefinitionRecords
from .layouts import NO_ID
from .records import Records
from .source import Source

_GROUP_FLAG = 1          # ELG_GROUP_FLAG bit of an MPI_COMM mode

_REGION_ROLES = {0: "unknown", 1: "function", 2: "loop", 3: "user_region", 4: "barrier", 5: "coll_one2all",
                 6: "coll_all2one", 7: "coll_all2all", 8: "coll_other", 11: "parallel", 12: "loop",
                 13: "sections", 14: "section", 15: "workshare", 16: "single", 17: "master", 18: "critical",
                 19: "atomic", 20: "barrier", 21: "implicit_barrier", 22: "flush", 23: "critical_sblock",
                 24: "single_sblock", 25: "ordered", 26: "ordered_sblock"}
_PARADIGMS = {"MPI": "mpi", "OMP": "openmp", "USR": "user", "EPIK": "measurement"}
_METRIC_MODES = {0: "accumulated", 1: "rate", 2: "absolute"}


def lookup(source: Source, keys: np.ndarray, table: dict[int, int], what: str,
           offsets: np.ndarray) -> np.ndarray:
    """Model indexes of ``keys``; `FormatError` at the first undefined one."""
    known = np.array(sorted(table), dtype=np.int64)
    values = np.array([table[k] for k in known.tolist()], dtype=np.int64)
    where = np.minimum(np.searchsorted(known, keys), max(len(known) - 1, 0))
    found = known[where] == keys if len(known) else np.zeros(len(keys), bool)
    if not found.all():
        bad = int(np.flatnonzero(~found)[0])
        raise source.error(f"undefined {what} id {int(keys[bad])}", int(offsets[bad]))
    return values[where]


class Model:
    """Builds the model definitions and maps the file's ids to their indexes."""

    def __init__(self, source: Source, defs: DefinitionRecords, records: Records) -> None:
        self.source, self.defs, self.records = source, defs, records
        self.located = self._own_locations()
        self.per_rank = len(self.location_ids) == 1 and not bool(
            np.any(records.lids[records.owner] != NO_ID))
        self.by_rank = self._ranks()
        self.placeholders: list[int] = []
        self.comm_index: dict[int, int] = {}
        self.comm_ids: list[int] = []

    # -- locations
    @property
    def location_ids(self) -> list[int]:
        """The LOCATION ids, in location index order."""
        return list(self.defs.table("LOCATION"))

    def _own_locations(self) -> np.ndarray:
        """Each record's location index: its location id, else the file's only location."""
        records = self.records
        lids = records.lids[records.owner]
        index = {lid: i for i, lid in enumerate(self.defs.table("LOCATION"))}
        explicit = lids != NO_ID
        located = np.zeros(len(lids), np.int64)
        located[explicit] = lookup(self.source, lids[explicit], index, "location", records.starts[explicit])
        if not explicit.all() and len(index) != 1:
            bad = int(np.flatnonzero(~explicit)[0])
            raise self.source.error(f"event record without a location id in a file that defines {len(index)} "
                                    f"LOCATION records (a per-rank file defines exactly one)",
                                    int(records.starts[bad]))
        return located

    def _ranks(self) -> dict[int, int]:
        """Process id (MPI rank) -> its first location, thread 0 preferred."""
        locations = [record for _, record in self.defs.table("LOCATION").values()]
        order = sorted(range(len(locations)), key=lambda i: (locations[i]["tid"] != 0, i))
        ranks: dict[int, int] = {}
        for i in order:
            ranks.setdefault(locations[i]["pid"], i)
        return ranks

    def need_ranks(self, ranks: set[int], what: str, offset: int) -> None:
        """Per-rank files get placeholder locations for ranks of other files."""
        missing = ranks - set(self.by_rank)
        if missing and not self.per_rank:
            raise self.source.error(f"{what} names rank {min(missing)}, which has no LOCATION", offset)
        for rank in sorted(missing):
            self.by_rank[rank] = len(self.location_ids) + len(self.placeholders)
            self.placeholders.append(rank)

    def peers(self, ids: np.ndarray, offsets: np.ndarray, roots: bool = False) -> np.ndarray:
        """Location indexes of peer (or root) ids; NO_ID roots become -1."""
        result = np.full(len(ids), -1, np.int64)
        present = ids != NO_ID if roots else np.ones(len(ids), bool)
        if self.per_rank:
            table = self.by_rank
        else:
            table = {lid: i for i, lid in enumerate(self.location_ids)}
        result[present] = lookup(self.source, ids[present], table, "rank" if self.per_rank else "location",
                                 offsets[present])
        return result

    def peer_ranks(self) -> None:
        """Register placeholder locations for every peer and root a per-rank file names."""
        if not self.per_rank:
            return
        for group in self.records.groups:
            role = group.layout.role if group.layout else "unknown"
            for name in {"send": ("dlid",), "recv": ("slid",), "collexit": ("rlid",)}.get(role, ()):
                ids = set(group.data[name].tolist()) - {NO_ID}
                self.need_ranks(ids, "an event", int(self.records.starts[group.index[0]]))

    # -- communicators
    def communicators(self) -> list[Communicator]:
        """MPI_COMM and MPI_COMM_REF records, in file order."""
        comms, defs = [], self.defs
        groups = defs.table("MPI_GROUP")
        for record in defs.records:
            if record["record"] not in ("MPI_COMM", "MPI_COMM_REF"):
                continue
            cid = record["cid"]
            start = defs.table(record["record"])[cid][0]
            if record["record"] == "MPI_COMM":
                ranks, name = record["ranks"], f"{'group' if record['mode'] & _GROUP_FLAG else 'comm'} {cid}"
            else:
                if record["gid"] not in groups:
                    raise self.source.error(f"undefined MPI_GROUP id {record['gid']}", start)
                ranks, name = groups[record["gid"]][1]["ranks"], f"comm {cid}"
            if cid in self.comm_index:
                raise self.source.error(f"communicator id {cid} defined twice", start)
            self.need_ranks(set(ranks), f"communicator {cid}", start)
            self.comm_index[cid] = len(comms)
            self.comm_ids.append(cid)
            comms.append(Communicator(name, tuple(self.by_rank[r] for r in ranks)))
        return comms

    def comms(self, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Communicator indexes of communicator ids."""
        return lookup(self.source, ids, self.comm_index, "communicator", offsets)

    def placeholder_comms(self) -> list[Communicator]:
        """Per-rank files name communicators of the whole run they do not define."""
        if not self.per_rank:
            return []
        used: set[int] = set()
        for group in self.records.groups:
            if group.layout and group.layout.role in ("send", "recv", "collexit"):
                used.update(group.data["cid"].tolist())
        added = []
        for cid in sorted(used - set(self.comm_index)):
            self.comm_index[cid] = len(self.comm_ids)
            self.comm_ids.append(cid)
            added.append(Communicator(f"comm {cid}"))
        return added

    # -- everything else
    def text(self, strid: int, offset: int, fallback: str) -> str:
        """The STRING ``strid``, ``fallback`` for NO_ID."""
        if strid == NO_ID:
            return fallback
        if strid not in self.defs.strings:
            raise self.source.error(f"undefined STRING id {strid}", offset)
        return self.defs.strings[strid]

    def system_tree(self) -> tuple[list[SystemTreeNode], list[Location]]:
        """Machines > nodes > processes, and a location per LOCATION plus the placeholders."""
        defs, tree = self.defs, []
        machines, nodes, processes = {}, {}, {}
        for mid, (start, record) in defs.table("MACHINE").items():
            machines[mid] = len(tree)
            tree.append(SystemTreeNode(self.text(record["mnid"], start, f"machine {mid}"), "machine"))
        for nid, (start, record) in defs.table("NODE").items():
            nodes[nid] = len(tree)
            tree.append(SystemTreeNode(self.text(record["nnid"], start, f"node {nid}"), "node",
                                       machines.get(record["mid"])))
        where: dict[int, int | None] = {}
        for _, record in defs.table("LOCATION").values():
            where.setdefault(record["pid"], nodes.get(record["nid"], machines.get(record["mid"])))
        for pid in list(defs.table("PROCESS")) + [p for p in where if p not in defs.table("PROCESS")]:
            start, record = defs.table("PROCESS").get(pid, (0, {"pnid": NO_ID}))
            processes[pid] = len(tree)
            tree.append(SystemTreeNode(self.text(record["pnid"], start, f"process {pid}"), "process",
                                       where.get(pid)))
        locations = []
        for start, record in defs.table("LOCATION").values():
            thread_start, thread = defs.threads.get((record["pid"], record["tid"]), (start, {"tnid": NO_ID}))
            name = self.text(thread["tnid"], thread_start, f"thread {record['tid']}")
            locations.append(Location(name, "thread", processes[record["pid"]]))
        locations += [Location(f"rank {rank}", "process") for rank in self.placeholders]
        return tree, locations

    def regions(self) -> tuple[list[Region], dict[int, int]]:
        """The regions, and region id -> region index."""
        regions, index = [], {}
        for rid, (start, record) in self.defs.table("REGION").items():
            description = self.text(record["rdid"], start, "")
            index[rid] = len(regions)
            regions.append(Region(self.text(record["rnid"], start, f"region {rid}"),
                                  _REGION_ROLES.get(record["rtype"], f"type {record['rtype']}"),
                                  _PARADIGMS.get(description, description.lower() or "unknown"), description))
        return regions, index

    def metrics(self) -> list[Metric]:
        """METRIC records, plus unnamed metrics for values no METRIC defines."""
        metrics = [Metric(self.text(record["metnid"], start, f"metric {mid}"), "",
                          _METRIC_MODES.get(record["metmode"], f"mode {record['metmode']}"),
                          "double" if record["metdtype"] == 1 else "uint64")
                   for mid, (start, record) in self.defs.table("METRIC").items()]
        return metrics + [Metric(f"metric {i}", value_type="uint64")
                          for i in range(len(metrics), self.records.metric_count)]
