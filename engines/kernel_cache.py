"""numba's on-disk cache, made to notice changes in the modules a compiled function calls.

numba keys a cached function on its own bytecode and checks its own file only: a search whose
kernel changed would load stale machine code. :func:`track` adds a digest of the modules a
kernel module depends on (their functions' code, constants and tables) to the cache key of each
of its compiled functions, so an edit anywhere below recompiles, and an unchanged tree loads
from the cache. It hashes objects in memory: no file is read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from types import CodeType, ModuleType
from typing import Any

import numpy as np
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher


class _DigestCache(FunctionCache):
    """numba's function cache with one more element in every index key."""

    def __init__(self, py_func: Any, digest: str) -> None:
        super().__init__(py_func)
        self._digest = digest

    def _index_key(self, sig: Any, codegen: Any) -> Any:
        return (*super()._index_key(sig, codegen), self._digest)


def _code_bytes(code: CodeType) -> bytes:
    parts = [code.co_code, repr(code.co_names).encode()]
    for const in code.co_consts:
        parts.append(_code_bytes(const) if isinstance(const, CodeType) else repr(const).encode())
    return b"".join(parts)


def _namespace_digest(namespace: Mapping[str, Any], hasher: Any) -> None:
    for name in sorted(namespace):
        if name.startswith("__"):
            continue  # module metadata (its path, its docstring) is not code
        value = namespace[name]
        if isinstance(value, CPUDispatcher):
            hasher.update(name.encode() + _code_bytes(value.py_func.__code__))
        elif isinstance(value, np.ndarray):
            hasher.update(name.encode() + value.tobytes())
        elif isinstance(value, int | float | str | bool):
            hasher.update(f"{name}={value!r}".encode())


def digest(*namespaces: Mapping[str, Any]) -> str:
    """A hash of the compiled functions' code, the arrays and the constants of ``namespaces``
    (module ``globals()``), in order."""
    hasher = hashlib.sha256()
    for namespace in namespaces:
        _namespace_digest(namespace, hasher)
    return hasher.hexdigest()


def track(namespace: dict[str, Any], *dependencies: ModuleType) -> None:
    """Key the cache of every compiled function defined in ``namespace`` (a module's
    ``globals()``) on that module and ``dependencies`` as they are now."""
    key = digest(namespace, *(vars(module) for module in dependencies))
    own = namespace["__name__"]
    for value in namespace.values():
        if isinstance(value, CPUDispatcher) and value.py_func.__module__ == own:
            # The dispatcher's cache slot, as ``Dispatcher.enable_caching`` fills it.
            setattr(value, "_cache", _DigestCache(value.py_func, key))  # noqa: B010
