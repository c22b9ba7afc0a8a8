"""The global definitions of an OTF2 archive as the writer calls that restore them, read
through the OTF2 C library: one plain ctypes callback per definition kind appends its
arguments to a list, so a definition costs a callback, not the `otf2` package's object
graph (its reader and its writer took 3.4 s for 20,000 locations).

A call is ``[kind, args]`` with the arguments of ``GlobalDefWriter_Write<kind>`` in the
package's `_otf2` wrappers: references and enums as integers, an array (the C count and
pointer) as a list, an attribute value as ``{"bits": n}``. The calls are in the order the
package's registry writes them (kind by kind, `_WRITE_ORDER`; within a kind, the file's
order), which is the layout of ``extensions["otf2"]["definitions"]`` since version 1.
Duplicate references of one kind are a `FormatError`, as they are to the package."""

from __future__ import annotations

import ctypes
import importlib
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from ...errors import FormatError
from .binding import ATTRIBUTE_BYTES, Binding

__all__ = ["GlobalDefinitions", "read_global_definitions", "METRIC_GROUP"]

_PREFIX = "_GlobalDefReaderCallback_FP_"
_INTERRUPT = 1                      # OTF2_CALLBACK_INTERRUPT
#: OTF2_GROUP_TYPE_METRIC: such groups are written after the metrics.
METRIC_GROUP = 3
#: The registries of the `otf2` package in the order it writes them; kinds sharing a
#: registry share its references. "MetricGroup" stands for the groups of METRIC_GROUP.
_WRITE_ORDER = (
    ("String",), ("Paradigm",), ("Attribute",), ("SystemTreeNode",), ("SystemTreeNodeProperty",),
    ("SystemTreeNodeDomain",), ("LocationGroup",), ("LocationGroupProperty",), ("Location",),
    ("LocationProperty",), ("Region",), ("Group",), ("MetricMember",), ("MetricClass", "MetricInstance"),
    ("MetricClassRecorder",), ("MetricGroup",), ("Comm", "InterComm"), ("Parameter",), ("Callsite",),
    ("Callpath",), ("CallpathParameter",), ("RmaWin",), ("CartDimension",), ("CartTopology",),
    ("CartCoordinate",), ("SourceCodeLocation",), ("CallingContext",), ("CallingContextProperty",),
    ("InterruptGenerator",), ("ParadigmProperty",), ("IoParadigm",), ("IoRegularFile", "IoDirectory"),
    ("IoFileProperty",), ("IoHandle",), ("IoPreCreatedHandleState",))
_RANK = {kind: rank for rank, kinds in enumerate(_WRITE_ORDER) for kind in kinds}
#: Registries of definitions without a reference of their own (no duplicate check).
_LISTS = {"Paradigm", "ParadigmProperty", "MetricClassRecorder", "SystemTreeNodeProperty", "SystemTreeNodeDomain",
          "LocationGroupProperty", "LocationProperty", "CartCoordinate", "CallingContextProperty", "IoFileProperty",
          "IoPreCreatedHandleState", "CallpathParameter"}


