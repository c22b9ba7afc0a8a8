"""Reading the JSON text: the document and its events with their positions,
and exact microsecond timestamps to ticks."""

from __future__ import annotations

import gzip
import json
import re
import zlib
from decimal import Decimal
from pathlib import Path
from typing import Any

from ...errors import FormatError
from .common import INT64_MAX, INT64_MIN, OWN
from .detect import GZIP_MAGIC

#: Most fractional digits of a microsecond kept (10**18 ticks per second fit in int64).
MAX_DIGITS = 12
_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class Float(float):
    """A JSON number with a fraction or exponent that keeps its text (exact timestamps)."""

    __slots__ = ("text",)

    def __new__(cls, text: str) -> Float:
        number = super().__new__(cls, text)
        number.text = text
        return number


DECODER = json.JSONDecoder(parse_float=Float, parse_constant=_reject_constant)


class Source:
    """The decoded text of the input and error reporting at a character position."""

    def __init__(self, path: Path):
        self.path = str(path)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise FormatError(f"cannot read the input: {error.strerror or error}", path=self.path) from None
        self.positions: list[int] | None = None
        self.gzip = data.startswith(GZIP_MAGIC)
        if self.gzip:
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError, zlib.error) as error:
                raise FormatError(f"damaged gzip data: {error}", path=self.path) from None
        try:
            self.text = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise self.error(f"not UTF-8 text ({error.reason})", None, byte=error.start) from None

    def error(self, reason: str, pos: int | None, byte: int | None = None) -> FormatError:
        """A FormatError at character ``pos`` (or at ``byte``) with its line and byte offset."""
        line = None
        if pos is not None:
            line = self.text.count("\n", 0, pos) + 1
            byte = len(self.text[:pos].encode("utf-8"))
        if self.gzip and byte is not None:
            reason += " (offset in the decompressed data)"
        return FormatError(reason, path=self.path, line=line, offset=byte)

    def skip(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()  # type: ignore[union-attr]

    def value(self, pos: int) -> tuple[Any, int]:
        try:
            return DECODER.raw_decode(self.text, pos)
        except json.JSONDecodeError as error:
            raise self.error(f"invalid JSON: {error.msg}", error.pos) from None
        except (ValueError, RecursionError) as error:
            raise self.error(f"invalid JSON: {error}", pos) from None

    def document(self) -> tuple[dict[str, Any], list[Any], str]:
        """The top-level members other than ``traceEvents``, the events, and the form
        (``array`` or ``object``). Valid JSON is parsed in one go; anything else (an open
        array, an error to locate) by the event-by-event parser."""
        try:
            document = DECODER.decode(self.text)
        except (ValueError, RecursionError):
            document = None
        if isinstance(document, list):
            return {}, document, "array"
        if isinstance(document, dict) and isinstance(document.get("traceEvents"), list):
            return {k: v for k, v in document.items() if k != "traceEvents"}, document.pop("traceEvents"), "object"
        top, located, form = self.located()
        return top, [event for _, event in located], form

    def position(self, number: int) -> int:
        """The character position of event ``number``."""
        if self.positions is None:
            self.positions = [pos for pos, _ in self.located()[1]]
        return self.positions[number]

    def located(self) -> tuple[dict[str, Any], list[tuple[int, Any]], str]:
        """As `document`, each event with its position."""
        text = self.text
        pos = self.skip(0)
        if text.startswith("[", pos):
            events: list[tuple[int, Any]] = []
            pos = self._array(pos + 1, events, open_end=True)
            form, top = "array", {}
        elif text.startswith("{", pos):
            events, top, pos = self._object(pos + 1)
            form = "object"
        else:
            raise self.error("not a Chrome trace: expected '[' or '{'", pos)
        pos = self.skip(pos)
        if pos < len(text):
            raise self.error("invalid JSON: extra data after the trace", pos)
        return top, events, form

    def _array(self, pos: int, events: list[tuple[int, Any]], open_end: bool) -> int:
        """Events up to the closing bracket; the array form may end without one."""
        text = self.text
        pos = self.skip(pos)
        if text.startswith("]", pos):
            return pos + 1
        while True:
            if pos >= len(text) and open_end:
                return pos
            start = pos
            event, pos = self.value(pos)
            events.append((start, event))
            pos = self.skip(pos)
            if text.startswith(",", pos):
                pos = self.skip(pos + 1)
            elif text.startswith("]", pos):
                return pos + 1
            elif not (pos >= len(text) and open_end):
                raise self.error("invalid JSON: expected ',' or ']' after an event", pos)

    def _object(self, pos: int) -> tuple[list[tuple[int, Any]], dict[str, Any], int]:
        text = self.text
        top: dict[str, Any] = {}
        events: list[tuple[int, Any]] | None = None
        pos = self.skip(pos)
        if text.startswith("}", pos):
            raise self.error("the trace object has no 'traceEvents' member", pos)
        while True:
            if not text.startswith('"', pos):
                raise self.error("invalid JSON: expected a member name", pos)
            name, pos = self.value(pos)
            pos = self.skip(pos)
            if not text.startswith(":", pos):
                raise self.error("invalid JSON: expected ':'", pos)
            pos = self.skip(pos + 1)
            if name == "traceEvents":
                if events is not None:
                    raise self.error("'traceEvents' appears twice", pos)
                if not text.startswith("[", pos):
                    raise self.error("'traceEvents' is not an array", pos)
                events = []
                pos = self._array(pos + 1, events, open_end=False)
            else:
                top[name], pos = self.value(pos)
            pos = self.skip(pos)
            if text.startswith(",", pos):
                pos = self.skip(pos + 1)
            elif text.startswith("}", pos):
                break
            else:
                raise self.error("invalid JSON: expected ',' or '}'", pos)
        if events is None:
            raise self.error("the trace object has no 'traceEvents' member", pos)
        return events, top, pos + 1


def decimal(value: Any) -> int | Decimal | None:
    """An exact number from a JSON number or a numeric string, else None."""
    if type(value) is int:
        return value
    if isinstance(value, Float):
        return Decimal(value.text)
    if isinstance(value, str) and _NUMBER.fullmatch(value):
        return Decimal(value.strip())
    return None


class Timer:
    """Microseconds to ticks: exact at 10**(6+digits) ticks per second, or (for files this
    exporter wrote) rounded to the exporter's timer, whose ticks the text identifies."""

    def __init__(self, resolution: int, offset: int, digits: int | None):
        self.resolution = resolution
        self.offset = offset
        self.digits = digits
        self.scale = 10 ** (digits or 0)

    def ticks(self, value: int | Decimal, absolute: bool = True) -> int | None:
        """The tick count of ``value`` microseconds, a timestamp or (``absolute`` false) a
        duration; None outside int64."""
        if type(value) is int:
            if self.digits is not None:
                ticks = value * self.scale
                return ticks if INT64_MIN <= ticks <= INT64_MAX else None
            value = Decimal(value)
        sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)
        if len(digits) + exponent > 40:      # beyond int64 ticks at any resolution
            return None
        if len(digits) + exponent < -30:     # far below a tick (and no huge powers of ten)
            digits, exponent = (0,), 0
        mantissa = int("".join(map(str, digits))) * (-1 if sign else 1)
        if self.digits is not None:
            shift = exponent + self.digits
            if shift < 0:      # the digits were counted on the normalised value
                mantissa, shift = mantissa // 10 ** -shift, 0
            ticks = mantissa * 10 ** shift if shift else mantissa
        else:
            numerator = mantissa * self.resolution * 10 ** max(exponent, 0)
            denominator = 10 ** (6 - min(exponent, 0))
            quotient, remainder = divmod(numerator, denominator)
            ticks = quotient + (2 * remainder > denominator or (2 * remainder == denominator and quotient % 2))
            ticks += self.offset if absolute else 0
        return ticks if INT64_MIN <= ticks <= INT64_MAX else None


def fraction_digits(value: int | Decimal) -> int:
    """Decimals after the point that ``value`` needs (trailing zeros need none)."""
    if type(value) is int:
        return 0
    _, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    significant = len("".join(map(str, digits)).rstrip("0"))
    return max(0, -(exponent + len(digits) - significant)) if significant else 0


def own_timer(top: dict[str, Any]) -> Timer | None:
    """The timer a file written by this exporter declares, if any."""
    own = top.get(OWN)
    if not isinstance(own, dict):
        return None
    resolution, offset = own.get("timer_resolution"), own.get("clock_offset")
    if (type(resolution) is not int or type(offset) is not int or not 0 < resolution <= INT64_MAX
            or not INT64_MIN <= offset <= INT64_MAX):
        return None
    return Timer(resolution, offset, None)
