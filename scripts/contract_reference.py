"""The engine contract's reference page, docs/contract.md, written from its docstrings.

    .venv/bin/python scripts/contract_reference.py          # rewrite docs/contract.md
    .venv/bin/python scripts/contract_reference.py --check  # fail if the page is stale

Every name ``engines.contract`` exports gets a section: its definition, read from the source of
the module that defines it (so a signature reads as its author wrote it), and its docstring;
a class also lists its members in source order, public methods and fields, each with its own
docstring (a field's is the string under it). The page is plain Markdown, so the site needs no
plugin to show it, and tests/project/test_contract_reference.py fails when the committed page
differs from what this writes.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "contract.md"
CONTRACT = "engines.contract"
KINDS = (
    ("Constants and types", "value"),
    ("Classes", "class"),
    ("Errors", "error"),
    ("Functions", "function"),
)
"""The page's sections, in order, and the kind of definition each holds."""
ERROR_BASES = ("ValueError", "GameError", "OptionError")


@dataclass(frozen=True)
class Entry:
    """One exported name: where it is defined, the definition's node, and its docstring."""

    name: str
    module: str
    node: ast.AST
    doc: str
    kind: str


def _tree(module: str) -> tuple[ast.Module, str]:
    path = Path(importlib.import_module(module).__file__ or "")
    source = path.read_text(encoding="utf-8")
    return ast.parse(source), source


def _attribute_docs(body: list[ast.stmt]) -> dict[str, str]:
    """The docstring written under each assignment of ``body`` (a module's or a class's)."""
    docs: dict[str, str] = {}
    for node, after in pairwise(body):
        target = _assigned(node)
        value = after.value if isinstance(after, ast.Expr) else None
        text = value.value if isinstance(value, ast.Constant) else None
        if target and isinstance(text, str):
            docs[target] = _clean(text)
    return docs


def _assigned(node: ast.stmt) -> str | None:
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Name):
            return target.id
    return None


def _clean(doc: str) -> str:
    """A docstring as Markdown: its indentation removed, reStructuredText's ``code`` as `code`."""
    lines = doc.expandtabs().splitlines()
    if not lines:
        return ""
    indents = [len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()]
    margin = min(indents, default=0)
    text = "\n".join([lines[0].strip(), *(line[margin:] for line in lines[1:])]).strip()
    return text.replace("``", "`")


def _imported_from(tree: ast.Module) -> dict[str, str]:
    return {
        alias.asname or alias.name: node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def entries() -> list[Entry]:
    """Every name ``engines.contract`` exports, found where it is defined."""
    contract = importlib.import_module(CONTRACT)
    tree, _ = _tree(CONTRACT)
    origins = _imported_from(tree)
    out = []
    for name in contract.__all__:
        module = origins.get(name, CONTRACT)
        body = _tree(module)[0].body
        node = next(n for n in body if _defines(n, name))
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            doc = _clean(ast.get_docstring(node, clean=False) or "")
        else:
            doc = _attribute_docs(body).get(name, "")
        out.append(Entry(name, module, node, doc, _kind(node)))
    return out


def _defines(node: ast.stmt, name: str) -> bool:
    if isinstance(node, ast.ClassDef | ast.FunctionDef):
        return node.name == name
    return _assigned(node) == name


def _kind(node: ast.AST) -> str:
    if isinstance(node, ast.FunctionDef):
        return "function"
    if isinstance(node, ast.ClassDef):
        bases = {ast.unparse(b) for b in node.bases}
        return "error" if bases & set(ERROR_BASES) else "class"
    return "value"


def _definition(entry: Entry) -> str:
    node = entry.node
    if isinstance(node, ast.FunctionDef):
        return f"{entry.name}({_arguments(node)}){_returns(node)}"
    if isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(b) for b in node.bases)
        return f"class {entry.name}({bases})" if bases else f"class {entry.name}"
    assert isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None
    return f"{entry.name} = {ast.unparse(node.value)}"


def _arguments(node: ast.FunctionDef) -> str:
    args = ast.unparse(node.args)
    for first in ("self, ", "self", "cls, ", "cls"):
        if args.startswith(first):
            return args[len(first) :]
    return args