@dataclass
class GlobalDefinitions:
    """Every global definition as a writer call, and the clock properties."""

    calls: list[list[Any]]                   #: [kind, writer arguments], in the package's write order
    clock: tuple[int, int, int, int]         #: resolution, global offset, trace length, realtime timestamp
    _by_kind: dict[str, list[list[Any]]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._by_kind = {}
        for kind, args in self.calls:
            self._by_kind.setdefault(kind, []).append(args)

    def of(self, kind: str) -> list[list[Any]]:
        """The arguments of every ``kind`` definition, in order."""
        return self._by_kind.get(kind, [])


@dataclass(frozen=True)
class _Argument:
    """How one C argument of a definition callback is recorded."""

    ctype: Any                               #: its plain ctypes type
    element: Any = None                      #: for an array: the plain ctypes type of an element
    attribute: bool = False                  #: an attribute value (its 64 bits), or an array of them
    count: bool = False                      #: the length of the arrays that follow (not recorded)


def _arguments(prototype: Any, otf2_type: Any, attribute_value: Any) -> list[_Argument]:
    """The recording of each argument of a callback prototype (after the user data)."""
    types = prototype._argtypes_[1:]
    arguments = []
    for position, ctype in enumerate(types):
        if ctype is ctypes.c_char_p:
            arguments.append(_Argument(ctypes.c_char_p))
        elif hasattr(ctype, "_type_") and isinstance(ctype._type_, type):     # a pointer: an array
            target = ctype._type_
            attribute = target is attribute_value
            element = ctypes.c_uint64 if attribute else _plain(target)
            arguments.append(_Argument(ctypes.c_void_p, element, attribute))
        else:
            attribute = position > 0 and types[position - 1] is otf2_type and ctypes.sizeof(ctype) == 8
            arguments.append(_Argument(_plain(ctype), attribute=attribute))
    for position, argument in enumerate(arguments[:-1]):
        if argument.element is None and arguments[position + 1].element is not None:
            arguments[position] = _Argument(argument.ctype, count=True)
    return arguments


def _plain(ctype: Any) -> Any:
    """The plain ctypes integer type of an (enum-derived) integer argument type."""
    if ctype._type_ in "fd":
        return ctype
    size, signed = ctypes.sizeof(ctype), ctype._type_ in "bhilq"
    return getattr(ctypes, f"c_{'' if signed else 'u'}int{8 * size}")


def _recorder(kind: str, arguments: list[Any], records: list[Any], limit: int) -> Callable[..., int]:
    """The callback body: append ``(kind, raw arguments)`` to ``records``, arrays copied to
    lists. It interrupts the reading (returns 1) at more than ``limit`` records or array
    elements - the size of the definition file, each takes a byte at least: on a file cut
    short the library reads a chunk again and again."""
    append = records.append
    if not any(a.element is not None for a in arguments):
        def simple(_: Any, *args: Any) -> int:
            append((kind, args))
            return 0 if len(records) <= limit else _INTERRUPT
        return simple

    def with_arrays(_: Any, *args: Any) -> int:
        values: list[Any] = []
        count = 0
        for argument, value in zip(arguments, args):
            if argument.count:
                count = value
                if count > limit:
                    return _INTERRUPT
            elif argument.element is not None:
                values.append(list((argument.element * count).from_address(value)) if count else [])
            else:
                values.append(value)
        append((kind, tuple(values)))
        return 0 if len(records) <= limit else _INTERRUPT
    return with_arrays


def _convert(kind: str, raw: tuple[Any, ...], attributes: list[int], path: str) -> list[Any]:
    """The writer arguments of one definition: texts decoded, attribute values wrapped
    (the bytes of their type, given by the argument before them, as the package does)."""
    args = list(raw)
    if kind == "String":
        try:
            args[1] = None if args[1] is None else args[1].decode()
        except UnicodeDecodeError:
            raise FormatError(f"String definition {args[0]} is not UTF-8", path=path) from None
    for position in attributes:
        value, types = args[position], args[position - 1]
        if isinstance(value, list):
            args[position] = [{"bits": v & _mask(t)} for v, t in zip(value, types)]
        else:
            args[position] = {"bits": value & _mask(types)}
    return args


def _mask(otf2_type: int) -> int:
    return (1 << 8 * ATTRIBUTE_BYTES.get(otf2_type, 4)) - 1


def read_global_definitions(binding: Binding, handle: Any, path: str) -> GlobalDefinitions:
    """The global definitions of the open OTF2 reader ``handle`` (``path``: the global
    definition file)."""
    _otf2, cdll = binding._otf2, binding.cdll
    prototypes = importlib.import_module("_otf2.GlobalDefReaderCallbacks")
    attribute_value = importlib.import_module("_otf2.AttributeValue").AttributeValue
    records: list[tuple[str, tuple[Any, ...]]] = []
    try:
        limit = os.stat(path).st_size
    except OSError as error:
        raise FormatError(f"cannot read the global definitions: {error.strerror}", path=path) from None
    clocks: list[tuple[int, int, int, int]] = []
    keep: list[Any] = []
    attributes: dict[str, list[int]] = {}
    new = cdll.OTF2_GlobalDefReaderCallbacks_New
    new.restype = ctypes.c_void_p
    callbacks = new()
    if not callbacks:
        raise MemoryError("OTF2 cannot allocate the definition callbacks")
    try:
        for name in dir(prototypes):
            kind = name[len(_PREFIX):]
            if not name.startswith(_PREFIX) or kind == "Unknown":
                continue
            arguments = _arguments(getattr(prototypes, name), _otf2.Type, attribute_value)
            recorded = [a for a in arguments if not a.count]
            attributes[kind] = [i for i, a in enumerate(recorded) if a.attribute]
            function_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *(a.ctype for a in arguments))
            body = (lambda _, *args: clocks.append(args) or 0) if kind == "ClockProperties" else \
                _recorder(kind, arguments, records, limit)
            function = function_type(body)
            keep.append(function)
            setter = getattr(cdll, f"OTF2_GlobalDefReaderCallbacks_Set{kind}Callback")
            setter.argtypes = [ctypes.c_void_p, function_type]
            setter.restype = ctypes.c_int
            if setter(callbacks, function) != 0:
                raise FormatError(f"the OTF2 library refused the {kind} definition callback", path=path)
        reader = _otf2.Reader_GetGlobalDefReader(handle)
        try:
            register = cdll.OTF2_Reader_RegisterGlobalDefCallbacks
            register.argtypes = [ctypes.c_void_p] * 4
            register.restype = ctypes.c_int
            if register(ctypes.cast(handle, ctypes.c_void_p), ctypes.cast(reader, ctypes.c_void_p), callbacks,
                        None) != 0:
                raise FormatError("the OTF2 library refused the definition callbacks", path=path)
            _otf2.Reader_ReadAllGlobalDefinitions(handle, reader)
            if len(records) > limit:
                raise FormatError("the definitions go on past the end of the file", path=path)
        finally:
            _otf2.Reader_CloseGlobalDefReader(handle, reader)
    finally:
        delete = cdll.OTF2_GlobalDefReaderCallbacks_Delete
        delete.argtypes = [ctypes.c_void_p]
        delete.restype = None
        delete(callbacks)
    if not clocks:
        raise FormatError("the archive has no ClockProperties definition", path=path)
    return GlobalDefinitions(_ordered(records, attributes, path), clocks[-1])


