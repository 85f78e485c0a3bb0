"""``designer catalog list|show``: what hardware and prices are known, with source and date.

Thin commands: load, render (:mod:`designer.report.catalog`), print, set the exit code (2 for an
unknown name or kind or a bad user catalog, as for all bad input).
"""

from __future__ import annotations

__all__ = ["KIND_NAMES", "catalog_app", "list_command", "show_command"]

from datetime import date
from pathlib import Path
from typing import Callable, List, Optional

import typer

from designer.cli.run import err
from designer.errors import DesignerError, InputError

catalog_app = typer.Typer(
    help="What hardware and prices are known, with source and date.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: no rich import at start-up, no colour codes in a pipe
)


def _emit(produce: Callable[[], tuple[str, str]]) -> None:
    """Run ``produce`` -> (stdout text, warning); bad input -> one line on stderr and exit 2."""
    try:
        text, warning = produce()
    except DesignerError as exc:
        message = exc.located() if isinstance(exc, InputError) else str(exc)
        err(f"error: {message}")
        raise typer.Exit(2) from None
    typer.echo(text, nl=False)
    if warning:
        typer.echo(warning, err=True, nl=False)


# The catalog kinds, written out so that --help does not load the catalog's types
# (tests/cli/test_cli_catalog.py checks them against designer.catalog.types.KINDS).
KIND_NAMES = ("gpu", "nic", "switch", "cable", "transceiver", "server", "cloud", "fabric", "facility", "support",
              "licence", "storage")

_CATALOG_OPTION = typer.Option([], "--catalog", "-c", metavar="FILE",
                               help="User catalog merged over the built-in ones (repeatable; later wins).")


@catalog_app.command("list")
def list_command(
    kind: Optional[str] = typer.Option(None, "--kind", "-k", metavar="KIND",
                                       help=f"Only this kind: {', '.join(KIND_NAMES)}."),
    as_json: bool = typer.Option(False, "--json", help="JSON for scripts instead of a table."),
    catalog_files: List[Path] = _CATALOG_OPTION,
) -> None:
    """List known GPUs, servers, NICs, switches, cables, optics, clouds and fabric profiles."""
    from designer import catalog as catalog_mod
    from designer.report.catalog import STALE_MONTHS, render_list, render_list_json, render_stale_warning

    def produce() -> tuple[str, str]:
        wanted = catalog_mod.normalize_kind(kind) if kind is not None else None
        cat = catalog_mod.load_catalog(catalog_files)
        text = render_list_json(cat, wanted) if as_json else render_list(cat, wanted)
        stale = tuple(s for s in catalog_mod.stale_entries(cat, date.today(), STALE_MONTHS)
                      if wanted is None or s.kind == wanted)
        return text, render_stale_warning(stale)
    _emit(produce)


@catalog_app.command("show")
def show_command(
    name: str = typer.Argument(..., metavar="NAME", show_default=False, help="Catalog name, e.g. nvidia-qm9700."),
    as_json: bool = typer.Option(False, "--json", help="JSON for scripts instead of a table."),
    catalog_files: List[Path] = _CATALOG_OPTION,
) -> None:
    """Show every field of one entry, with its source, date and how estimates were derived."""
    from designer import catalog as catalog_mod
    from designer.report.catalog import STALE_MONTHS, render_entry, render_entry_json, render_stale_warning

    def produce() -> tuple[str, str]:
        cat = catalog_mod.load_catalog(catalog_files)
        kind, entry = catalog_mod.find(cat, name)
        text = render_entry_json(kind, entry) if as_json else render_entry(kind, entry)
        stale = tuple(s for s in catalog_mod.stale_entries(cat, date.today(), STALE_MONTHS)
                      if (s.kind, s.name) == (kind, name))
        return text, render_stale_warning(stale)
    _emit(produce)
