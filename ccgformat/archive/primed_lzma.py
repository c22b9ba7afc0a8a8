"""The primed LZMA2 body of a file in the compact layout (spec 2.9, format 2.1).

zstd codes a small file's bundle with a dictionary's history, but learns its statistics
afresh. An LZMA2 stream that first codes bundle dictionary 3 and then the bundle reaches
the bundle with the history and with adaptive probabilities trained on what small
archives hold: 4.6-22% fewer bytes than zstd on the compact corpus traces
(docs/compression.md). The writer ends the dictionary's part with a sync flush, which
closes its chunk and keeps the coder's state; every such stream then begins with the same
bytes, the stream prefix (`bundle_dictionary_3.lzma2`, spec 2.9), and the file holds the
rest. A reader decodes prefix and body as one raw LZMA2 stream (Python's `lzma`).

Python's `lzma` has no sync flush, so the writer calls liblzma, the library that module is
built on, through ctypes; where liblzma cannot be loaded, or codes the dictionary into
other bytes than the prefix (another encoder version), the writer uses zstd."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import lzma
from importlib.resources import files

from ..errors import CorruptArchiveError
from .bundle import dictionary_bytes

#: the bundle dictionary whose number names this codec (spec 2.8)
DICTIONARY = 3
#: the package file holding the stream prefix
PREFIX_FILE = "bundle_dictionary_3.lzma2"
#: the raw LZMA2 filter's properties (spec 2.9)
DICTIONARY_SIZE, LC, LP, PB = 1 << 20, 3, 0, 0
#: the most raw bytes a body may code: a bundle holds sections of under 256 KiB
LARGEST_RAW_LENGTH = 1 << 20
_FILTERS = [{"id": lzma.FILTER_LZMA2, "dict_size": DICTIONARY_SIZE, "lc": LC, "lp": LP, "pb": PB}]


@functools.cache
def stream_prefix() -> bytes:
    """The bytes every stream begins with: those coding bundle dictionary 3, flushed."""
    return files(__package__).joinpath(PREFIX_FILE).read_bytes()


def decompress(body: bytes | memoryview, path: str, offset: int) -> bytes:
    """The raw payload a body (at ``offset`` of ``path``) codes, at most
    LARGEST_RAW_LENGTH bytes; `CorruptArchiveError` unless the prefix and the body are one
    whole raw LZMA2 stream coding the dictionary, then the payload."""
    history = dictionary_bytes(DICTIONARY)
    decoder = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=_FILTERS)
    try:
        out = decoder.decompress(stream_prefix() + bytes(body), max_length=len(history) + LARGEST_RAW_LENGTH + 1)
    except lzma.LZMAError as error:
        raise CorruptArchiveError(f"the compact file's LZMA2 body is damaged: {error}", path=path,
                                  offset=offset) from None
    if len(out) > len(history) + LARGEST_RAW_LENGTH:
        raise CorruptArchiveError(f"the compact file's LZMA2 body codes more than {LARGEST_RAW_LENGTH} bytes",
                                  path=path, offset=offset)
    if not decoder.eof:
        raise CorruptArchiveError("the compact file's LZMA2 body ends before its stream does", path=path,
                                  offset=offset)
    if decoder.unused_data:
        raise CorruptArchiveError(f"{len(decoder.unused_data)} bytes follow the LZMA2 stream's end", path=path,
                                  offset=offset)
    if out[:len(history)] != history:
        raise CorruptArchiveError("the compact file's LZMA2 body does not begin where the dictionary's code ends",
                                  path=path, offset=offset)
    return out[len(history):]


def compress(raw: bytes) -> bytes | None:
    """The body coding ``raw`` (spec 2.9), or None where liblzma cannot make it."""
    try:
        with _Encoder() as encoder:
            if encoder.code(dictionary_bytes(DICTIONARY), _SYNC_FLUSH) != stream_prefix():
                return None
            return encoder.code(raw, _FINISH)
    except OSError:
        return None


def code_dictionary(history: bytes) -> bytes:
    """The stream prefix coding ``history``: how tools/bundle_dictionary.py made
    PREFIX_FILE from dictionary 3. OSError where liblzma cannot be loaded."""
    with _Encoder() as encoder:
        return encoder.code(history, _SYNC_FLUSH)


# --------------------------------------------------------------------------- liblzma

#: lzma_action values (lzma/base.h)
_SYNC_FLUSH, _FINISH = 1, 3
_OK, _STREAM_END = 0, 1
_FILTER_LZMA2 = 0x21
_VLI_UNKNOWN = (1 << 64) - 1
#: preset 9 with the extreme flag, as `xz -9e`
_PRESET = 9 | 0x80000000


class _Stream(ctypes.Structure):
    """`lzma_stream` (lzma/base.h); its layout has not changed since liblzma 5.0."""
    _fields_ = [("next_in", ctypes.c_void_p), ("avail_in", ctypes.c_size_t), ("total_in", ctypes.c_uint64),
                ("next_out", ctypes.c_void_p), ("avail_out", ctypes.c_size_t), ("total_out", ctypes.c_uint64),
                ("allocator", ctypes.c_void_p), ("internal", ctypes.c_void_p),
                ("reserved_ptr", ctypes.c_void_p * 4), ("reserved_int", ctypes.c_uint64 * 2),
                ("reserved_size", ctypes.c_size_t * 2), ("reserved_enum", ctypes.c_int * 2)]


class _Options(ctypes.Structure):
    """`lzma_options_lzma` (lzma/lzma12.h)."""
    _fields_ = [("dict_size", ctypes.c_uint32), ("preset_dict", ctypes.c_void_p),
                ("preset_dict_size", ctypes.c_uint32), ("lc", ctypes.c_uint32), ("lp", ctypes.c_uint32),
                ("pb", ctypes.c_uint32), ("mode", ctypes.c_int), ("nice_len", ctypes.c_uint32),
                ("mf", ctypes.c_int), ("depth", ctypes.c_uint32), ("reserved_int", ctypes.c_uint32 * 4),
                ("reserved_enum", ctypes.c_int * 4), ("reserved_ptr", ctypes.c_void_p * 2)]


class _Filter(ctypes.Structure):
    """`lzma_filter` (lzma/filter.h)."""
    _fields_ = [("id", ctypes.c_uint64), ("options", ctypes.c_void_p)]


@functools.cache
def _library() -> ctypes.CDLL:
    """liblzma, its functions typed; OSError where it cannot be loaded."""
    library = ctypes.CDLL(ctypes.util.find_library("lzma") or "liblzma.so.5")
    library.lzma_lzma_preset.argtypes = [ctypes.POINTER(_Options), ctypes.c_uint32]
    library.lzma_lzma_preset.restype = ctypes.c_ubyte
    library.lzma_raw_encoder.argtypes = [ctypes.POINTER(_Stream), ctypes.POINTER(_Filter)]
    library.lzma_raw_encoder.restype = ctypes.c_int
    library.lzma_code.argtypes = [ctypes.POINTER(_Stream), ctypes.c_int]
    library.lzma_code.restype = ctypes.c_int
    library.lzma_end.argtypes = [ctypes.POINTER(_Stream)]
    library.lzma_end.restype = None
    return library


class _Encoder:
    """A raw LZMA2 encoder of spec 2.9's filter at preset 9e; OSError where liblzma
    cannot be loaded or refuses the filter."""

    def __init__(self) -> None:
        self.library = _library()
        self.options = _Options()
        if self.library.lzma_lzma_preset(ctypes.byref(self.options), _PRESET):
            raise OSError("liblzma does not know preset 9e")
        self.options.dict_size, self.options.lc, self.options.lp, self.options.pb = DICTIONARY_SIZE, LC, LP, PB
        self.filters = (_Filter * 2)(_Filter(_FILTER_LZMA2, ctypes.cast(ctypes.pointer(self.options),
                                                                         ctypes.c_void_p)),
                                     _Filter(_VLI_UNKNOWN, None))
        self.stream = _Stream()
        code = self.library.lzma_raw_encoder(ctypes.byref(self.stream), self.filters)
        if code != _OK:
            raise OSError(f"liblzma refused the raw LZMA2 filter (code {code})")

    def __enter__(self) -> _Encoder:
        return self

    def __exit__(self, *_: object) -> None:
        self.library.lzma_end(ctypes.byref(self.stream))

    def code(self, data: bytes, action: int) -> bytes:
        """The bytes the encoder gives for ``data`` and ``action`` (a sync flush or the end)."""
        source = ctypes.create_string_buffer(data, len(data))
        self.stream.next_in, self.stream.avail_in = ctypes.cast(source, ctypes.c_void_p), len(data)
        out = bytearray()
        chunk = ctypes.create_string_buffer(1 << 16)
        while True:
            self.stream.next_out, self.stream.avail_out = ctypes.cast(chunk, ctypes.c_void_p), len(chunk)
            code = self.library.lzma_code(ctypes.byref(self.stream), action)
            out += chunk.raw[:len(chunk) - self.stream.avail_out]
            if code == _STREAM_END:
                return bytes(out)
            if code != _OK:
                raise OSError(f"liblzma failed to compress (code {code})")
