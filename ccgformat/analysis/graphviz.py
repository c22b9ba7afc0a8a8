"""Graph layout and drawing by Graphviz (the Debian package ``graphviz``): a DOT text laid
out by one of its programs and written as SVG, atomically.

Graphviz rather than a layout of our own or networkx: it lays out and draws (shapes,
partial fills, HTML-like legends, SVG) from the same DOT text we hand to users, and its
programs cover the graphs a trace gives. `layout_program` picks one by the graph's shape:
a platform's routes form a tree, which ``twopi`` draws radially from its centre without
crossings (the grid's router in the middle, clusters outside); denser graphs (message
traffic) get the force-directed layouts paper 001 uses (section 3.3), ``neato`` (stress
majorization) for small ones and ``sfdp`` (multilevel, Barnes-Hut-like) for thousands of
nodes. Splines are left out: routing them around the nodes takes neato minutes on a few
hundred nodes, straight lines take a tenth of a second.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..atomic import atomic_output
from ..errors import CcgError, MissingToolError

__all__ = ["LAYOUTS", "NEATO_NODES", "layout_program", "render"]

#: Graphs of up to this many nodes are laid out by ``neato``, larger ones by ``sfdp``.
NEATO_NODES = 400
#: The Graphviz layout programs that draw an undirected graph.
LAYOUTS = ("twopi", "neato", "sfdp", "fdp", "circo", "dot")


def layout_program(nodes: int, edges: int) -> str:
    """The Graphviz program for a graph of ``nodes`` nodes and ``edges`` edges: ``twopi``
    for a tree or forest (fewer edges than nodes), else ``neato`` or, beyond `NEATO_NODES`
    nodes, ``sfdp``."""
    if edges < nodes:
        return "twopi"
    return "neato" if nodes <= NEATO_NODES else "sfdp"


def render(dot: str, target: str | os.PathLike[str], program: str, output: str = "svg") -> Path:
    """Lay ``dot`` out with the Graphviz ``program`` and write it to ``target`` in format
    ``output`` (atomically). `MissingToolError` when Graphviz is not installed, `CcgError`
    when it fails."""
    found = shutil.which(program)
    if found is None:
        raise MissingToolError(program, "graphviz", "drawing a topology graph")
    with atomic_output(target) as temporary:
        done = subprocess.run([found, f"-T{output}", "-o", str(temporary)], input=dot.encode("utf-8"),
                              capture_output=True, check=False)
        if done.returncode != 0:
            raise CcgError(f"{program} failed (status {done.returncode}) drawing {target}: "
                           f"{done.stderr.decode('utf-8', 'replace').strip()[-500:]}")
    return Path(target)
