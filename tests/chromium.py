"""Headless Chromium for the tests that load our output in a browser (speedscope on the
Chrome exports, the SVG pictures): its command line and the console messages it logs."""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["console_messages", "headless"]

_CONSOLE = re.compile(r':CONSOLE[:(]\d+\)?\] "(.*)", source: ')


def headless(chromium: str, profile: Path, *args: str) -> list[str]:
    """The command running ``chromium`` headless with ``args``, its profile in ``profile``
    and its console logged on stderr (`console_messages`)."""
    command = [chromium, "--headless", "--disable-gpu", "--enable-logging=stderr", "--v=0",
               f"--user-data-dir={profile}", *args]
    if os.geteuid() == 0:
        command.insert(1, "--no-sandbox")   # Chromium refuses to run as root with its sandbox
    return command


def console_messages(stderr: str) -> list[str]:
    """The console messages in Chromium's stderr (`headless` logs them there)."""
    return [m.group(1) for m in map(_CONSOLE.search, stderr.splitlines()) if m]
