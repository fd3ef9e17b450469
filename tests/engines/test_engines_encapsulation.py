"""Engine modules read another module's objects only through their public API.

A name with a leading underscore (``state._code``, ``s._forced``) belongs to the module that
defines it: the check parses every module under ``engines/`` and fails on any ``x._name`` whose
``_name`` that module never defines itself (as ``self._name = ...``, a ``__slots__`` entry, a
method, or a class attribute).
"""

from __future__ import annotations

import ast

from repo_paths import REPO

ENGINES = REPO / "engines"


def _defined_private_names(tree: ast.Module) -> set[str]:
    """Private attribute names a module defines on its own classes and instances."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(item.name)
                targets: list[ast.expr] = []
                if isinstance(item, ast.Assign):
                    targets = item.targets
                elif isinstance(item, ast.AnnAssign):
                    targets = [item.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        names.add(target.id)
                        if target.id == "__slots__" and item.value is not None:
                            for elt in ast.walk(item.value):
                                if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                                    names.add(elt.value)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            names.add(node.attr)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def foreign_private_reads(source: str, filename: str) -> list[str]:
    """``file:line x._name`` for every private attribute the module uses but does not define."""
    tree = ast.parse(source, filename)
    own = _defined_private_names(tree)
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and node.attr not in own
        ):
            found.append(f"{filename}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_engine_module_reads_private_attributes_of_another() -> None:
    modules = sorted(ENGINES.rglob("*.py"))
    assert len(modules) > 10  # the walk did find the package
    found = [
        hit
        for path in modules
        for hit in foreign_private_reads(path.read_text(), str(path.relative_to(ENGINES.parent)))
    ]
    assert found == []


def test_the_check_flags_a_read_of_another_modules_state() -> None:
    # What engines/alveoles/heuristics.py did before the state had a read API.
    source = "def cascade(state):\n    code = state._code[:]\n    return code, s._forced\n"
    assert foreign_private_reads(source, "heuristics.py") == [
        "heuristics.py:2 state._code",
        "heuristics.py:3 s._forced",
    ]


def test_the_check_allows_a_class_reading_its_own_fields() -> None:
    source = (
        "class State:\n"
        "    __slots__ = ('_code', 'game')\n"
        "    def clone(self):\n"
        "        new = State.__new__(State)\n"
        "        new._code = self._code[:]\n"
        "        new._settle()\n"
        "        return new\n"
        "    def _settle(self):\n"
        "        self._seen = 0\n"
    )
    assert foreign_private_reads(source, "rules.py") == []
