"""The coded gaps stream (spec/format.md 5.8): the gaps of a node block row by row of its
shape matrices (5.4), each value binarised as its bit length (a 6-level bit tree) and its
mantissa (the top `MODELLED` bits in a bit tree per bit length, the rest at probability
1/2), range-coded with adaptive binary probabilities that start afresh at every row.

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
MODELLED = 3
LIMIT = 1 << 62
_MASK32 = 0xFFFFFFFF


def _fresh_model() -> tuple[list[list[int]], list[list[list[int]]]]:
    """A row's probabilities, each [p, updates]: bit length tree, mantissa tree per length."""
    return ([[PROB_ONE // 2, 0] for _ in range(1 << LENGTH_BITS)],
            [[[PROB_ONE // 2, 0] for _ in range(1 << MODELLED)] for _ in range(1 << LENGTH_BITS)])


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

    def direct(self, bit: int) -> None:
        self.range >>= 1
        if bit:
            self.low += self.range
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
        lengths, mantissas = _fresh_model()
        for v in data[at:at + length]:
            c = v.bit_length()
            e.tree(lengths, LENGTH_BITS, c)
            if c >= 2:
                rest = c - 1
                modelled = min(rest, MODELLED)
                e.tree(mantissas[c], modelled, (v >> (rest - modelled)) & ((1 << modelled) - 1))
                for i in range(rest - modelled - 1, -1, -1):
                    e.direct((v >> i) & 1)
        at += length
    for _ in range(5):
        e.shift_low()
    return bytes(e.out)


class _Decoder:
    def __init__(self, coded: bytes):
        if not coded or coded[0] != 0:
            raise ValueError("the coded gaps do not start with a 0 byte")
        self.coded, self.position, self.range = coded, 5, _MASK32
        self.code = int.from_bytes(coded[1:5].ljust(4, b"\0"), "big")
        if len(coded) < 5:
            raise ValueError("the coded gaps end early")

    def normalize(self) -> None:
        while self.range < TOP:
            if self.position >= len(self.coded):
                raise ValueError("the coded gaps end early")
            self.range = (self.range << 8) & _MASK32
            self.code = ((self.code << 8) | self.coded[self.position]) & _MASK32
            self.position += 1

    def tree(self, probs: list[list[int]], bits: int) -> int:
        node = 1
        for _ in range(bits):
            q = probs[node]
            bound = (self.range >> PROB_BITS) * q[0]
            bit = int(self.code >= bound)
            if bit:
                self.code -= bound
                self.range -= bound
            else:
                self.range = bound
            _adapt(q, bit)
            node = 2 * node + bit
            self.normalize()
        return node - (1 << bits)

    def direct(self, bits: int) -> int:
        value = 0
        for _ in range(bits):
            self.range >>= 1
            bit = self.code >= self.range
            if bit:
                self.code -= self.range
            self.normalize()
            value = 2 * value + bit
        return value


def decode_gaps(coded: bytes, row_lengths: Sequence[int], count: int) -> np.ndarray:
    """The ``count`` values of ``coded`` in rows of ``row_lengths``; ValueError unless the
    bytes decode to exactly those values, each below 2**62, using every byte."""
    if sum(row_lengths) != count:
        raise ValueError("the gap rows do not match the gap count")
    d = _Decoder(coded)
    out = []
    for length in row_lengths:
        lengths, mantissas = _fresh_model()
        for _ in range(length):
            c = d.tree(lengths, LENGTH_BITS)
            if c < 2:
                out.append(c)
                continue
            if c > 62:
                raise ValueError("a coded gap is not below 2**62")
            rest = c - 1
            modelled = min(rest, MODELLED)
            high = (1 << modelled) | d.tree(mantissas[c], modelled)
            out.append((high << (rest - modelled)) | d.direct(rest - modelled))
    if d.position != len(coded):
        raise ValueError(f"{len(coded) - d.position} bytes after the coded gaps")
    return np.array(out, dtype=np.uint64)
