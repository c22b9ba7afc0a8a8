"""Imports flow one way (DESIGN.md, package layout): cli -> parallel -> analysis -> formats/query ->
archive -> graph -> model; figures uses nothing above the model; nothing imports cli. Every import
of every module (inside functions too) is read with ast, relative ones resolved."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ccgformat"
#: The bottom of the package: what every layer may import.
BOTTOM = {"ccgformat", "ccgformat._version", "ccgformat.aggregate_model", "ccgformat.atomic", "ccgformat.deferred", "ccgformat.errors", "ccgformat.extras", "ccgformat.bulkstep", "ccgformat.model",
          "ccgformat.ordering", "ccgformat.params"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports_of(path: Path) -> set[str]:
    """The ccgformat modules ``path`` imports: ``from X import y`` counts X, and X.y when
    that is a module; ``Deferred("X", "f")`` (imported at its first call) counts X."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[:len(base) - node.level + 1] if node.level else []
            source = ".".join(base + ([node.module] if node.module else []))
            found.add(source)
            found.update(f"{source}.{alias.name}" for alias in node.names if is_module(f"{source}.{alias.name}"))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Deferred":
            found.add(node.args[0].value)
    return {module for module in found if module == "ccgformat" or module.startswith("ccgformat.")}


GRAPH = {module_name(path): imports_of(path) for path in sorted(PACKAGE.rglob("*.py"))}


def within(module: str, *packages: str) -> bool:
    return any(module == f"ccgformat.{p}" or module.startswith(f"ccgformat.{p}.") for p in packages)


def offences(importers: tuple[str, ...], forbidden) -> list[str]:
    return sorted(f"{module} imports {target}" for module, targets in GRAPH.items() if within(module, *importers)
                  for target in targets if forbidden(target))


def test_the_imports_are_read():
    """The reader sees relative, absolute, nested and module-valued imports."""
    assert "ccgformat.graph.walk" in GRAPH["ccgformat.archive.reader"]
    assert "ccgformat.formats.chrome" in GRAPH["ccgformat.formats"]        # from . import chrome as _chrome
    assert "ccgformat._native.timeline" in GRAPH["ccgformat.query.timeline_walk"]  # inside a function
    assert "ccgformat.backends" in GRAPH["ccgformat.query.profile_engine"]       # from .. import backends
    assert "ccgformat.archive" in GRAPH["ccgformat.query"]
    assert "ccgformat.formats.otf2.reader" in GRAPH["ccgformat.formats.otf2"]  # Deferred("ccgformat.formats.otf2.reader", ...)


@pytest.mark.parametrize("importers, forbidden, why", [
    (("archive",), lambda m: within(m, "query", "formats", "cli", "analysis", "figures", "interop"),
     "the archive layer never imports what sits above it (queries are registered from above)"),
    (("graph",), lambda m: within(m, "archive", "query", "formats", "cli"), "graph never imports archive"),
    (("formats",), lambda m: within(m, "archive") and m != "ccgformat.archive",
     "formats use the archive's public surface (ccgformat.archive) only"),
    (("figures",), lambda m: m not in BOTTOM and not within(m, "figures"),
     "figures imports nothing of ccgformat above the model"),
    (("archive", "graph", "query", "formats", "figures", "_native", "parallel"), lambda m: within(m, "cli"),
     "nothing imports cli"),
    (("archive", "graph", "query", "formats", "figures", "_native", "interop", "analysis"),
     lambda m: within(m, "parallel"), "only the command line imports parallel (under --mpi)"),
    (("query",), lambda m: within(m, "formats"), "query and formats are side by side"),
    (("archive", "graph", "query", "formats", "figures", "_native"), lambda m: within(m, "interop"),
     "interop sits above the archive, the queries and the formats (it registers the table methods)"),
    (("formats",), lambda m: within(m, "query"), "query and formats are side by side"),
    (("archive", "graph", "query", "formats", "figures", "_native", "interop"), lambda m: within(m, "analysis"),
     "analysis sits above the queries and the formats (it registers Archive.topology)"),
    (("analysis",), lambda m: within(m, "cli", "interop"), "analysis sits below the command line"),
])
def test_imports_flow_one_way(importers, forbidden, why):
    assert offences(importers, forbidden) == [], why


def test_query_results_are_exported_from_the_package_root():
    """Every result type an archive query returns can be named as ``ccgformat.X``."""
    import ccgformat
    vector = PACKAGE.parent / "spec" / "vectors" / "metric_integrals.ccg"
    with ccgformat.open(vector) as archive:
        first, last = archive.time_range
        results = [archive.profile(), archive.timeline(first, last + 1, 8), archive.messages(),
                   archive.aggregate(4), archive.metric_integrals(4), archive.overview(4), archive.hierarchy,
                   archive.topology()]
        for result in results:
            assert getattr(ccgformat, type(result).__name__) is type(result)
            assert type(result).__name__ in ccgformat.__all__


#: what each format reads and writes with: imported at the first call, never by detection
READERS = {f"ccgformat.formats.{fmt}.{module}" for fmt in ("otf1", "otf2", "epilog", "chrome", "paje")
           for module in ("reader", "writer", "export")}
DEMO = PACKAGE / "data" / "demo" / "traces.otf2"
VECTOR = PACKAGE.parent / "spec" / "vectors" / "metric_integrals.ccg"


