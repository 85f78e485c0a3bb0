"""``python -m designer`` runs the command line."""

from designer.cli import main

main()
