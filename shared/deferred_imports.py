"""Third-party modules that a library imports at its own import but Syllabot never uses, loaded
only when first touched.

Why: redis-py 5.3 imports PyJWT (and with it cryptography's compiled bindings) when it is
imported, for a token authentication Syllabot never uses: ~15 MB of every process's memory (a
worker started at 140 MB). A stand-in module takes the name in ``sys.modules``; the first
attribute read from it imports the real module and the stand-in becomes a view of it, so code that
does use it works as if it had been imported normally. (The standard library's ``LazyLoader``
cannot do this on Python 3.11: the import statement itself reads ``__spec__``, which loads it.)
PDFs are read with PDFium (``worker.ingest.pdf_text``), which needs no cryptography: a worker holds it
only if something really uses it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

#: Imported by a dependency at its import time, used by none of Syllabot's paths.
DEFERRED = ("jwt",)

_lock = threading.RLock()  # re-entrant: a read during the real import must not wait on itself


class _Deferred(types.ModuleType):
    """Stands for a module until an attribute it does not have yet is read."""

    def __getattr__(self, attr: str) -> Any:
        # only called for attributes the stand-in lacks: __spec__, __name__ and the like are its own
        with _lock:
            if sys.modules.get(self.__name__) is self:
                del sys.modules[self.__name__]
                real = importlib.import_module(self.__name__)
                self.__dict__.update(real.__dict__)
        return getattr(sys.modules[self.__name__], attr)


def defer(name: str) -> bool:
    """Put a stand-in for ``name`` in ``sys.modules`` unless it is imported already or not
    installed; True when deferred."""
    if name in sys.modules:
        return False
    spec = importlib.util.find_spec(name)
    if spec is None:
        return False
    stand_in = _Deferred(name)
    stand_in.__spec__ = spec
    sys.modules[name] = stand_in
    return True


def defer_unused() -> None:
    """Defer every module of :data:`DEFERRED` (before redis is first imported)."""
    for name in DEFERRED:
        defer(name)
