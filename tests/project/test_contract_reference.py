"""The engine contract's reference page (docs/contract.md) is the one its docstrings write, every
member it exports is documented, and the site lists the page."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from functools import cache
from types import ModuleType

import yaml
from repo_paths import REPO

import engines.contract

SCRIPT = REPO / "scripts" / "contract_reference.py"


@cache
def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("contract_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_the_committed_page_is_what_the_docstrings_write() -> None:
    page = (REPO / "docs" / "contract.md").read_text(encoding="utf-8")
    assert page == _script().reference(), (
        "docs/contract.md is stale: run .venv/bin/python scripts/contract_reference.py"
    )


def test_every_exported_name_has_its_section_and_a_docstring() -> None:
    page = (REPO / "docs" / "contract.md").read_text(encoding="utf-8")
    sections = re.findall(r"^### `(\w+)`$", page, flags=re.M)
    assert sorted(sections) == sorted(engines.contract.__all__)
    assert _script().undocumented() == []


PLANTED = """
class Thing:
    \"\"\"A thing; its `size` is said here.\"\"\"

    size: int
    colour: str
    weight: float
    \"\"\"In grams.\"\"\"

    def act(self, n: int) -> None:
        pass

    def rest(self) -> None:
        \"\"\"Does nothing.\"\"\"
"""


def test_members_without_a_docstring_are_found() -> None:
    script = _script()
    node = ast.parse(PLANTED).body[0]
    entry = script.Entry("Thing", "planted", node, "A thing; its `size` is said here.", "class")
    assert script.undocumented([entry]) == ["Thing.colour: str", "Thing.act(n: int) -> None"]
    bare = script.Entry("Thing", "planted", node, "", "class")
    assert script.undocumented([bare])[0] == "Thing"


def test_the_site_lists_the_reference_beside_your_own_game() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    entries = [next(iter(item.values())) for item in config["nav"] if isinstance(item, dict)]
    assert "contract.md" in entries and "your-own-game.md" in entries
    assert entries.index("contract.md") == entries.index("your-own-game.md") + 1
