"""Reading Paje files: header blocks become event definitions, data lines become field
tokens handed to the handler of their event; included files are read once each.

Ids are scoped per file: a file starts with the definitions of the file that included
it and adds its own (lang-paje 4.6, "Header appearance").
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from ...errors import FormatError
from .syntax import FIELD_TYPES, OPTIONAL, REQUIRED, EventDef, tokenize

__all__ = ["Definition", "Handler", "Scanner"]

MAX_INCLUDE_DEPTH = 64


@dataclass
class Definition:
    """An event definition ready for data lines: where each field is in a line's tokens
    (the id is token 0)."""

    name: str
    index: int                           # position in `Scanner.eventdefs`
    size: int                            # tokens of a data line, the id included
    pos: dict[str, int]                  # canonical field name -> token position
    extras: tuple[tuple[str, int], ...]  # user fields: neither required nor optional
    default: bool                        # the first definition of its event name
    handler: Handler


Handler = Callable[[Definition, list[str]], None]


class Scanner:
    """Reads a trace file by file; `path` and `line` tell where it is (for errors)."""

    def __init__(self, handlers: dict[str, Handler]):
        self.handlers = handlers
        self.path = ""
        self.line: int | None = None
        self.scope: dict[str, Definition] = {}
        self.depth = 0
        self.eventdefs: list[dict[str, Any]] = []
        self.indexes: dict[tuple, int] = {}
        self.compiled: dict[int, Definition] = {}
        self.first: dict[str, int] = {}
        self.opened: set[str] = set()

    def fail(self, reason: str) -> FormatError:
        return FormatError(reason, path=self.path, line=self.line)

    def read(self, path: str, scope: dict[str, Definition] | None = None, depth: int = 0) -> None:
        """Read one file; its own %EventDef blocks extend the definitions it inherits."""
        if depth > MAX_INCLUDE_DEPTH:
            raise self.fail(f"files included more than {MAX_INCLUDE_DEPTH} levels deep")
        outer = self.path, self.line, self.scope, self.depth
        self.path, self.line, self.scope, self.depth = path, None, dict(scope or {}), depth
        self.opened.add(os.path.realpath(path))
        try:
            handle = open(path, encoding="utf-8-sig")  # a leading byte order mark is not text
        except OSError as error:
            raise FormatError(f"cannot read the file: {error.strerror or error}", path=path) from None
        with handle:
            self._lines(handle)
        self.path, self.line, self.scope, self.depth = outer

    def include(self, filename: str) -> bool:
        """Read a file named by the current one (relative to its folder) unless it is
        being read or was read (a file naming itself, or any cycle); True if read."""
        target = os.path.join(os.path.dirname(self.path), filename)
        if os.path.realpath(target) in self.opened:
            return False
        if not os.path.isfile(target):
            raise self.fail(f"the included file {filename!r} does not exist")
        self.read(target, self.scope, self.depth + 1)
        return True

    def _lines(self, handle: Any) -> None:
        scope, own = self.scope, set()
        block: EventDef | None = None
        number = 0
        try:
            for number, raw in enumerate(handle, 1):
                self.line = number
                line = raw.strip()
                if not line or line[0] == "#":
                    continue
                if line[0] == "%":
                    block = self._header_line(line, block, own)
                    continue
                if block is not None:
                    raise self.fail(f"data line inside %EventDef {block.name} {block.id} (no %EndEventDef)")
                tokens = line.split() if '"' not in line and "#" not in line else tokenize(line, self.path, number)
                if not tokens:
                    continue
                definition = scope.get(tokens[0])
                if definition is None:
                    raise self.fail(f"unknown event id {tokens[0]!r} (no %EventDef defines it)")
                if len(tokens) != definition.size:
                    raise self.fail(f"{len(tokens) - 1} fields, but {definition.name} (id {tokens[0]}) defines "
                                    f"{definition.size - 1}")
                definition.handler(definition, tokens)
        except UnicodeDecodeError:
            raise FormatError("not UTF-8 text", path=self.path, line=number + 1) from None
        if block is not None:
            raise FormatError(f"%EventDef {block.name} {block.id} is not closed by %EndEventDef", path=self.path,
                              line=block.line)

    def _header_line(self, line: str, block: EventDef | None, own: set[str]) -> EventDef | None:
        words = line[1:].split()
        if not words:
            return block
        if words[0] == "EventDef":
            if block is not None:
                raise self.fail(f"%EventDef inside %EventDef {block.name} {block.id}")
            if len(words) != 3:
                raise self.fail("%EventDef needs an event name and an id")
            return EventDef(words[1], words[2], [], self.line or 0)
        if words[0] == "EndEventDef":
            if block is None:
                raise self.fail("%EndEventDef without %EventDef")
            if block.id in own:
                raise self.fail(f"event id {block.id} is defined twice in this file")
            own.add(block.id)
            self.scope[block.id] = self._compile(block)
            return None
        if block is None:
            raise self.fail(f"unexpected header line {line[:40]!r} outside %EventDef")
        if len(words) != 2 or words[1] not in FIELD_TYPES:
            raise self.fail(f"a field line needs a name and one of the types {', '.join(sorted(FIELD_TYPES))}")
        block.fields.append((words[0], words[1]))
        return block

    def _compile(self, block: EventDef) -> Definition:
        names = block.check(self.path)
        key = (block.name, block.id, tuple(block.fields))
        index = self.indexes.get(key)
        if index is None:  # identical definitions in several files are kept once
            index = self.indexes[key] = len(self.eventdefs)
            self.eventdefs.append(block.to_json())
            self.first.setdefault(block.name, index)
        compiled = self.compiled.get(index)
        if compiled is None:
            known = set(REQUIRED[block.name]) | set(OPTIONAL.get(block.name, ()))
            compiled = self.compiled[index] = Definition(
                block.name, index, len(names) + 1, {name: i + 1 for i, name in enumerate(names)},
                tuple((name, i + 1) for i, name in enumerate(names) if name not in known),
                self.first[block.name] == index, self.handlers[block.name])
        return compiled
