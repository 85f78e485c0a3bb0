"""The console script's stand-in for ``pydantic.plugin._loader`` (designer.cli._no_pydantic_plugins)
must provide every name the installed pydantic imports from that module, or the command line
fails at start with an ImportError when pydantic changes what it imports."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pydantic

from designer import cli

MODULE = "pydantic.plugin._loader"


def _imported_names() -> set[str]:
    """Names imported from pydantic.plugin._loader anywhere in the installed pydantic's source."""
    root = Path(pydantic.__file__).parent
    names: set[str] = set()
    for path in root.rglob("*.py"):
        package = ".".join(("pydantic", *path.relative_to(root).parent.parts))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target == MODULE:
                names.update(alias.name for alias in node.names)
    return names


def test_stub_provides_every_name_pydantic_imports(monkeypatch):
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    cli._no_pydantic_plugins()
    stub = sys.modules[MODULE]
    monkeypatch.delitem(sys.modules, MODULE)
    imported = _imported_names()
    assert "get_plugins" in imported  # the scan finds pydantic's own import
    assert sorted(n for n in imported if not hasattr(stub, n)) == []
    assert tuple(stub.get_plugins()) == ()
