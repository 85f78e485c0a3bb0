"""The face: ``designer``'s command line, one module per command group (:mod:`designer.cli.commands`).

``designer = "designer.cli:main"`` is the console script; ``app`` is the typer app (for tests and
``python -m designer``).
"""

from __future__ import annotations

from designer.cli.commands import app, main

__all__ = ["app", "main"]
