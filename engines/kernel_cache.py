"""numba's on-disk cache, made to notice changes in everything a compiled function calls.

numba keys a cached function on its own bytecode and checks its own file only: a search whose
kernel changed would load stale machine code. :func:`track` gives each compiled function of a
module a cache key that also covers what it reaches: the compiled functions it calls, found by
walking the names its code reads (in its module or through another module, ``kernel.apply``),
and theirs in turn; the source of each intrinsic among them (``engines.kernel_bits``); and the
constants and tables those names hold. Nothing is listed by hand, so nothing can be left off:
an edit anywhere below a function recompiles it, and an unchanged tree loads from the cache.

The key is computed when numba first consults the cache (a function's first call in a
process), once every module it reaches has been imported. It hashes objects in memory and the
source of intrinsics; no other file is read.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Iterator
from types import CodeType, ModuleType
from typing import Any

import numpy as np
from numba.core.caching import FunctionCache
from numba.core.extending import _Intrinsic
from numba.core.registry import CPUDispatcher


class _DigestCache(FunctionCache):
    """numba's function cache with one more element in every index key: the digest of what
    the function reaches, computed on first use."""

    def __init__(self, dispatcher: CPUDispatcher) -> None:
        super().__init__(dispatcher.py_func)
        self._dispatcher = dispatcher
        self._digest: str | None = None

    def _index_key(self, sig: Any, codegen: Any) -> Any:
        if self._digest is None:
            self._digest = function_digest(self._dispatcher)
        return (*super()._index_key(sig, codegen), self._digest)


def _code_bytes(code: CodeType) -> bytes:
    parts = [code.co_code, repr(code.co_names).encode()]
    for const in code.co_consts:
        parts.append(_code_bytes(const) if isinstance(const, CodeType) else repr(const).encode())
    return b"".join(parts)


def _names(code: CodeType) -> Iterator[str]:
    """Every global or attribute name ``code`` (and the code nested in it) reads."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _names(const)


def _constant(value: Any) -> bytes | None:
    """The bytes of a value compiled code may bake in, or None for anything else."""
    if isinstance(value, np.ndarray):
        return repr((value.dtype.str, value.shape)).encode() + value.tobytes()
    if isinstance(value, bool | int | float | str | np.generic):
        return repr(value).encode()
    if isinstance(value, tuple):
        parts = [_constant(item) for item in value]
        if all(part is not None for part in parts):
            return b"(" + b",".join(part for part in parts if part is not None) + b")"
    return None


def _reached(name: str, value: Any, names: set[str]) -> Iterator[tuple[str, Any]]:
    """``value`` as read under ``name``; for a module, each of its attributes the code reads
    by a name it also uses (``kernel.apply`` reads ``apply`` of ``kernel``)."""
    if isinstance(value, ModuleType):
        for attribute in sorted(names):
            if attribute in vars(value):
                yield f"{value.__name__}.{attribute}", vars(value)[attribute]
    else:
        yield name, value


def _qualified(function: Any) -> str:
    return f"{function.__module__}.{function.__qualname__}"


def _walk(dispatcher: CPUDispatcher) -> dict[str, bytes]:
    """What ``dispatcher`` reaches, by qualified name: each compiled function (itself
    included) with its code, the names it calls and the constants it reads, and each
    intrinsic with its source."""
    parts: dict[str, bytes] = {}
    pending = [dispatcher]
    while pending:
        function = pending.pop()
        py_func = function.py_func
        own = _qualified(py_func)
        if own in parts:
            continue
        code = py_func.__code__
        chunks = [_code_bytes(code)]
        names = set(_names(code))
        scope = py_func.__globals__
        for name in sorted(names):
            if name not in scope:
                continue  # a builtin or an attribute name
            for label, value in _reached(name, scope[name], names):
                if isinstance(value, CPUDispatcher):
                    chunks.append(f"call {label}={_qualified(value.py_func)}".encode())
                    pending.append(value)
                elif isinstance(value, _Intrinsic):
                    # The intrinsic wraps its definition (``__wrapped__``), which
                    # ``inspect`` follows to the source.
                    source = _qualified(value)
                    chunks.append(f"intrinsic {label}={source}".encode())
                    parts[source] = inspect.getsource(value).encode()
                else:
                    constant = _constant(value)
                    if constant is not None:
                        chunks.append(f"{label}=".encode() + constant)
        parts[own] = b"\n".join(chunks)
    return parts


def reached(dispatcher: CPUDispatcher) -> list[str]:
    """The qualified names of the compiled functions and intrinsics ``dispatcher`` reaches
    (itself included): what its cache key covers."""
    return sorted(_walk(dispatcher))


def function_digest(dispatcher: CPUDispatcher) -> str:
    """A hash of ``dispatcher``'s code and of everything it reaches: the compiled functions
    it calls (through any depth and any module), the intrinsics among them by their source,
    and the constants and arrays they read."""
    hasher = hashlib.sha256()
    for name, part in sorted(_walk(dispatcher).items()):
        hasher.update(name.encode() + b"\0" + part + b"\0")
    return hasher.hexdigest()


def track(namespace: dict[str, Any]) -> None:
    """Key the on-disk cache of every compiled function defined in ``namespace`` (a module's
    ``globals()``, at its end) on :func:`function_digest`: an edit to anything it reaches
    recompiles it."""
    own = namespace["__name__"]
    for value in namespace.values():
        if isinstance(value, CPUDispatcher) and value.py_func.__module__ == own:
            # The dispatcher's cache slot, as ``Dispatcher.enable_caching`` fills it.
            setattr(value, "_cache", _DigestCache(value))  # noqa: B010
