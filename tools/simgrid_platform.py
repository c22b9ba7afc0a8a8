#!/usr/bin/env python3
"""A SimGrid-style platform trace in Paje (issue 38; paper 001, section 5.2): a grid of
sites, each of clusters of hosts, written the way SimGrid traces a platform
(``--cfg=tracing/platform:yes``): every resource a container, its capacity and its use
as variables, and the network's structure as Paje links at time 0.

- Containers: ``grid`` (type L1) > ``site-S`` (L2) > ``cluster-S-C`` (L3) >
  ``host-S-C-H`` (HOST), each host with a private link ``link-S-C-H`` (LINK), each
  cluster with a ``backbone-S-C`` link and a ``router-S-C``; each site a ``router-S``
  and per cluster an ``uplink-S-C``; the grid a ``router-grid`` and per site a
  ``wan-S`` link.
- Variables: ``power`` (flop/s) and ``power_used`` on hosts, ``bandwidth`` (bytes/s) and
  ``bandwidth_used`` on links, all set with PajeSetVariable.
- Topology: host - link - backbone - router - uplink - site router - wan - grid router,
  one PajeStartLink / PajeEndLink pair per connection at time 0.
- Workload (a master-worker diffusion like the paper's Figure 9): site S starts working
  at step ``S x steps / (2 x sites)``; then at every step each of its hosts changes its
  use with probability ``change`` (busy at a random share of its power with the
  cluster's busy probability, else idle), its private link carrying a transfer while it
  is busy; backbones, uplinks and wan links carry a share of what flows below them.
  Every change happens at the step's time plus a random millisecond offset.
- Every container is destroyed at the end (time ``steps``), as SimGrid does.

    python tools/simgrid_platform.py platform.trace                       # 10,000 hosts, 2,000 steps
    python tools/simgrid_platform.py small.trace --sites 2 --clusters 2 --hosts 3 --steps 20
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Sequence

import numpy as np

try:
    from ccgformat.atomic import atomic_output
    from ccgformat.formats.paje.syntax import REFERENCE_HEADER
except ImportError:  # run as `python tools/simgrid_platform.py` from a source checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from ccgformat.atomic import atomic_output
    from ccgformat.formats.paje.syntax import REFERENCE_HEADER

__all__ = ["Platform", "write_platform"]

#: (alias, parent type, name): the zone levels, and per level its LINK and ROUTER types
CONTAINER_TYPES = [("L1", "0", "L1"), ("L2", "L1", "L2"), ("L3", "L2", "L3"), ("H", "L3", "HOST"),
                   ("K3", "L3", "LINK"), ("R3", "L3", "ROUTER"), ("K2", "L2", "LINK"), ("R2", "L2", "ROUTER"),
                   ("K1", "L1", "LINK"), ("R1", "L1", "ROUTER")]
#: (alias, container type, name, colour)
VARIABLE_TYPES = [("P", "H", "power", "1 1 1"), ("PU", "H", "power_used", "1 0 0")] + [
    (f"{prefix}{level}", f"K{level}", name, colour) for level in (3, 2, 1)
    for prefix, name, colour in (("B", "bandwidth", "1 1 1"), ("BU", "bandwidth_used", "0 0 1"))]
#: (alias, container type, start type, end type, name): the connections
LINK_TYPES = [("T3a", "L3", "H", "K3", "HOST-LINK"), ("T3b", "L3", "K3", "K3", "LINK-LINK"),
              ("T3c", "L3", "K3", "R3", "LINK-ROUTER"), ("T2a", "L2", "R3", "K2", "ROUTER-LINK"),
              ("T2b", "L2", "K2", "R2", "LINK-ROUTER"), ("T1a", "L1", "R2", "K1", "ROUTER-LINK"),
              ("T1b", "L1", "K1", "R1", "LINK-ROUTER")]

PRIVATE_BANDWIDTH = 1.25e8   # 1 Gb/s per host
BACKBONE_BANDWIDTH = 1.25e9  # 10 Gb/s
UPLINK_BANDWIDTH = 1.25e9
WAN_BANDWIDTH = 1.25e9


@dataclass(frozen=True)
class Platform:
    """The platform's shape and its workload: ``sites`` x ``clusters`` x ``hosts`` hosts,
    ``steps`` one-second time steps, each host changing with probability ``change`` per
    step once its site works."""

    sites: int = 10
    clusters: int = 10
    hosts: int = 100
    steps: int = 2000
    change: float = 0.05
    seed: int = 1

    @property
    def host_count(self) -> int:
        return self.sites * self.clusters * self.hosts


def _date(seconds: float) -> str:
    return f"{seconds:.3f}"


class _Writer:
    """Writes the records; containers are named by their alias (the name is the alias)."""

    def __init__(self, out: IO[str]):
        self.out = out
        self.links = 0
        self.records = 0

    def create(self, name: str, kind: str, parent: str) -> None:
        self.out.write(f"6 0 {name} {parent} {kind} {name}\n")
        self.records += 1

    def set(self, time: str, variable: str, container: str, value: float) -> None:
        self.out.write(f"8 {time} {container} {variable} {value:.6g}\n")
        self.records += 1

    def connect(self, kind: str, parent: str, start: str, end: str) -> None:
        key = f"k{self.links}"
        self.out.write(f"15 0 {parent} {kind} {start} topology {key}\n16 0 {parent} {kind} {end} topology {key}\n")
        self.links += 1
        self.records += 2


def _names(platform: Platform) -> dict[str, list[str]]:
    """The container names per kind, hosts in (site, cluster, host) order."""
    sites = [f"site-{s}" for s in range(platform.sites)]
    clusters = [f"cluster-{s}-{c}" for s in range(platform.sites) for c in range(platform.clusters)]
    hosts = [f"host-{s}-{c}-{h}" for s in range(platform.sites) for c in range(platform.clusters)
             for h in range(platform.hosts)]
    return {"site": sites, "cluster": clusters, "host": hosts}


def _structure(w: _Writer, platform: Platform, power: np.ndarray) -> None:
    """Containers, their constant capacities and the topology links, all at time 0."""
    w.create("grid", "L1", "0")
    w.create("router-grid", "R1", "grid")
    for s in range(platform.sites):
        site = f"site-{s}"
        w.create(site, "L2", "grid")
        w.create(f"router-{s}", "R2", site)
        w.create(f"wan-{s}", "K1", "grid")
        w.set("0", "B1", f"wan-{s}", WAN_BANDWIDTH)
        w.set("0", "BU1", f"wan-{s}", 0.0)
        w.connect("T1a", "grid", f"router-{s}", f"wan-{s}")
        w.connect("T1b", "grid", f"wan-{s}", "router-grid")
        for c in range(platform.clusters):
            cluster, sc = f"cluster-{s}-{c}", f"{s}-{c}"
            w.create(cluster, "L3", site)
            w.create(f"router-{sc}", "R3", cluster)
            w.create(f"backbone-{sc}", "K3", cluster)
            w.set("0", "B3", f"backbone-{sc}", BACKBONE_BANDWIDTH)
            w.set("0", "BU3", f"backbone-{sc}", 0.0)
            w.create(f"uplink-{sc}", "K2", site)
            w.set("0", "B2", f"uplink-{sc}", UPLINK_BANDWIDTH)
            w.set("0", "BU2", f"uplink-{sc}", 0.0)
            w.connect("T3c", cluster, f"backbone-{sc}", f"router-{sc}")
            w.connect("T2a", site, f"router-{sc}", f"uplink-{sc}")
            w.connect("T2b", site, f"uplink-{sc}", f"router-{s}")
            for h in range(platform.hosts):
                host, link = f"host-{sc}-{h}", f"link-{sc}-{h}"
                w.create(host, "H", cluster)
                w.set("0", "P", host, float(power[s, c]))
                w.set("0", "PU", host, 0.0)
                w.create(link, "K3", cluster)
                w.set("0", "B3", link, PRIVATE_BANDWIDTH)
                w.set("0", "BU3", link, 0.0)
                w.connect("T3a", cluster, host, link)
                w.connect("T3b", cluster, link, f"backbone-{sc}")


def _changed(w: _Writer, time: float, variable: str, names: list[str], old: np.ndarray, new: np.ndarray) -> None:
    """Set ``variable`` where ``new`` differs from ``old`` (then ``old`` takes it)."""
    for i in np.flatnonzero(new != old).tolist():
        w.set(_date(time), variable, names[i], float(new[i]))
    old[...] = new


def _workload(w: _Writer, platform: Platform, power: np.ndarray, rng: np.random.Generator) -> None:
    """The variables' changes, step by step; each step's changes in time order."""
    shape = (platform.sites, platform.clusters, platform.hosts)
    busy_share = rng.uniform(0.3, 0.95, shape[:2])
    host_use = np.zeros(shape)
    link_use = np.zeros(shape)
    names = _names(platform)
    hosts = names["host"]
    links = [name.replace("host-", "link-", 1) for name in hosts]
    backbones = [f"backbone-{c[len('cluster-'):]}" for c in names["cluster"]]
    uplinks = [f"uplink-{c[len('cluster-'):]}" for c in names["cluster"]]
    wans = [f"wan-{s}" for s in range(platform.sites)]
    backbone_use = np.zeros(len(backbones))
    uplink_use = np.zeros(len(uplinks))
    wan_use = np.zeros(len(wans))
    begins = np.arange(platform.sites) * platform.steps // (2 * platform.sites)
    for step in range(1, platform.steps):
        working = np.broadcast_to((begins < step)[:, None, None], shape)
        moves = working & (rng.random(shape) < platform.change)
        busy = rng.random(shape) < busy_share[:, :, None]
        offset = rng.integers(1, 1000, shape) / 1000.0
        new_host = np.where(moves, np.where(busy, power[:, :, None] * rng.uniform(0.5, 1.0, shape), 0.0), host_use)
        new_link = np.where(moves, np.where(busy, PRIVATE_BANDWIDTH * rng.uniform(0.2, 0.9, shape), 0.0), link_use)
        moves &= (new_host != host_use) | (new_link != link_use)
        order = np.argsort(np.where(moves, offset, 2.0).ravel(), kind="stable")[:int(moves.sum())]
        flat_host, flat_link, flat_offset = new_host.ravel(), new_link.ravel(), offset.ravel()
        for i in order.tolist():
            time = _date(step + flat_offset[i])
            w.set(time, "PU", hosts[i], float(flat_host[i]))
            w.set(time, "BU3", links[i], float(flat_link[i]))
        host_use, link_use = new_host, new_link
        flows = link_use.sum(axis=2).ravel()
        _changed(w, step + 0.999, "BU3", backbones, backbone_use,
                 np.round(np.minimum(BACKBONE_BANDWIDTH, 0.5 * flows), -3))
        _changed(w, step + 0.999, "BU2", uplinks, uplink_use,
                 np.round(np.minimum(UPLINK_BANDWIDTH, 0.3 * backbone_use), -3))
        _changed(w, step + 0.999, "BU1", wans, wan_use,
                 np.round(np.minimum(WAN_BANDWIDTH, 0.5 * uplink_use.reshape(platform.sites, -1).sum(axis=1)), -3))


def _destroy(w: _Writer, platform: Platform) -> None:
    end = str(platform.steps)
    for s in range(platform.sites):
        for c in range(platform.clusters):
            sc = f"{s}-{c}"
            for h in range(platform.hosts):
                w.out.write(f"7 {end} H host-{sc}-{h}\n7 {end} K3 link-{sc}-{h}\n")
            w.out.write(f"7 {end} K3 backbone-{sc}\n7 {end} R3 router-{sc}\n7 {end} L3 cluster-{sc}\n"
                        f"7 {end} K2 uplink-{sc}\n")
        w.out.write(f"7 {end} R2 router-{s}\n7 {end} K1 wan-{s}\n7 {end} L2 site-{s}\n")
    w.out.write(f"7 {end} R1 router-grid\n7 {end} L1 grid\n")


def write_platform(path: str | Path, platform: Platform = Platform()) -> dict[str, int]:
    """Write ``platform``'s trace to ``path`` (atomically); returns what it holds."""
    rng = np.random.default_rng(platform.seed)
    power = 1e9 * (1 + rng.integers(0, 4, (platform.sites, platform.clusters)))
    with atomic_output(path) as temporary, open(temporary, "w", encoding="utf-8", buffering=1 << 20) as out:
        out.write(REFERENCE_HEADER)  # lang-paje's: field orders as the records below write them
        for alias, parent, name in CONTAINER_TYPES:
            out.write(f"0 {alias} {parent} {name}\n")
        for alias, parent, name, colour in VARIABLE_TYPES:
            out.write(f'1 {alias} {parent} {name} "{colour}"\n')
        for alias, parent, start, end, name in LINK_TYPES:
            out.write(f"4 {alias} {parent} {start} {end} {name}\n")
        w = _Writer(out)
        _structure(w, platform, power)
        _workload(w, platform, power, rng)
        _destroy(w, platform)
    return {"hosts": platform.host_count, "links": w.links, "records": w.records}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="the Paje file to write")
    defaults = Platform()
    for name, help_text in (("sites", "sites of the grid"), ("clusters", "clusters per site"),
                            ("hosts", "hosts per cluster"), ("steps", "one-second time steps"),
                            ("seed", "random seed")):
        parser.add_argument(f"--{name}", type=int, default=getattr(defaults, name),
                            help=f"{help_text} (default {getattr(defaults, name)})")
    parser.add_argument("--change", type=float, default=defaults.change,
                        help=f"probability that a working host changes its use at a step (default {defaults.change})")
    args = parser.parse_args(argv)
    if min(args.sites, args.clusters, args.hosts, args.steps) < 1 or not 0 <= args.change <= 1:
        parser.error("--sites, --clusters, --hosts and --steps must be >= 1 and --change within 0..1")
    written = write_platform(args.out, Platform(args.sites, args.clusters, args.hosts, args.steps, args.change,
                                                args.seed))
    print(f"{args.out}: {written['hosts']:,} hosts, {written['links']:,} topology links, "
          f"{written['records']:,} records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
