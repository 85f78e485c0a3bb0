"""Formatting shared by the renderers: money, numbers, deltas and tables (pure, returns str)."""

from __future__ import annotations

__all__ = [
    "TABLE_FORMATS",
    "Markdown",
    "bold",
    "check_format",
    "days",
    "fraction",
    "is_markdown",
    "num",
    "pct",
    "qty",
    "signed",
    "table",
    "text",
    "usd",
    "usd_delta",
]

from typing import Sequence

from tabulate import tabulate

from designer.design import bom
from designer.errors import InputError
from designer.report import escape
from designer.spec import units

# Output format name -> tabulate format. "github" is GitHub's table without alignment colons;
# "markdown" is the pipe table with them; "plain" and "table" are for terminals.
TABLE_FORMATS = {"github": "github", "markdown": "pipe", "plain": "simple", "table": "simple"}


def check_format(fmt: str, allowed: Sequence[str], what: str) -> str:
    """Return ``fmt`` when it is one of ``allowed``.

    Raises:
        InputError: an unknown format, naming the allowed ones.
    """
    if fmt not in allowed:
        raise InputError(f"unknown {what} format {fmt!r}; expected one of: {', '.join(allowed)}")
    return fmt


def is_markdown(fmt: str) -> bool:
    """True for the formats rendered as Markdown (GitHub or pipe tables)."""
    return fmt in ("github", "markdown")


def usd(x: float) -> str:
    """Dollars to the cent with separators: ``$39,680,000.00``."""
    return units.format_money(bom.round_money(x))


def usd_delta(x: float) -> str:
    """A signed dollar change: ``+$1,234.00``, ``-$56.00``, ``$0.00``."""
    r = bom.round_money(x)
    return usd(r) if r == 0 else ("+" if r > 0 else "-") + usd(abs(r))


def num(x: float) -> str:
    """A number rounded as the design file rounds it, with thousands separators (``2,048``, ``0.86``)."""
    r = bom.round_sig(float(x))
    return f"{int(r):,}" if r.is_integer() and abs(r) < 1e15 else f"{r:,.{bom.SIG_DIGITS}g}"


def qty(x: float) -> str:
    """A BOM quantity as written (12 significant digits), with separators: ``276,480.4``."""
    r = bom.round_quantity(float(x))
    return f"{int(r):,}" if r.is_integer() and abs(r) < 1e15 else f"{r:,.{bom.QUANTITY_SIG_DIGITS}g}"


def signed(x: float, digits: int = 3) -> str:
    """A signed change with fixed decimals: ``+0.040``, ``-4.200``."""
    text = f"{x:+.{digits}f}"
    return text.replace("-", "+", 1) if float(text) == 0 else text


def pct(x: float | None, digits: int = 1) -> str:
    """A fraction as a percentage (``0.8612`` -> ``86.1%``); ``-`` when unknown."""
    return "-" if x is None else f"{x * 100:.{digits}f}%"


def fraction(x: float | None) -> str:
    """A fraction with three decimals (``0.861``); ``-`` when unknown."""
    return "-" if x is None else f"{x:.3f}"


def days(x: float | None) -> str:
    """Days with one decimal (``167.0 days``); ``-`` when unknown."""
    return "-" if x is None else f"{x:,.1f} days"


class Markdown(str):
    """Text that is already Markdown (written by a renderer, not taken from input): table cells
    keep it as it is."""


def bold(text: str, fmt: str) -> str:
    """Bold in Markdown formats, unchanged in text formats."""
    return Markdown(f"**{text}**") if is_markdown(fmt) and text else text


def text(value: str, fmt: str) -> str:
    """Untrusted text (a name, a source) on one line of a report in ``fmt``: Markdown syntax
    escaped in Markdown formats, control characters written visibly everywhere
    (:mod:`designer.report.escape`)."""
    return escape.markdown_text(value) if is_markdown(fmt) else escape.visible(value)


def _cell(value: object, markdown: bool) -> str:
    text = "" if value is None else str(value)
    # A bare "|" ends a Markdown table cell and a line break ends the row; an escape sequence would
    # drive the terminal. Cells that are our own Markdown (bold totals) are marked by _Markdown.
    if isinstance(value, Markdown):
        return text
    if markdown:
        return escape.markdown_text(text)
    return escape.visible(text.replace("\r\n", " ").replace("\n", " "))


def table(rows: Sequence[Sequence[object]], headers: Sequence[str], fmt: str, align: str = "") -> str:
    """A table in ``fmt`` (a key of :data:`TABLE_FORMATS`) with ``align`` per column (``l``/``r``).

    Cells are used as given (tabulate's number parsing is off) so the text is exactly ours.
    """
    markdown = is_markdown(fmt)
    colalign = tuple("right" if a == "r" else "left" for a in align.ljust(len(headers), "l"))
    body = [[_cell(c, markdown) for c in row] for row in rows]
    return tabulate(body, headers=[_cell(h, markdown) for h in headers], tablefmt=TABLE_FORMATS[fmt],
                    disable_numparse=True, colalign=colalign)


def fabric_shape(tiers: int, oversubscription: float) -> str:
    """``2 switch tiers, oversubscription 2:1``; a fabric of one tier has no uplinks to thin out,
    so a ratio other than 1 is not shown as one (a fat tree small enough for one switch).

    Examples:
        >>> fabric_shape(2, 2.0), fabric_shape(1, 2.0)
        ('2 switch tiers, oversubscription 2:1', '1 switch tier, non-blocking (no uplinks at this size)')
    """
    head = f"{tiers} switch tier{'s' if tiers != 1 else ''}"
    if tiers <= 1 and oversubscription != 1.0:
        return f"{head}, non-blocking (no uplinks at this size)"
    return f"{head}, oversubscription {num(oversubscription)}:1"
