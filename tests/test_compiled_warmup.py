"""A compilation that fails names the function, and a worker that cannot compile does not
start (``engines.compiled.agent_base.call_compiled``, ``workers.warmup``)."""

from __future__ import annotations

import pytest
from numba import njit

from engines.compiled.agent_base import KernelCompileError, call_compiled
from workers import warmup


def test_a_failed_compilation_names_the_function() -> None:
    @njit
    def broken(x: int) -> int:
        return x.no_such_attribute  # type: ignore[attr-defined,no-any-return]

    with pytest.raises(KernelCompileError, match=r"compiling .*broken failed \(TypingError"):
        call_compiled(broken, 1)


def test_a_compilation_undone_inside_numba_is_named_too() -> None:
    """What a time limit's exception left behind when numba's compiler callback swallowed it:
    numba's RuntimeError about its missing object, from a function still without a compiled
    version."""

    def search(x: int) -> int:
        raise RuntimeError("no compiled object yet for <Library 'search'>")

    class Dispatcher:
        """A numba dispatcher as it stands after such a failure: nothing compiled."""

        def __init__(self) -> None:
            self.py_func = search
            self.signatures: list[object] = []

        def __call__(self, x: int) -> int:
            return self.py_func(x)

    with pytest.raises(KernelCompileError, match=r"compiling .*search failed \(RuntimeError: no"):
        call_compiled(Dispatcher(), 1)


def test_an_error_of_compiled_code_that_ran_is_its_own() -> None:
    @njit
    def refuses(x: int) -> int:
        if x > 0:
            raise RuntimeError("x must not be positive")
        return x

    assert call_compiled(refuses, 0) == 0
    with pytest.raises(RuntimeError, match="must not be positive") as caught:
        call_compiled(refuses, 1)
    assert not isinstance(caught.value, KernelCompileError)


def test_a_worker_that_cannot_compile_stops_before_taking_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fails() -> float:
        raise KernelCompileError(
            "compiling engines.compiled.search_uct.search failed (LoweringError)"
        )

    monkeypatch.setattr(warmup, "warm_compiled", fails)
    with pytest.raises(
        SystemExit, match=r"not started: compiling engines\.compiled\.search_uct\.search"
    ):
        warmup.warm_before_work(sender=None)
