"""Node blocks checked where they are decoded (`archive.verify_blocks`, ``ccg verify
--mpi``): checks made on another open archive of the file, handed to the verifier when
its walk finishes, give the serial verify's problems; the verifier takes them (a problem
put into them is reported), but not those made against other definitions (it decodes
those blocks itself)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

import pytest

import ccgformat as ccg
from ccgformat.archive import SectionKind
from ccgformat.archive.layout import NODE_KINDS
from ccgformat.archive.queries import run_query
from ccgformat.archive.verify import Problem, verify
from ccgformat.archive.verify_blocks import BlockCheck, Defined, block_check

from .test_verify import json_payload, rebuild, write_synthetic

Change = Callable[[BlockCheck], BlockCheck]


def checked_elsewhere(path: Path, change: Change = lambda check: check, made: list | None = None, every: int = 1):
    """A walk for `verify` (`archive.verify.Walk`) that walks another open archive of
    ``path``, checks the node blocks it decodes there (`block_check`, as a rank of
    ``verify --mpi``), and hands over every ``every``-th of them, each through
    ``change``, when finished."""
    def walk(archive, intervals, rebuilt, *levels):
        other = ccg.open(path)
        checks: dict[int, BlockCheck] = {}
        defined = Defined.of(other.definitions)
        other.pool.on_decode = lambda entry, block: checks.setdefault(entry.offset, block_check(entry, block, defined))
        walked = run_query("verify_walk", other, intervals, rebuilt, *levels)
        other.close()

        def finish(checked):
            for check in list(checks.values())[::every]:
                checked(change(check))
            if made is not None:
                made.extend(checks.values())
            return walked
        return finish
    return walk


def _seen(check: BlockCheck) -> BlockCheck:
    return dataclasses.replace(check, problems=[*check.problems, Problem(check.entry.offset, check.entry.kind,
                                                                         "checked elsewhere")])


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("elsewhere")
    sound = write_synthetic(folder / "sound.ccg")
    fewer = rebuild(sound, folder / "fewer.ccg", json_payload(SectionKind.DEFINITIONS,
                                                                  lambda document: document["regions"].pop()))
    return {"sound": sound, "a region fewer": fewer, "tables": write_synthetic(folder / "tables.ccg", tables=True)}


@pytest.mark.parametrize("every", [1, 2], ids=["all handed over", "some left to the verifier"])
@pytest.mark.parametrize("name", ["sound", "a region fewer", "tables"])
def test_blocks_checked_elsewhere_give_the_serial_problems(archives, name, every):
    path = archives[name]
    made: list[BlockCheck] = []
    assert verify(path, walk=checked_elsewhere(path, made=made, every=every)) == verify(path)
    with ccg.open(path) as archive:  # every node block the walk reads was checked there
        walked = {entry.offset for entry in archive.sections if entry.kind in NODE_KINDS and entry.count > 50}
    assert walked and walked <= {check.entry.offset for check in made}
    if name == "a region fewer":
        assert any(problem.reason.split(": ")[-1].startswith("region") for check in made for problem in check.problems)


def test_the_verifier_takes_the_checks_made_against_its_definitions(archives):
    """A problem put into the checks handed over is reported for the blocks the verifier
    did not decode itself (those the walk alone read); checks made against other
    definitions are not taken: the verifier decodes those blocks and finds what the
    serial verify finds."""
    path = archives["sound"]
    taken = verify(path, walk=checked_elsewhere(path, _seen))
    assert taken and {problem.reason for problem in taken} == {"checked elsewhere"}
    other = checked_elsewhere(path, lambda check: dataclasses.replace(_seen(check), defined=Defined(1, 1, 1)))
    assert verify(path, walk=other) == []