def loaded_by(code: str) -> set[str]:
    """The ccgformat modules a fresh interpreter has loaded after running ``code``."""
    report = "\nimport sys\nprint(' '.join(m for m in sys.modules if m.startswith('ccgformat')))"
    done = subprocess.run([sys.executable, "-c", code + report], capture_output=True, text=True,
                          cwd=PACKAGE.parent, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def ccg(*argv: str) -> str:
    """Code running ``ccg argv`` as the command does (its exit status kept)."""
    return f"from ccgformat.cli import main\nstatus = main({list(argv)!r})\nassert status == 0, status"


@pytest.mark.parametrize("code, allowed", [
    ("import ccgformat", ()),
    (ccg("--help"), ("cli",)),
    (ccg("info", str(VECTOR)), ("cli",)),
    (ccg("convert", "-q", str(DEMO), "{out}"), ("cli", "query")),
], ids=["import", "help", "info", "convert-otf2"])
def test_a_start_loads_only_what_it_uses(code, allowed, tmp_path):
    """``import ccgformat`` and a ``ccg`` command load no reader or writer of a format they
    do not read or write, and no query, table, analysis, figure, parallel or command module
    they do not use (their imports are the start-up of every command, docs/parallel.md)."""
    if "convert" in code:
        pytest.importorskip("otf2")
    loaded = loaded_by(code.replace("{out}", str(tmp_path / "demo.ccg")))
    unused = {"query", "interop", "analysis", "figures", "cli", "parallel"} - set(allowed)
    assert sorted(m for m in loaded if within(m, *unused)) == []
    read = {"ccgformat.formats.otf2.reader"} if "convert" in code else set()
    assert sorted(loaded & READERS - read) == []
    if "cli" in allowed:  # the module of the command run, no other
        commands = {m.rsplit(".", 1)[1] for m in loaded if within(m, "cli")} - {"cli", "common", "progress", "version"}
        assert commands <= {"info" if "info" in code else "convert"}


#: the query modules that walk the rows of the aggregation and metric tables (a merge's
#: `table_rows`, a writer's `aggregation_levels`), and no other
TABLE_QUERIES = {f"ccgformat.query.{m}" for m in ("aggregate_tables", "bounds", "metric_integrals", "slice_stream",
                                                  "streaming", "table_rows", "tables", "timeline_walk")}


def test_a_query_loads_only_its_modules():
    """The query package exports its functions and registers the Archive queries without
    importing them: the rows a merge walks load the table modules only (no profile,
    timeline, messages, logical or overview, no figures)."""
    code = ("import ccgformat\n"
            "from ccgformat.archive.queries import run_query\n"
            f"with ccgformat.open({str(VECTOR)!r}) as archive:\n"
            "    first, last = archive.time_range\n"
            "    run_query('aggregation_levels', archive, None, 4)\n"
            "    run_query('table_rows', archive, first, last + 1)\n")
    loaded = loaded_by(code)
    assert sorted(m for m in loaded if within(m, "query", "figures")) == sorted({"ccgformat.query"} | TABLE_QUERIES)


def test_the_query_package_exports_functions_not_modules():
    """Every name of ``ccgformat.query.__all__`` is what its module defines, also after
    that module was imported first (importing a submodule binds its name in the package:
    no module is named like a function the package exports)."""
    code = ("import importlib, ccgformat.query.profile_query, ccgformat.query.timeline_query\n"
            "import ccgformat.query as q\n"
            "for name in q.__all__:\n"
            "    value = getattr(q, name)\n"
            "    assert not isinstance(value, type(q)), name\n"
            "    assert value is getattr(importlib.import_module(value.__module__), name), name\n"
            "assert q.profile is ccgformat.query.profile_query.profile\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent, timeout=120)
    assert done.returncode == 0, done.stderr


def test_numpy_is_imported_with_openblas_threads_asleep():
    """``import ccgformat`` imports numpy with OPENBLAS_THREAD_TIMEOUT=4 (its worker threads
    sleep instead of spinning, `idle_blas`), leaves the environment as it was, and keeps a
    value the user set."""
    code = ("import os, sys\n"
            "seen = []\n"
            "class Watch:\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name == 'numpy':\n"
            "            seen.append(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))\n"
            "sys.meta_path.insert(0, Watch())\n"
            "import ccgformat\n"
            "print(seen, os.environ.get('OPENBLAS_THREAD_TIMEOUT'))\n")
    for given, expected in ((None, "['4'] None"), ("12", "['12'] 12")):
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
        if given is not None:
            env["OPENBLAS_THREAD_TIMEOUT"] = given
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent,
                              timeout=120, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == expected


def test_archive_methods_import_their_packages_at_first_call():
    """With nothing imported but ``ccgformat``, the Archive methods of the query, table and
    analysis packages answer (each package imported at its first call), and the result
    types are the package root's."""
    code = ("import ccgformat\n"
            "assert {'Profile', 'Topology', 'query'} <= set(dir(ccgformat))\n"
            f"with ccgformat.open({str(VECTOR)!r}) as archive:\n"
            "    assert type(archive.profile()) is ccgformat.Profile\n"
            "    assert type(archive.topology()) is ccgformat.Topology\n"
            "    assert '<table' in archive._repr_html_()\n")
    loaded = loaded_by(code)
    assert {"ccgformat.query", "ccgformat.analysis", "ccgformat.interop"} <= loaded