def _returns(node: ast.FunctionDef) -> str:
    return f" -> {ast.unparse(node.returns)}" if node.returns else ""


def _members(node: ast.ClassDef) -> Iterator[tuple[str, str, str]]:
    """A class's public members in source order: (definition, note, docstring)."""
    fields = _attribute_docs(node.body)
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and not item.name.startswith("_"):
            decorators = {ast.unparse(d) for d in item.decorator_list}
            notes = []
            if "property" in decorators:
                notes.append("property")
            if "abstractmethod" in decorators:
                notes.append("abstract: every game writes it")
            definition = (
                item.name
                if "property" in decorators
                else f"{item.name}({_arguments(item)}){_returns(item)}"
            )
            if "property" in decorators and item.returns:
                definition += f": {ast.unparse(item.returns)}"
            doc = _clean(ast.get_docstring(item, clean=False) or "")
            yield definition, ", ".join(notes), doc
        name = _assigned(item)
        if name and not name.startswith("_"):
            yield _field(item), "", fields.get(name, "")


def _field(item: ast.stmt) -> str:
    if isinstance(item, ast.AnnAssign):
        text = f"{ast.unparse(item.target)}: {ast.unparse(item.annotation)}"
        return f"{text} = {ast.unparse(item.value)}" if item.value is not None else text
    assert isinstance(item, ast.Assign)
    return f"{ast.unparse(item.targets[0])} = {ast.unparse(item.value)}"


def undocumented(found: list[Entry] | None = None) -> list[str]:
    """Every exported name (``found``: all the contract's), and every public member of an
    exported class, with no docstring (enumeration members excepted: their value is their
    meaning). A field the class's own docstring names (as `field`) counts as documented."""
    missing = []
    for entry in entries() if found is None else found:
        if not entry.doc:
            missing.append(entry.name)
        if isinstance(entry.node, ast.ClassDef) and "StrEnum" not in _definition(entry):
            missing.extend(
                f"{entry.name}.{definition}"
                for definition, _, doc in _members(entry.node)
                if not doc and f"`{_member_name(definition)}`" not in entry.doc
            )
    return missing


def _member_name(definition: str) -> str:
    return definition.split("(")[0].split(":")[0].split(" =")[0]


def reference() -> str:
    """The page's text."""
    contract = importlib.import_module(CONTRACT)
    tree, _ = _tree(CONTRACT)
    intro = _clean(ast.get_docstring(tree, clean=False) or "")
    found = entries()
    lines = [
        "# The engine contract: reference",
        "",
        "<!-- Written by scripts/contract_reference.py from the docstrings of engines.contract;",
        "     edit the docstrings and run the script, never this page. -->",
        "",
        f"Version **{contract.CONTRACT_VERSION}**. Everything here is importable from "
        "`engines.contract`; [Your own game](your-own-game.md) shows it in use.",
        "",
        intro,
        "",
    ]
    for title, kind in KINDS:
        chosen = [e for e in found if e.kind == kind]
        if not chosen:
            continue
        lines += [f"## {title}", ""]
        for entry in chosen:
            lines += _section(entry)
    return "\n".join(lines).rstrip() + "\n"


def _section(entry: Entry) -> list[str]:
    lines = [
        f"### `{entry.name}`",
        "",
        "```python",
        _definition(entry),
        "```",
        "",
        f"*Defined in `{entry.module}`.*",
        "",
    ]
    if entry.doc:
        lines += [entry.doc, ""]
    if isinstance(entry.node, ast.ClassDef):
        members = list(_members(entry.node))
        for definition, note, doc in members:
            lines.append(f"- `{definition}`" + (f" ({note})" if note else ""))
            if doc:
                lines += ["", _indented(doc), ""]
        if members:
            lines.append("")
    return lines


def _indented(doc: str) -> str:
    """A member's docstring as the body of its list item (four spaces in)."""
    return "\n".join(f"    {line}" if line.strip() else "" for line in doc.splitlines())


def main(argv: list[str]) -> int:
    text = reference()
    if argv[1:] == ["--check"]:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE.relative_to(REPO)} is stale: run scripts/contract_reference.py")
            return 1
        return 0
    if argv[1:]:
        print(__doc__)
        return 2
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main(sys.argv))
