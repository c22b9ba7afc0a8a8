"""The coded gaps stream (spec/format.md 5.8): the gaps of a node block row by row of its
shape matrices (5.4), each value binarised as its bit length (a 6-level bit tree) and its
bits below the leading one (the top `MODELLED` in a bit tree per bit length, each lower
one with a probability of its own per bit length and position), range-coded with adaptive
binary probabilities that start afresh at every row. The low bits' own probabilities
learn what a row's values share there: a lossy gap rounded onto the grid of 3.5 ends in
zeros, a lossless one in noise that costs about a bit each.

The coder is an LZMA-style binary range coder: 32-bit range, 12-bit probabilities of a 0,
whose n-th update moves them ``2**-RATE[n]`` of the way to the bit seen (the last rate
thereafter): fast while they have seen few bits, then steadier. Each row of a shape matrix holds one gap
position of one node shape, values of one distribution, which the adaptive probabilities
learn; zstd's one Huffman table per block cannot. This is the reference of the C coder
(ccgformat/_native/gapcoder.c), which writes the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

PROB_BITS = 12
PROB_ONE = 1 << PROB_BITS
RATE = (1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 5)
TOP = 1 << 24
LENGTH_BITS = 6
MODELLED = 4
LIMIT = 1 << 62
_MASK32 = 0xFFFFFFFF


class _Model:
    """A row's probabilities, each [p, updates]: the bit length tree, and per bit length
    (made when the row first meets it) its mantissa tree and its low bits by position."""

    def __init__(self) -> None:
        self.lengths = [[PROB_ONE // 2, 0] for _ in range(1 << LENGTH_BITS)]
        self.by_length: dict[int, tuple[list[list[int]], list[list[int]]]] = {}

    def of_length(self, c: int) -> tuple[list[list[int]], list[list[int]]]:
        found = self.by_length.get(c)
        if found is None:
            found = self.by_length[c] = ([[PROB_ONE // 2, 0] for _ in range(1 << MODELLED)],
                                         [[PROB_ONE // 2, 0] for _ in range(max(0, c - 1 - MODELLED))])
        return found


def _adapt(q: list[int], bit: int) -> None:
    rate = RATE[min(q[1], len(RATE) - 1)]
    q[0] = q[0] - (q[0] >> rate) if bit else q[0] + ((PROB_ONE - q[0]) >> rate)
    q[1] = min(q[1] + 1, len(RATE))


class _Encoder:
    def __init__(self) -> None:
        self.low, self.range, self.cache, self.cache_size = 0, _MASK32, 0, 1
        self.out = bytearray()

    def shift_low(self) -> None:
        if self.low < 0xFF000000 or self.low >> 32:
            carry, temp = self.low >> 32, self.cache
            while True:
                self.out.append((temp + carry) & 0xFF)
                temp = 0xFF
                self.cache_size -= 1
                if not self.cache_size:
                    break
            self.cache = (self.low >> 24) & 0xFF
        self.cache_size += 1
        self.low = (self.low & 0x00FFFFFF) << 8

    def bit(self, q: list[int], bit: int) -> None:
        bound = (self.range >> PROB_BITS) * q[0]
        if bit:
            self.low += bound
            self.range -= bound
        else:
            self.range = bound
        _adapt(q, bit)
        while self.range < TOP:
            self.range = (self.range << 8) & _MASK32
            self.shift_low()

    def tree(self, probs: list[list[int]], bits: int, value: int) -> None:
        node = 1
        for i in range(bits - 1, -1, -1):
            bit = (value >> i) & 1
            self.bit(probs[node], bit)
            node = 2 * node + bit


def code_gaps(values: np.ndarray, row_lengths: Sequence[int]) -> bytes:
    """The coded bytes of ``values`` (each below 2**62) in rows of ``row_lengths``."""
    e = _Encoder()
    at = 0
    data = values.tolist()
    for length in row_lengths:
        model = _Model()
        for v in data[at:at + length]:
            c = v.bit_length()
            e.tree(model.lengths, LENGTH_BITS, c)
            if c >= 2:
                rest = c - 1
                modelled = min(rest, MODELLED)
                mantissa, low = model.of_length(c)
                e.tree(mantissa, modelled, (v >> (rest - modelled)) & ((1 << modelled) - 1))
                for i in range(rest - modelled - 1, -1, -1):
                    e.bit(low[i], (v >> i) & 1)
        at += length
    for _ in range(5):
        e.shift_low()
    return bytes(e.out)


class _Decoder:
    def __init__(self, coded: bytes, what: str = "gaps"):
        self.what = what
        if not coded or coded[0] != 0:
            raise ValueError(f"the coded {what} do not start with a 0 byte")
        self.coded, self.position, self.range = coded, 5, _MASK32
        self.code = int.from_bytes(coded[1:5].ljust(4, b"\0"), "big")
        if len(coded) < 5:
            raise ValueError(f"the coded {what} end early")

    def normalize(self) -> None:
        while self.range < TOP:
            if self.position >= len(self.coded):
                raise ValueError(f"the coded {self.what} end early")
            self.range = (self.range << 8) & _MASK32
            self.code = ((self.code << 8) | self.coded[self.position]) & _MASK32
            self.position += 1

    def bit(self, q: list[int]) -> int:
        bound = (self.range >> PROB_BITS) * q[0]
        bit = int(self.code >= bound)
        if bit:
            self.code -= bound
            self.range -= bound
        else:
            self.range = bound
        _adapt(q, bit)
        self.normalize()
        return bit

    def tree(self, probs: list[list[int]], bits: int) -> int:
        node = 1
        for _ in range(bits):
            node = 2 * node + self.bit(probs[node])
        return node - (1 << bits)


def decode_gaps(coded: bytes, row_lengths: Sequence[int], count: int, what: str = "gaps") -> np.ndarray:
    """The ``count`` values of ``coded`` in rows of ``row_lengths``; ValueError unless the
    bytes decode to exactly those values, each below 2**62, using every byte. ``what``:
    the coded stream's name in the errors (the gaps, 5.8, or the soft values, 5.9)."""
    if sum(row_lengths) != count:
        raise ValueError(f"the rows of the coded {what} do not match their count")
    d = _Decoder(coded, what)
    out = []
    for length in row_lengths:
        model = _Model()
        for _ in range(length):
            c = d.tree(model.lengths, LENGTH_BITS)
            if c < 2:
                out.append(c)
                continue
            if c > 62:
                raise ValueError(f"a value of the coded {what} is not below 2**62")
            rest = c - 1
            modelled = min(rest, MODELLED)
            mantissa, low = model.of_length(c)
            value = (1 << modelled) | d.tree(mantissa, modelled)
            for i in range(rest - modelled - 1, -1, -1):
                value = 2 * value + d.bit(low[i])
            out.append(value)
    if d.position != len(coded):
        raise ValueError(f"{len(coded) - d.position} bytes after the coded {what}")
    return np.array(out, dtype=np.uint64)
