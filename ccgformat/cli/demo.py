"""`ccg demo`: the whole job on the small trace that ships with the package - convert it,
show its summary and profile, draw its overview, and say what to try next.

The trace (``ccgformat/data/demo``) is an OTF2 archive of a made-up stencil solver on 4
MPI ranks, written by the project's own OTF2 exporter (tools/make_demo_trace.py makes it).
"""

from __future__ import annotations

import argparse
import json
import shlex
import tempfile
from pathlib import Path

from ..archive import open_archive
from ..formats import convert
from .info import info_document, info_text
from .queries import profile_text

__all__ = ["DEMO_TRACE", "add_demo"]

#: the shipped OTF2 archive (a folder holding ``traces.otf2``)
DEMO_TRACE = Path(__file__).resolve().parent.parent / "data" / "demo"
#: the overview the demo draws: time slices and states (as ``ccg overview``)
SLICES, STATES = 30, "group"


def add_demo(p: argparse.ArgumentParser) -> None:
    """The ``demo`` command's options."""
    p.description = ("Convert the small OTF2 trace that ships with ccgformat (a stencil solver on 4 MPI "
                     "ranks) into DIR/demo.ccg, print its summary (as 'ccg info') and profile (as 'ccg "
                     "profile'), draw its overview into DIR/overview.svg (as 'ccg overview') and list "
                     "commands to try next. Needs the 'otf2' extra to read OTF2.")
    p.add_argument("--out", metavar="DIR", help="folder for the archive and the picture, made if missing "
                                                "(default: a new temporary folder, kept)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: the paths, the summary and the profile")
    p.set_defaults(run=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    folder = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="ccg-demo-"))
    folder.mkdir(parents=True, exist_ok=True)
    archive_path, picture = folder / "demo.ccg", folder / "overview.svg"
    convert(DEMO_TRACE, archive_path)
    with open_archive(archive_path) as archive:
        info = info_document(archive)
        profile = archive.profile()
        archive.overview(SLICES, states=STATES).save(picture)
    if args.json:
        print(json.dumps({"archive": str(archive_path), "overview": str(picture), "info": info,
                          "profile": profile.to_json()}))
        return 0
    trace_bytes = sum(path.stat().st_size for path in DEMO_TRACE.rglob("*") if path.is_file())
    print(f"ccg demo: converted the demo trace ({DEMO_TRACE}: OTF2, {trace_bytes:,} bytes, "
          f"{info['events']:,} events) into {archive_path} ({info['file_bytes']:,} bytes, "
          f"{trace_bytes / info['file_bytes']:.1f} times smaller, lossless)")
    archive_arg, folder_arg = shlex.quote(str(archive_path)), shlex.quote(str(folder))
    print(f"\n$ ccg info {archive_arg}\n{info_text(info)}")
    print(f"\n$ ccg profile {archive_arg}\n{profile_text(profile)}")
    print(f"\nThe overview ({SLICES} time slices, states = region groups) is in {picture}; open it in a browser.")
    print("\nTry next:")
    for command in (f"ccg cat {archive_arg} --location 0 | head",
                    f"ccg profile {archive_arg} --location 3 --json",
                    f"ccg messages {archive_arg} --matrix",
                    f"ccg timeline {archive_arg} --width 800 --svg {folder_arg}/timeline.svg",
                    f"ccg overview {archive_arg} --states group --curve",
                    f"ccg export {archive_arg} {folder_arg}/demo.json.gz --to chrome   # for Perfetto UI",
                    f"in Jupyter: import ccgformat; ccgformat.open({str(archive_path)!r})   # shows its summary"):
        print(f"  {command}")
    return 0
