"""OTF v1 definition records to `Definitions`, and the id tables events are resolved with.

Processes (``DP``) become locations in definition order, each with a system-tree node of
its own (node i for location i) whose parent is the node of its ``PT`` parent (a process
with a parent is a thread). Process groups (``DPG``) become communicators, and those that
describe the machine also system-tree nodes above the processes (kind ``process group``,
after the processes' nodes, in definition order; the rule is in `groups`). Functions
(``DF``) become regions (their group is the ``DFG`` name), counters (``DCNT``) metrics
(``ACC``/``ABS`` mode; ``DOUBLE`` counters hold IEEE bits, signed integer types are
``int64``, the rest keep their raw 64 bits as ``uint64``). ``DTR`` gives the timer
resolution, ``DV``/``DCR`` the provenance. Every definition record, in file order with
its stream and key-values, is kept in ``extensions["otf1"]["definitions"]`` so nothing
is lost; the OTF ids behind each model index are listed there too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ...errors import FormatError
from ...model import Communicator, Definitions, Location, Metric, Region, SystemTreeNode
from .files import lines
from .grammar import DEFINITION_FILE, KEY_VALUE
from .groups import group_levels, is_communicator

_ABSOLUTE, _VARTYPE_BITS, _DOUBLE, _SIGNED, _FLOAT = 1, 480, 288, 32, 256


@dataclass
class Catalog:
    """OTF ids to model indexes (marker and key tables are filled from their files)."""

    processes: dict[int, int] = field(default_factory=dict)
    functions: dict[int, int] = field(default_factory=dict)
    counters: dict[int, int] = field(default_factory=dict)
    groups: dict[int, int] = field(default_factory=dict)
    operations: dict[int, int] = field(default_factory=dict)
    keys: dict[int, int] = field(default_factory=dict)
    markers: dict[int, int] = field(default_factory=dict)


def key_value(fields: dict[str, Any]) -> list[Any]:
    """A ``K`` line as JSON: ``[key, type, hex value]`` plus the length of a byte array."""
    return [fields["key"], fields["type"], fields["value"]] + ([fields["length"]] if "length" in fields else [])


@dataclass(frozen=True)
class _Record:
    stream: int
    name: str
    fields: dict[str, Any]
    path: str
    line: int

    def fail(self, reason: str) -> FormatError:
        return FormatError(reason, path=self.path, line=self.line)


def read_definitions(files: Iterable[tuple[int, Path]]) -> tuple[Definitions, Catalog]:
    """All definition records of ``(stream, file)`` pairs, global ones first."""
    records: list[_Record] = []
    for stream, path in files:
        pending: list[list[Any]] = []
        for number, line in lines(path):
            parsed = DEFINITION_FILE.parse(line)
            if parsed is None:
                raise FormatError("unparseable definition record", path=str(path), line=number)
            record, fields = parsed
            if record is KEY_VALUE:
                pending.append(key_value(fields))
                continue
            if pending:
                fields["kv"], pending = pending, []
            records.append(_Record(stream, record.name, fields, str(path), number))
        if pending:
            raise FormatError("key-value lines at the end of the file belong to no record", path=str(path))
    return _Builder(records).build()


class _Builder:
    def __init__(self, records: list[_Record]):
        self.records = records
        self.catalog = Catalog()
        self.definitions = Definitions()

    def of(self, name: str) -> list[_Record]:
        return [r for r in self.records if r.name == name]

    def unique(self, name: str, key: str) -> dict[int, _Record]:
        table: dict[int, _Record] = {}
        for record in self.of(name):
            ident = record.fields[key]
            if ident in table:
                raise record.fail(f"{name} {ident} is defined twice")
            table[ident] = record
        return table

    def build(self) -> tuple[Definitions, Catalog]:
        defs, catalog = self.definitions, self.catalog
        self._processes()
        groups = {i: r.fields["name"] for i, r in self.unique("DefFunctionGroup", "group").items()}
        for function, record in self.unique("DefFunction", "function").items():
            catalog.functions[function] = len(defs.regions)
            defs.regions.append(Region(record.fields["name"], group=groups.get(record.fields["group"], "")))
        for group, record in self.unique("DefProcessGroup", "group").items():
            members = tuple(self._process(record, p, "member") for p in record.fields["members"])
            catalog.groups[group] = len(defs.communicators)
            defs.communicators.append(Communicator(record.fields["name"], members))
        self._levels()
        for counter, record in self.unique("DefCounter", "counter").items():
            catalog.counters[counter] = len(defs.metrics)
            defs.metrics.append(_metric(record.fields))
        for operation in self.unique("DefCollectiveOperation", "operation"):
            catalog.operations[operation] = len(catalog.operations)
        catalog.keys = {key: r.fields["type"] for key, r in self.unique("DefKeyValue", "key").items()}
        self._timer()
        for record in self.records:
            for key, *_ in record.fields.get("kv", []):
                if key not in catalog.keys:
                    raise record.fail(f"key {key} is not defined")
        for record in self.of("DefVersion"):
            defs.provenance["otf1_version"] = ".".join(str(int(x, 16)) for x in record.fields["version"].split("."))
            defs.provenance["otf1_version_name"] = record.fields.get("identifier", "")
        for record in self.of("DefCreator"):
            defs.provenance["creator"] = record.fields["creator"]
        defs.extensions["otf1"] = {
            "definitions": [[r.stream, r.name, r.fields] for r in self.records],
            "process": list(catalog.processes), "function": list(catalog.functions),
            "process_group": list(catalog.groups), "counter": list(catalog.counters),
            "collective_operation": list(catalog.operations),
        }
        return defs, catalog

    def _process(self, record: _Record, process: int, role: str) -> int:
        try:
            return self.catalog.processes[process]
        except KeyError:
            raise record.fail(f"{role} process {process} is not defined") from None

    def _processes(self) -> None:
        table = self.unique("DefProcess", "process")
        for index, process in enumerate(table):
            self.catalog.processes[process] = index
        for process, record in table.items():
            parent = record.fields.get("parent", 0)
            ancestors = {process}
            while parent:
                if parent not in table:
                    raise record.fail(f"parent process {parent} is not defined")
                if parent in ancestors:
                    raise record.fail(f"process {process} is its own ancestor")
                ancestors.add(parent)
                parent = table[parent].fields.get("parent", 0)
        for process, record in table.items():
            parent = record.fields.get("parent", 0)
            kind = "thread" if parent else "process"
            name = record.fields.get("name", f"process {process}")
            index = self.catalog.processes[process]
            self.definitions.system_tree.append(
                SystemTreeNode(name, kind, self.catalog.processes[parent] if parent else None))
            self.definitions.locations.append(Location(name, kind, index))

    def _levels(self) -> None:
        """The process groups that are hierarchy levels (`groups`; the communicators so far
        are the groups in definition order) as system-tree nodes after the processes' own,
        each top process's node under the smallest group holding it."""
        lists: dict[int, set[int]] = {}
        for record in self.of("DefAttributeList"):
            lists.setdefault(record.fields["attribute_list"], set()).update(record.fields["attributes"])
        flagged = {record.fields["process"] for record in self.of("DefProcessOrGroupAttributes")
                   if is_communicator(record.fields["attribute_list"], lists)}
        tree = self.definitions.system_tree
        tops = []
        for top, node in enumerate(tree):
            while node.parent is not None:
                top, node = node.parent, tree[node.parent]
            tops.append(top)
        levels, holder = group_levels(tops, [c.members for c in self.definitions.communicators],
                                      {self.catalog.groups[g] for g in flagged if g in self.catalog.groups})
        nodes = {group: len(tree) + rank for rank, group in enumerate(levels)}
        for process, group in holder.items():
            tree[process] = SystemTreeNode(tree[process].name, tree[process].kind, nodes[group])
        for group, parent in levels.items():
            tree.append(SystemTreeNode(self.definitions.communicators[group].name, "process group",
                                       None if parent is None else nodes[parent]))

    def _timer(self) -> None:
        values = {r.fields["ticks_per_second"]: r for r in self.of("DefTimerResolution")}
        if len(values) > 1:
            raise list(values.values())[-1].fail(f"conflicting timer resolutions {sorted(values)}")
        for ticks, record in values.items():
            if not 0 < ticks < 1 << 63:
                raise record.fail(f"timer resolution {ticks} is out of range")
            self.definitions.timer_resolution = ticks


def _metric(fields: dict[str, Any]) -> Metric:
    properties = fields["properties"]
    vartype = properties & _VARTYPE_BITS
    if vartype == _DOUBLE:
        value_type = "double"
    elif vartype < _FLOAT and vartype & _SIGNED:
        value_type = "int64"
    else:
        value_type = "uint64"
    mode = "absolute" if properties & 3 == _ABSOLUTE else "accumulated"
    return Metric(fields["name"], fields["unit"], mode, value_type)
