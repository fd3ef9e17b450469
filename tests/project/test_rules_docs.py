"""docs/rules/<game>.md and the code agree on the numbered decisions.

Every game of the registry has a page there. A decision is written on its page as
``**X1 — what it is about.**``, numbered from 1 with one letter per game. The code that implements
a decision names it, as ``docs/rules/<game>.md X1`` (a comment) or ``(decision X1,
docs/rules/<game>.md)`` (a docstring), so each page's numbers are all cited from engines/,
analysis/ or api/, and every citation names a number its page has. No Python file of the
repository may point at rules kept outside it.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

import pytest
from repo_paths import REPO

from engines.registry import game_names

RULES = REPO / "docs" / "rules"
CODE_DIRS = ("engines", "analysis", "api")
"""Where the code implementing a decision lives (tests check it but do not implement it)."""

HEADING = re.compile(r"\*\*([A-Z])(\d+) — [^*\n]+\.\*\*")
"""A decision as a page writes it: ``**H5 — no holes.**``."""
BOLD_ID = re.compile(r"\*\*([A-Z]\d+)(?!\*\*)")
"""Any bold text opening with a decision number (``**V1**`` alone is a mention, not a heading)."""
IDS = r"[A-Z]\d+(?:(?:\s*,\s*|\s+and\s+)[A-Z]\d+)*"

# Built from parts so that this file does not match them itself.
OUTSIDE = re.compile("shared" + "/rules|" + r"\.\./shared|rules[ _-]pages?", re.IGNORECASE)
"""Pointers to rules kept outside the repository."""


def _python_files(*roots: Path) -> list[Path]:
    """The .py files under ``roots``, hidden folders (``.venv``, ``.git``) and caches left out."""
    found = []
    for root in roots:
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = [d for d in subfolders if not d.startswith(".") and d != "__pycache__"]
            found += [Path(folder) / f for f in files if f.endswith(".py")]
    return sorted(found)


def _flat(text: str) -> str:
    """The text with line breaks, indentation and comment markers folded into single spaces,
    so that a citation wrapped over two lines of a comment or docstring reads as one."""
    return re.sub(r"\s*\n\s*(?:#\s*)?", " ", text)


def _ids(group: str) -> set[str]:
    return set(re.findall(r"[A-Z]\d+", group))


@cache
def _page(game: str) -> str:
    return (RULES / f"{game}.md").read_text(encoding="utf-8")


@cache
def _code() -> dict[str, str]:
    return {
        str(p.relative_to(REPO)): _flat(p.read_text(encoding="utf-8"))
        for p in _python_files(*(REPO / d for d in CODE_DIRS))
    }


def decisions(game: str) -> list[str]:
    """The decision numbers on ``game``'s page, in page order."""
    return [f"{letter}{n}" for letter, n in HEADING.findall(_page(game))]


def cited_in(text: str, game: str) -> set[str]:
    """The decision numbers of ``game``'s page that ``text`` (folded by ``_flat``) cites."""
    page = re.escape(f"docs/rules/{game}.md")
    after = re.compile(page + r",?\s+(" + IDS + r")\b")
    before = re.compile(r"\bdecisions?\s+(" + IDS + r")\s*[,(]?\s*(?:of\s+)?" + page)
    return {d for pattern in (after, before) for g in pattern.findall(text) for d in _ids(g)}


def citations(game: str) -> dict[str, set[str]]:
    """Decision number -> the code files that cite it for ``game``."""
    found: dict[str, set[str]] = {}
    for name, text in _code().items():
        for decision in cited_in(text, game):
            found.setdefault(decision, set()).add(name)
    return found


GAMES = game_names()


def test_every_game_has_its_docs_rules_with_their_facts() -> None:
    assert GAMES, "the registry lists no game"
    for game in GAMES:
        assert (RULES / f"{game}.md").is_file(), f"docs/rules/{game}.md is missing"
        assert "\n## Facts the tests check\n" in _page(game), game


@pytest.mark.parametrize("game", GAMES)
def test_decisions_are_written_one_way_and_numbered_from_one(game: str) -> None:
    numbers = decisions(game)
    assert numbers, f"docs/rules/{game}.md states no decision"
    letters = {d[0] for d in numbers}
    assert len(letters) == 1, f"docs/rules/{game}.md mixes letters {sorted(letters)}"
    assert sorted(int(d[1:]) for d in numbers) == list(range(1, len(numbers) + 1)), numbers
    loose = BOLD_ID.findall(_page(game))
    assert sorted(loose) == sorted(numbers), (
        f"docs/rules/{game}.md: write each decision as **X1 — what it is about.**"
    )


def test_each_game_has_its_own_letter() -> None:
    letters = [decisions(game)[0][0] for game in GAMES]
    assert len(set(letters)) == len(letters), dict(zip(GAMES, letters, strict=True))


@pytest.mark.parametrize("game", GAMES)
def test_every_decision_is_cited_by_the_code_that_implements_it(game: str) -> None:
    cited = citations(game)
    missing = [d for d in decisions(game) if d not in cited]
    assert not missing, f"no code in {', '.join(CODE_DIRS)} cites docs/rules/{game}.md {missing}"


@pytest.mark.parametrize("game", GAMES)
def test_every_citation_names_a_decision_of_its_page(game: str) -> None:
    unknown = {d: sorted(files) for d, files in citations(game).items() if d not in decisions(game)}
    assert not unknown, f"cited but not on docs/rules/{game}.md: {unknown}"


def test_no_python_file_points_at_rules_outside_the_repository() -> None:
    offenders = {}
    for path in _python_files(REPO):
        name = str(path.relative_to(REPO))
        hits = OUTSIDE.findall(path.read_text(encoding="utf-8"))
        if hits:
            offenders[name] = sorted(set(hits))
    assert not offenders, f"point at docs/rules/<game>.md instead: {offenders}"


def test_the_citation_forms_are_read() -> None:
    # The two forms, wrapped as comments and docstrings wrap them, and mentions that are not
    # citations (an Abalone cell, a decision of another page).
    text = _flat(
        "x = 1  # docs/rules/abalone.md B3\n"
        "# end checks in the order of\n# docs/rules/abalone.md B5.\n"
        '"""a draw among all (decisions B2 and B6,\n    docs/rules/abalone.md)."""\n'
        '"""the evaluation of decision B7 (docs/rules/abalone.md) with"""\n'
        "# from A1 to B4 (docs/rules/alquerque.md A1)\n"
    )
    assert cited_in(text, "abalone") == {"B2", "B3", "B5", "B6", "B7"}
    assert cited_in(text, "alquerque") == {"A1"}
