"""The cffi build script of the native core (API mode, out of line).

``pip install`` runs it through ``cffi_modules`` (setup.py) and compiles every ``*.c``
file of this folder into the extension ``ccgformat._native._ccg``; each component
declares what Python may call in its own ``*.cdef`` file, concatenated here in name
order after the shared ``ccg.cdef``. ``CCG_NATIVE_CFLAGS`` adds compiler flags (the AddressSanitizer build uses it).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent

ffibuilder = FFI()
# ccg.cdef first: the other components' declarations use its types
ffibuilder.cdef("\n".join(path.read_text() for path in sorted(HERE.glob("*.cdef"),
                                                              key=lambda path: (path.name != "ccg.cdef", path.name))))
ffibuilder.set_source(
    "ccgformat._native._ccg",
    '#include "ccg.h"\n' + "".join(f'#include "{path.name}"\n' for path in sorted(HERE.glob("*.h"))
                                   if path.name != "ccg.h"),
    sources=[str(path.relative_to(HERE.parent.parent)) for path in sorted(HERE.glob("*.c")) if path.name != "_ccg.c"],
    include_dirs=[str(HERE)],
    libraries=["dl"],
    extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter",
                        *shlex.split(os.environ.get("CCG_NATIVE_CFLAGS", ""))],
    extra_link_args=shlex.split(os.environ.get("CCG_NATIVE_LDFLAGS", "")),
)

if __name__ == "__main__":
    # a development build in place: ``python -m ccgformat._native.build`` from the checkout
    ffibuilder.compile(tmpdir=str(HERE.parent.parent), verbose=False)
