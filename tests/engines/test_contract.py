"""The engine contract (``engines.contract``) is one module where every member is documented:
a game's author reads it, and the docs' reference is generated from it."""

from __future__ import annotations

import inspect

import engines.contract as contract
from engines import core


def test_every_member_is_named_in_the_module_docstring() -> None:
    doc = contract.__doc__ or ""
    missing = [name for name in contract.__all__ if f"``{name}``" not in doc]
    assert missing == []


def test_every_class_and_function_member_has_its_own_docstring() -> None:
    undocumented = []
    for name in contract.__all__:
        member = getattr(contract, name)
        if inspect.isclass(member) or inspect.isfunction(member):
            own = member.__dict__.get("__doc__") if inspect.isclass(member) else member.__doc__
            if not (own or "").strip():
                undocumented.append(name)
    assert undocumented == []


def test_every_method_a_game_must_write_is_documented() -> None:
    # The abstract methods are what an author writes: each has a docstring on the method or
    # is explained in the module docstring's entry for ``State``.
    doc = contract.__doc__ or ""
    for cls in (contract.Game, contract.State):
        for name in sorted(getattr(cls, "__abstractmethods__", ())):
            method = getattr(cls, name)
            assert (method.__doc__ or "").strip() or f"``{name}``" in doc, f"{cls.__name__}.{name}"


def test_the_contract_reexports_the_engines_own_objects() -> None:
    # One set of classes: a package's Game subclass is the Game the registry checks against.
    assert contract.Game is core.Game and contract.State is core.State
    assert contract.AgentType is core.AgentType and contract.Ending is core.Ending
    assert isinstance(contract.CONTRACT_VERSION, int) and contract.CONTRACT_VERSION >= 1
