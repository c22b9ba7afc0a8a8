"""The section kinds as spec/format.md lists them (2.1, 2.3, 2.4), against each other and
against the kinds this reader knows: the places a second implementer reads them from must
agree (issue 36)."""

from __future__ import annotations

import re
from pathlib import Path

from ccgformat.archive.layout import NODE_KINDS, SectionKind

SPEC = (Path(__file__).resolve().parent.parent / "spec" / "format.md").read_text()


def section(heading: str) -> str:
    """The text of the spec's subsection ``heading`` (up to the next heading)."""
    start = SPEC.index(f"### {heading}\n")
    return SPEC[start:SPEC.index("\n#", start + 4)]


def kind_rows() -> list[tuple[range, str, str]]:
    """The rows of 2.4: the kinds (one or a range), the name and the rest of the row."""
    rows = []
    for line in section("2.4 Section kinds").splitlines():
        match = re.match(r"^\| (\d+)(?:-(\d+))? \| ([\w ]+) \|(.*)$", line)
        if match:
            low, high = int(match[1]), int(match[2] or match[1])
            rows.append((range(low, high + 1), match[3].strip(), match[4]))
    return rows


def test_the_kind_table_assigns_each_kind_once():
    seen: list[int] = []
    for kinds, _, _ in kind_rows():
        assert not set(kinds) & set(seen), f"kinds {kinds} overlap an earlier row"
        seen += kinds
    assert seen == list(range(65536))
    named = {name: kinds[0] for kinds, name, _ in kind_rows() if len(kinds) == 1}
    assert {kind.name: int(kind) for kind in SectionKind} == {name: kind for name, kind in named.items()
                                                               if name in SectionKind.__members__}


def test_the_minor_version_rule_names_every_kind_of_a_later_minor_version():
    """2.1's minor version: each kind that 2.4 says a minor version introduced sets it."""
    header = next(line for line in section("2.1 Header").splitlines() if line.startswith("| 10 |"))
    clauses = {int(minor): condition for minor, condition in re.findall(r"`(\d)` when (.*?)(?=, else|\|)", header)}
    for kinds, name, rest in kind_rows():
        since = re.search(r"since 1\.(\d)", rest)
        if since and name in SectionKind.__members__:
            assert name in clauses[int(since[1])], f"2.1 does not name {name} for minor version {since[1]}"


def test_the_directory_defines_first_and_count_of_every_node_block_kind():
    table = section("2.3 Footer and trailer")
    first = next(line for line in table.splitlines() if "| first |" in line)
    count = next(line for line in table.splitlines() if "| count |" in line)
    for kind in NODE_KINDS:
        assert f"`{SectionKind(kind).name}`" in first
    for name in ("AGGREGATE_LEVEL", "METRIC_LEVEL"):
        assert f"`{name}`" in first and f"`{name}`" in count
    for name in ("BUNDLE", "DICTIONARY_BUNDLE", "ROOT_TABLE", "CHECKPOINT_TABLE"):
        assert f"`{name}`" in count
