"""The order of one thread's calls and instants at equal timestamps, and overlap lanes.

Shared by the reader (which applies it) and the writer (which checks that complete ``X``
events will be read back in the archive's order).
"""

from __future__ import annotations

from typing import Any

ENTER, LEAVE, POINT = 0, 1, 2


def nest(entries: list[tuple[int, int | None, int, Any]]) -> list[list[tuple[int, Any]]]:
    """Order one thread's calls and instants: ``entries`` are ``(start, end, seq, item)``
    (``end`` None for an instant), returned as token lists ``(ENTER|LEAVE|POINT, item)``,
    one per lane.

    Entries are taken by start, longer first, then by ``seq`` (file order). A call nests in
    the innermost open call that contains it (closed intervals); a call that overlaps an
    open call without fitting goes to the first lane where it fits (a new one if none).
    Instants stay in lane 0 inside every open call that has not ended before them.
    """
    order = sorted(entries, key=lambda e: (e[0], -(e[0] if e[1] is None else e[1]), e[2]))
    lanes: list[tuple[list[tuple[int, Any]], list[tuple[int, Any]]]] = [([], [])]
    for start, end, _, item in order:
        if end is None:
            stack, out = lanes[0]
            while stack and stack[-1][0] < start:
                out.append((LEAVE, stack.pop()[1]))
            out.append((POINT, item))
            continue
        for stack, out in lanes:
            depth = len(stack)
            while depth and stack[depth - 1][0] <= start and end > stack[depth - 1][0]:
                depth -= 1
            if depth == 0 or end <= stack[depth - 1][0]:
                while len(stack) > depth:
                    out.append((LEAVE, stack.pop()[1]))
                stack.append((end, item))
                out.append((ENTER, item))
                break
        else:
            lanes.append(([(end, item)], [(ENTER, item)]))
    for stack, out in lanes:
        while stack:
            out.append((LEAVE, stack.pop()[1]))
    return [out for _, out in lanes]
