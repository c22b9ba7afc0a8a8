"""Analyses of papers 001 and 003 on the archive's tables and messages: the topology graph
(`topology`: metrics over the platform hierarchy and its network, paper 001).

`Archive.topology` is registered here (`ccgformat.archive.register_query`), as the
queries are; the archive layer never imports this package.
"""

from ..archive import register_query
from .topology import Topology, topology

__all__ = ["Topology", "topology"]

register_query("topology", topology)
