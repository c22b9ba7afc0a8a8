"""Backend selection (CCGFORMAT_BACKEND): auto, native, python; a forced native backend
that cannot load raises instead of falling back."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

#: Makes the compiled extension unimportable in the child, as on a machine without a compiler.
_HIDE_EXTENSION = ("import sys\n"
                   "class Hide:\n"
                   "    def find_spec(self, name, path=None, target=None):\n"
                   "        if name == 'ccgformat._native._ccg':\n"
                   "            raise ImportError('extension hidden by the test')\n"
                   "sys.meta_path.insert(0, Hide())\n")


def _backend(choice: str | None, *, hide: bool = False) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("CCGFORMAT_BACKEND", None)
    if choice is not None:
        env["CCGFORMAT_BACKEND"] = choice
    code = (_HIDE_EXTENSION if hide else "") + "import ccgformat; print(ccgformat.backend)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)


def _built() -> bool:
    try:
        from ccgformat._native import load
        load()
    except ImportError:
        return False
    return True


def test_python_backend_is_always_available():
    done = _backend("python")
    assert done.returncode == 0 and done.stdout.strip() == "python"


@pytest.mark.skipif(not _built(), reason="the native extension is not built here")
@pytest.mark.parametrize("choice", [None, "auto", "native", " Native "])
def test_native_backend_is_chosen_when_built(choice):
    done = _backend(choice)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "native"


def test_auto_falls_back_to_python_without_the_extension():
    done = _backend("auto", hide=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "python"


def test_forced_native_raises_without_the_extension():
    done = _backend("native", hide=True)
    assert done.returncode != 0
    assert "CCGFORMAT_BACKEND=native" in done.stderr and "ImportError" in done.stderr


def test_unknown_backend_name_is_refused():
    done = _backend("fortran")
    assert done.returncode != 0
    assert "expected one of auto, native, python" in done.stderr
