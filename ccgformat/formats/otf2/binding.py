"""The OTF2 C library inside the `otf2` package, called directly where speed matters.

The `otf2` package (`otf2` high-level, `_otf2` ctypes wrappers) links the OTF2 C library
into one shared object that exports the whole C API. Its wrappers cost a Python frame
and an argument conversion per event; this module reaches the same library with
cheaper means: event callbacks are plain ctypes function pointers with integer arguments
(about 2 million events per second), and per-event C calls (attribute lists, event
writers) go through cffi, whose calls cost about a third of a ctypes call.

The event records come from the package itself: `Binding.records` maps every OTF2 event
record name (``"Enter"``, ``"MpiSend"``, ...) to its fields, in C order, with their
integer C types. Pointers (the arrays of ``Metric`` and ``ProgramBegin``) are passed as
plain addresses; OTF2 attribute values (an 8-byte union) travel as their 64 bits, which
every supported platform passes like a ``uint64_t``.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable

from ...errors import FormatError

__all__ = ["Binding", "Record", "enum_value", "load", "ATTRIBUTE_BYTES", "CALLBACK_INTERRUPT"]

#: Return value of an event callback that stops reading (OTF2_CALLBACK_INTERRUPT).
CALLBACK_INTERRUPT = 1
_CALLBACK_PREFIX = "_EvtReaderCallback_FP_"
#: Records whose C arguments are (count, array) pairs rather than one value per field.
ARRAY_RECORDS = ("Metric", "ProgramBegin")
#: Bytes of an OTF2 attribute value of each OTF2_Type (everything not listed: 4).
ATTRIBUTE_BYTES = {0: 0, 1: 1, 2: 2, 3: 4, 4: 8, 5: 1, 6: 2, 7: 4, 8: 8, 9: 4, 10: 8, 13: 8}


@dataclass(frozen=True)
class Record:
    """One OTF2 event record: its name, field names and their C argument types."""

    name: str
    fields: tuple[str, ...]
    ctypes: tuple[Any, ...]      #: plain ctypes types of the C arguments after the attribute list
    c_types: tuple[str, ...]     #: the same as C type names (pointers as ``uintptr_t``)


def _plain(ctype: Any) -> tuple[Any, str]:
    """The plain ctypes type and C name behind a (possibly enum-derived) argument type."""
    if not (isinstance(ctype, type) and issubclass(ctype, ctypes._SimpleCData)):
        return ctypes.c_void_p, "uintptr_t"   # pointers to arrays
    code = ctype._type_
    size = ctypes.sizeof(ctype)
    if code in "fd":
        return (ctypes.c_float, "float") if code == "f" else (ctypes.c_double, "double")
    signed = code in "bhilq"
    bits = 8 * size
    plain = getattr(ctypes, f"c_{'' if signed else 'u'}int{bits}")
    return plain, f"{'' if signed else 'u'}int{bits}_t"


class Binding:
    """The loaded library: record table, callback prototypes and the cffi call table."""

    def __init__(self, otf2: ModuleType, _otf2: ModuleType) -> None:
        self.otf2 = otf2
        self._otf2 = _otf2
        self.path = _otf2.Config.lib_path()
        self.cdll = ctypes.CDLL(self.path)      # our own function objects: _otf2 resets its own per call
        self.records = self._records()

    @functools.cached_property
    def ffi(self) -> Any:
        """The cffi declarations (`_cdef`), made at first use: parsing them costs 0.05-0.1 s,
        which a conversion by the native reader without attribute lists never needs."""
        import cffi

        ffi = cffi.FFI()
        ffi.cdef(self._cdef())
        return ffi

    @functools.cached_property
    def lib(self) -> Any:
        """The library through cffi (`ffi`)."""
        return self.ffi.dlopen(self.path)

    def _records(self) -> dict[str, Record]:
        """Every event record the library knows, from the `_otf2` callback prototypes."""
        prototypes = importlib.import_module("_otf2.EvtReaderCallbacks")
        records = {}
        for attribute in dir(prototypes):
            if not attribute.startswith(_CALLBACK_PREFIX) or attribute == _CALLBACK_PREFIX + "Unknown":
                continue
            name = attribute[len(_CALLBACK_PREFIX):]
            arguments = getattr(prototypes, attribute)._argtypes_[5:]
            plain = [_plain(t) for t in arguments]
            fields = tuple(f[0] for f in getattr(self.otf2.events, name)._fields if f[0] not in ("time", "attributes"))
            if name not in ARRAY_RECORDS and len(fields) != len(plain):
                raise ImportError(f"unexpected OTF2 record layout for {name}")
            records[name] = Record(name, fields, tuple(p[0] for p in plain), tuple(p[1] for p in plain))
        return records

    def _cdef(self) -> str:
        """The cffi declarations of the attribute list and event writer functions."""
        lines = [
            "uint32_t OTF2_AttributeList_GetNumberOfElements(uintptr_t);",
            "int OTF2_AttributeList_GetAttributeByIndex(uintptr_t, uint32_t, uint32_t*, uint8_t*, uint64_t*);",
            "uintptr_t OTF2_AttributeList_New(void);",
            "int OTF2_AttributeList_Delete(uintptr_t);",
            "int OTF2_AttributeList_AddAttribute(uintptr_t, uint32_t, uint8_t, uint64_t);",
        ]
        for record in self.records.values():
            arguments = "".join(", " + c for c in record.c_types)
            lines.append(f"int OTF2_EvtWriter_{record.name}(uintptr_t, uintptr_t, uint64_t{arguments});")
        return "\n".join(lines)

    # ---------------------------------------------------------------- reading

    def callback_type(self, record: Record | None) -> Any:
        """The ctypes prototype of a record's callback: (location, time, position,
        user data, attribute list, fields...) -> int; ``None`` is the unknown record."""
        fields = record.ctypes if record is not None else ()
        return ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
                                ctypes.c_void_p, ctypes.c_void_p, *fields)

    def set_callback(self, callbacks: Any, name: str, function: Any) -> None:
        """Register a ctypes callback (from `callback_type`) for record ``name`` (or "Unknown")."""
        setter = getattr(self.cdll, f"OTF2_EvtReaderCallbacks_Set{name}Callback")
        setter.argtypes = [ctypes.c_void_p, type(function)]
        setter.restype = ctypes.c_int
        if setter(ctypes.cast(callbacks, ctypes.c_void_p), function) != 0:
            raise RuntimeError(f"OTF2 refused the {name} callback")

    def attributes(self, address: int) -> list[list[int]]:
        """The entries of an attribute list as [attribute ref, OTF2_Type, value bits]."""
        count = self.lib.OTF2_AttributeList_GetNumberOfElements(address)
        ref = self.ffi.new("uint32_t*")
        kind = self.ffi.new("uint8_t*")
        value = self.ffi.new("uint64_t*")
        entries = []
        for index in range(count):
            if self.lib.OTF2_AttributeList_GetAttributeByIndex(address, index, ref, kind, value) != 0:
                raise RuntimeError("OTF2 cannot read an attribute list entry")
            size = ATTRIBUTE_BYTES.get(kind[0], 4)
            entries.append([ref[0], kind[0], value[0] & ((1 << 8 * size) - 1)])
        return entries

    def unpack(self, ctype: str, address: int, count: int) -> list[int]:
        """``count`` values of C type ``ctype`` at ``address``."""
        if count == 0:
            return []
        return self.ffi.unpack(self.ffi.cast(f"{ctype}*", address), count)

    # ---------------------------------------------------------------- writing

    def writer_address(self, pointer: Any) -> int:
        """The address behind a ctypes pointer returned by `_otf2`."""
        return ctypes.cast(pointer, ctypes.c_void_p).value or 0

    def attribute_list(self, entries: list[list[int]]) -> int:
        """A new attribute list holding ``entries`` (as returned by `attributes`)."""
        address = self.lib.OTF2_AttributeList_New()
        for ref, kind, bits in entries:
            if self.lib.OTF2_AttributeList_AddAttribute(address, ref, kind, bits) != 0:
                self.lib.OTF2_AttributeList_Delete(address)
                raise ValueError(f"attribute {ref} of type {kind} cannot be added")
        return address

    @functools.cached_property
    def writers(self) -> dict[str, Callable[..., int]]:
        """``OTF2_EvtWriter_<record>(writer, attribute list, time, fields...)`` per record name."""
        return {name: getattr(self.lib, f"OTF2_EvtWriter_{name}") for name in self.records}

    def array(self, ctype: str, values: list[int]) -> tuple[Any, int]:
        """A C array of ``values`` and its address (keep the first item alive while in use)."""
        array = self.ffi.new(f"{ctype}[]", values or [0])
        return array, int(self.ffi.cast("uintptr_t", array))


@functools.lru_cache(maxsize=1)
def _load() -> Binding:
    import otf2
    import otf2.events
    import _otf2

    return Binding(otf2, _otf2)


def load(path: str) -> Binding:
    """The binding; `FormatError` naming ``path`` when the `otf2` package is missing or unusable."""
    try:
        return _load()
    except (ImportError, AttributeError, OSError) as error:
        raise FormatError(f"OTF2 support needs the 'otf2' package (pip install 'ccgformat[otf2]'): {error}",
                          path=path) from None


def enum_value(binding: Binding, enum: str, name: str, default: str) -> int:
    """The value of the OTF2 enum member named ``name`` (any case), else of ``default``."""
    kind = getattr(binding.otf2.enums, enum)
    member = getattr(kind, name.upper(), None)
    return (member if isinstance(member, kind) else getattr(kind, default)).value