def _ordered(records: list[tuple[str, tuple[Any, ...]]], attributes: dict[str, list[int]],
             path: str) -> list[list[Any]]:
    """The calls in the package's write order; a reference defined twice is a `FormatError`.
    Column-wise over the records (20,000 locations' 100,000 definitions: 0.07 s one at a
    time)."""
    ranks = [_RANK[kind] for kind, _ in records]
    keys = [(rank, raw[0]) for rank, (kind, raw) in zip(ranks, records) if kind not in _LISTS]
    if len(set(keys)) != len(keys):
        _duplicate(records, path)
    metric_group = _RANK["MetricGroup"]
    for position, (kind, raw) in enumerate(records):
        if kind == "Group" and raw[2] == METRIC_GROUP:
            ranks[position] = metric_group
    try:
        calls = [[kind, [raw[0], None if raw[1] is None else raw[1].decode()]] if kind == "String"
                 else [kind, _convert(kind, raw, attributes[kind], path) if attributes[kind] else list(raw)]
                 for kind, raw in records]
    except UnicodeDecodeError:
        calls = [[kind, _convert(kind, raw, attributes[kind], path)] for kind, raw in records]  # names the String
    return [calls[position] for position in sorted(range(len(calls)), key=ranks.__getitem__)]


def _duplicate(records: list[tuple[str, tuple[Any, ...]]], path: str) -> None:
    """Raise the `FormatError` of the first definition whose reference its kind defined before."""
    seen: set[tuple[int, int]] = set()
    for kind, raw in records:
        if kind not in _LISTS:
            key = (_RANK[kind], raw[0])
            if key in seen:
                raise FormatError(f"{kind} definition {raw[0]} is defined twice", path=path)
            seen.add(key)
