"""Where the real trace corpus is: ``$CCG_CORPUS``, else ``../shared/traces`` next to the project."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def corpus_root() -> Path:
    return Path(os.environ.get("CCG_CORPUS", ROOT.parent / "shared" / "traces"))


def corpus_path(*parts: str) -> Path:
    """A path inside the corpus; skips the test when it is absent."""
    path = corpus_root().joinpath(*parts)
    if not path.exists():
        pytest.skip(f"trace corpus not available: {path} (set CCG_CORPUS to its folder)")
    return path


def require_tool(name: str) -> str:
    """The full path of a reference tool; skips the test when it is not installed."""
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"reference tool {name!r} is not installed")
    return found
