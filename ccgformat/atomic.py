"""Atomic output, for every file or folder ccgformat writes: it is made under a temporary
name beside the target, flushed to disk and renamed over the target, so the target
appears complete or not at all. The result has the permissions of a plainly created file
or folder (the umask applies), not the private ones of a temporary.

A target that is a symbolic link is written through it: the file or folder it names is
replaced, beside which the temporary is made, and the link stays. A target that exists
must be what is written: a regular file for a file, a folder for a folder. Anything else
(a device such as /dev/null, a FIFO, a socket; a folder where a file is written) is
refused, not replaced: the rename would put a plain file in its place (as root,
/dev/null itself) - unless the writer streams (``streams``: a command's answer), which
then writes into it.

A file is flushed with one fsync. A folder (an OTF2 export: two files per location) is
flushed with one ``syncfs`` of the file system that holds it, where the platform has it
(Linux), which writes every file and folder below it in one pass; elsewhere every file in
it is fsynced in turn. Either way everything is on disk before the rename."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import shutil
from pathlib import Path
from typing import Callable, Iterator

__all__ = ["AtomicOutput", "atomic_output"]


class AtomicOutput:
    """A temporary file (or empty folder, with ``folder``) ``path`` beside ``target``:
    `commit` puts it in the target's place, `discard` removes it."""

    def __init__(self, target: str | os.PathLike[str], *, folder: bool = False):
        self.target = Path(target)
        if self.target.is_symlink():  # written through the link, which stays
            self.target = Path(os.path.realpath(self.target))
        self.folder = folder
        parent = self.target.parent
        if not parent.is_dir():
            raise FileNotFoundError(2, "the target's folder does not exist", str(parent))
        if self.target.exists() and not (self.target.is_dir() if folder else self.target.is_file()):
            what = "folder" if folder else "regular file"
            raise FileExistsError(errno.EEXIST, f"the target exists and is not a {what}; it is never replaced",
                                  str(self.target))
        while True:
            self.path = parent / f".{self.target.name}.{os.urandom(4).hex()}.tmp"  # not secrets: it loads OpenSSL
            try:  # created with the mode of a plain file or folder, so the umask applies
                if folder:
                    os.mkdir(self.path, 0o777)
                else:
                    os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                break
            except FileExistsError:
                continue

    def commit(self) -> Path:
        """Flush the temporary to disk and rename it over the target (a folder target is
        replaced); on failure the temporary is removed."""
        try:
            if self.folder:
                _flush_folder(self.path)
            else:
                _fsync(self.path)
            if self.folder and self.target.is_dir():
                shutil.rmtree(self.target)
            os.replace(self.path, self.target)
        except BaseException:
            self.discard()
            raise
        _fsync(self.target.parent)
        return self.target

    def discard(self) -> None:
        """Remove the temporary; nothing appears under the target's name."""
        if self.path.is_dir() and not self.path.is_symlink():
            shutil.rmtree(self.path, ignore_errors=True)
        else:
            self.path.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_output(target: str | os.PathLike[str], *, folder: bool = False, streams: bool = False
                  ) -> Iterator[Path]:
    """The temporary path of an `AtomicOutput`, committed when the block ends without an
    error and discarded otherwise; with ``streams``, a target file that is a device or a
    FIFO (``/dev/stdout``, ``/dev/null``) itself, to be written into (what went into a
    stream is not taken back)."""
    if streams and not folder and _special(Path(target)):
        yield Path(target)
        return
    output = AtomicOutput(target, folder=folder)
    try:
        yield output.path
    except BaseException:
        output.discard()
        raise
    output.commit()


def _special(path: Path) -> bool:
    """Whether ``path`` (through links) exists as neither a regular file nor a folder: a
    device, a FIFO or a socket."""
    return path.exists() and not path.is_file() and not path.is_dir()


def _flush_folder(folder: Path) -> None:
    """Everything in ``folder`` and below on disk: one ``syncfs``, else an fsync per file."""
    syncfs = _syncfs()
    if syncfs is None:
        for name in _files(folder):
            _fsync(name)
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        if syncfs(descriptor) != 0:
            error = ctypes.get_errno()
            raise OSError(error, os.strerror(error), str(folder))
    finally:
        os.close(descriptor)


@functools.lru_cache(maxsize=1)
def _syncfs() -> Callable[[int], int] | None:
    """The C library's ``syncfs`` (Linux), None where there is none."""
    try:
        function = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int]
    function.restype = ctypes.c_int
    return function  # type: ignore[no-any-return]


def _files(folder: Path) -> Iterator[Path]:
    """The regular files in ``folder`` and below (not symbolic links)."""
    for root, _, names in os.walk(folder):
        for name in names:
            path = Path(root) / name
            if not path.is_symlink():
                yield path


def _fsync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
