"""``python -m designer`` runs the command line."""

from designer.cli import main

__all__: list[str] = []

main()
