"""The engine on the synthetic SPMD, random and single-function traces of tools/synth.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ccgformat import Builder, Params

from .test_graph_lossy import check_location

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import synth  # noqa: E402


@pytest.mark.parametrize("pattern", synth.PATTERNS)
@pytest.mark.parametrize("params", [Params(branching=8, search_length=50),
                                    Params(abs_dev=1000, rel_dev=0.05, rel_size=0.1, rel_metric=0.05,
                                           branching=20, search_length=1000)],
                         ids=["lossless", "lossy"])
def test_synthetic_traces_round_trip(pattern, params):
    definitions, events = synth.synthesize(3, 4000, jitter=0.3, seed=3, pattern=pattern)
    builder = Builder(params, definitions)
    for location in range(3):
        for batch in events(location):
            builder.add(location, batch)
    graph = builder.finish()
    for location in range(3):
        original = [e for batch in events(location) for e in batch.rows()]
        rebuilt = [e for batch in graph.location(location).events() for e in batch.rows()]
        if params.lossless:
            assert rebuilt == original
        else:
            check_location(original, rebuilt, params)
    assert graph.metrics.r_nodes > 1


def test_regular_spmd_compresses_far_better_than_jittered():
    ratios = {}
    for jitter in (0.0, 0.3):
        definitions, events = synth.synthesize(4, 20_000, jitter=jitter, seed=1)
        builder = Builder(Params(), definitions)
        for location in range(4):
            for batch in events(location):
                builder.add(location, batch)
        ratios[jitter] = builder.finish().metrics.r_nodes
    assert ratios[0.0] > 100 * ratios[0.3]
