"""Where the trace corpus is, for the tools: ``$CCG_CORPUS``, else ``../shared/traces``."""

from __future__ import annotations

import os
from pathlib import Path


def corpus_root() -> Path:
    return Path(os.environ.get("CCG_CORPUS", Path(__file__).resolve().parent.parent.parent / "shared" / "traces"))
