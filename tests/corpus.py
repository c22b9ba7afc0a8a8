"""The real trace corpus and the reference tools for the tests (where the corpus is:
tools/corpus_root.py). A missing corpus file or tool skips the test, saying why, unless
``CCG_REQUIRE_CORPUS=1`` (set by .ci/run): then it fails the test."""

from __future__ import annotations

import importlib
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from corpus_root import corpus_root  # noqa: E402

__all__ = ["corpus_root", "corpus_path", "corpus_available", "require_tool", "optional_tool", "require_module",
           "require_installed"]


def required() -> bool:
    """Whether a missing corpus or tool fails the test (CI) instead of skipping it."""
    return os.environ.get("CCG_REQUIRE_CORPUS") == "1"


def _missing(reason: str) -> NoReturn:
    if required():
        pytest.fail(f"{reason}, and CCG_REQUIRE_CORPUS=1 requires it")
    pytest.skip(reason, allow_module_level=True)


def corpus_path(*parts: str) -> Path:
    """A path inside the corpus; skips the test when it is absent."""
    path = corpus_root().joinpath(*parts)
    if not path.exists():
        _missing(f"trace corpus not available: {path} (set CCG_CORPUS to its folder)")
    return path


def corpus_available() -> bool:
    """Whether the corpus folder exists, for a test whose corpus part is optional."""
    if not corpus_root().is_dir() and required():
        _missing(f"trace corpus not available: {corpus_root()}")
    return corpus_root().is_dir()


def require_tool(name: str) -> str:
    """The full path of a reference tool; skips the test when it is not installed."""
    found = shutil.which(name)
    if found is None:
        _missing(f"reference tool {name!r} is not installed")
    return found


def optional_tool(name: str) -> str | None:
    """The full path of a reference tool, or None, for a test whose check with it is optional."""
    found = shutil.which(name)
    if found is None and required():
        _missing(f"reference tool {name!r} is not installed")
    return found


def require_installed(path: Path, reason: str) -> Path:
    """A file or folder that tools/install-reference-tools installs (the npm viewers);
    skips the test when it is absent."""
    if not path.exists():
        _missing(reason)
    return path


def require_module(name: str, reason: str) -> ModuleType:
    """A reference module (the ``otf2`` bindings); skips the test when it cannot be imported."""
    try:
        return importlib.import_module(name)
    except ImportError:
        _missing(reason)
