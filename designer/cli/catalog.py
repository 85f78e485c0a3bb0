"""``designer catalog list|show``: what hardware and prices are known, with source and date.

Thin commands: load, render (:mod:`designer.report.catalog`), print, set the exit code (2 for an
unknown name or kind or a bad user catalog, as for all bad input).
"""

from __future__ import annotations

__all__ = ["KIND_NAMES", "PROTOCOL_NAMES", "catalog_app", "list_command", "show_command"]

import re
from datetime import date
from pathlib import Path
from typing import Callable, List, Optional

import typer

from designer.cli.run import err, show
from designer.errors import DesignerError, InputError, Location

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
    show(text)
    if warning:
        typer.echo(warning, err=True, nl=False)


# The catalog kinds, written out so that --help does not load the catalog's types
# (tests/cli/test_cli_catalog.py checks them against designer.catalog.types.KINDS).
KIND_NAMES = ("gpu", "nic", "switch", "cable", "transceiver", "server", "cloud", "fabric", "facility", "support",
              "licence", "storage", "appliance", "price_book")

_CATALOG_OPTION = typer.Option([], "--catalog", "-c", metavar="FILE",
                               help="User catalog merged over the built-in ones (repeatable; later wins).")


_RATE_SHORT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kMGT])\s*$")  # "400G", as network parts are named


def _filter(protocol: str | None, rate: str | None, vendor: str | None, max_price: str | None, gpu: str | None,
            name: str | None):
    """The :class:`~designer.catalog.filters.EntryFilter` of the options; None when none is set.

    Raises:
        InputError: a rate or a price that does not parse, an unknown protocol.
    """
    from designer.catalog.filters import EntryFilter
    from designer.spec import units

    if all(v is None for v in (protocol, rate, vendor, max_price, gpu, name)):
        return None
    if protocol is not None and protocol.lower() not in PROTOCOL_NAMES:
        raise InputError(f"unknown protocol '{protocol}'; use one of {', '.join(PROTOCOL_NAMES)}", Location("--protocol"))
    rate_Bps = price = None
    try:
        if rate is not None:
            short = _RATE_SHORT.match(rate)
            rate_Bps = units.parse_bandwidth(f"{short[1]} {short[2]}b/s" if short else rate)
        if max_price is not None:
            price = units.parse_money(max_price)
    except units.UnitError as exc:
        raise InputError(f"{exc}", Location("--rate" if rate_Bps is None and rate is not None else "--max-price")) \
            from None
    return EntryFilter(protocol=protocol, rate_Bps=rate_Bps, vendor=vendor, max_price_usd=price, gpu=gpu, name=name)


# Wire protocols and fabric technologies (designer.catalog.types Protocol and FabricKind values;
# tests/cli/test_cli_catalog.py checks them), written out so that --help loads no catalog module.
PROTOCOL_NAMES = ("ethernet", "infiniband", "roce", "efa", "gpudirect-tcpx", "gpudirect-tcpxo")


@catalog_app.command("list")
def list_command(
    kind: Optional[str] = typer.Option(None, "--kind", "-k", metavar="KIND",
                                       help=f"Only this kind: {', '.join(KIND_NAMES)}."),
    protocol: Optional[str] = typer.Option(None, "--protocol", metavar="PROTOCOL",
                                           help="Only NICs, switches, instances and fabric profiles that speak it: "
                                                f"{', '.join(PROTOCOL_NAMES)} (roce: Ethernet parts)."),
    rate: Optional[str] = typer.Option(None, "--rate", metavar="RATE",
                                       help="Only parts with a port at this rate: 400G, 800 Gb/s, 50 GB/s."),
    vendor: Optional[str] = typer.Option(None, "--vendor", metavar="VENDOR",
                                         help="Only this vendor's entries (a cloud's provider): nvidia, amd, aws, ..."),
    max_price: Optional[str] = typer.Option(None, "--max-price", metavar="USD",
                                            help="Only parts priced at most this, e.g. $20k (unpriced parts and "
                                                 "hourly prices left out)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", metavar="GPU", help="Only servers and cloud instances with this "
                                                                          "GPU (and the GPU itself)."),
    name: Optional[str] = typer.Option(None, "--name", metavar="TEXT", help="Only entries whose name contains TEXT."),
    as_json: bool = typer.Option(False, "--json", help="JSON for scripts instead of a table."),
    catalog_files: List[Path] = _CATALOG_OPTION,
) -> None:
    """List known GPUs, servers, NICs, switches, cables, optics, clouds and fabric profiles (filters combine)."""
    from designer import catalog as catalog_mod
    from designer.catalog import filters
    from designer.report.catalog import STALE_MONTHS, render_list, render_list_json, render_stale_warning

    def produce() -> tuple[str, str]:
        wanted = catalog_mod.normalize_kind(kind) if kind is not None else None
        flt = _filter(protocol, rate, vendor, max_price, gpu, name)
        cat = catalog_mod.load_catalog(catalog_files)
        text = render_list_json(cat, wanted, flt) if as_json else render_list(cat, wanted, flt)
        shown = {(k, n) for k, n, _ in filters.select(cat, catalog_mod.KINDS if wanted is None else (wanted,), flt)}
        stale = tuple(s for s in catalog_mod.stale_entries(cat, date.today(), STALE_MONTHS) if (s.kind, s.name) in shown)
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
