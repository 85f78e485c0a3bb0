"""What the page templates lay out: tables of cells, name/value lists and figures, as frozen dataclasses.

The builders (:mod:`~designer.report.html.review`, :mod:`~designer.report.html.diffpage`) turn a
design or a diff into these; the Jinja2 templates only place them, so every number on the page
is formatted in Python, once, with :mod:`designer.report.fmt`. Text here is plain (the templates
escape it); only :attr:`Figure.svg` holds markup, built by code that escapes its own text.
"""

from __future__ import annotations

__all__ = ["Cell", "Header", "Row", "Table", "Item", "Figure", "extra_fields", "num", "value_text"]

import dataclasses
from dataclasses import dataclass
from typing import Any, Iterable

from designer.design.io import as_written
from designer.report import fmt as f


@dataclass(frozen=True, slots=True)
class Cell:
    """One table cell: the text shown, the key it sorts by (numbers as text), and CSS classes."""

    text: str
    sort: str | None = None
    cls: str = ""
    marks: tuple[str, ...] = ()  # badges after the text (``estimate``, ``unpriced``, ``binding``)
    sub: str = ""  # a second, smaller line (a SKU's description)
    clamp: bool = False  # long text: shown in three lines on screen (all of it on hover and on paper)


@dataclass(frozen=True, slots=True)
class Header:
    """A column heading; ``numeric`` columns align right and sort as numbers."""

    text: str
    numeric: bool = False
    note: str = ""  # tooltip


@dataclass(frozen=True, slots=True)
class Row:
    """A table row; ``key`` names what it stands for (``bom|switch|leaf|nvidia-qm9700``)."""

    cells: tuple[Cell, ...]
    key: str = ""
    cls: str = ""
    category: str = ""  # what the BOM filter's category list selects on


@dataclass(frozen=True, slots=True)
class Table:
    """A table with an id (for its filter controls), headings, rows and an optional footer row."""

    id: str
    headers: tuple[Header, ...]
    rows: tuple[Row, ...]
    foot: tuple[Cell, ...] = ()
    sortable: bool = True
    caption: str = ""


@dataclass(frozen=True, slots=True)
class Item:
    """A name and its value in a description list; ``note`` is shown smaller after the value."""

    name: str
    value: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class Figure:
    """An inline SVG with its caption; ``svg`` is markup (escaped where it was built)."""

    id: str
    svg: str
    caption: str


def num(x: float) -> str:
    """A sort key for a number: plain decimal text that JavaScript's ``parseFloat`` reads."""
    return repr(float(x))


def value_text(value: Any, name: str = "") -> str:
    """Any design value as people read it: the design file's rounding, money in dollars.

    Nested records become ``key value`` pairs joined by `` · ``; lists are joined by commas;
    ``None`` is ``-``.
    """
    plain = as_written(value, name)
    return _plain_text(plain, name)


def _plain_text(plain: Any, name: str) -> str:
    if plain is None:
        return "-"
    if isinstance(plain, bool):
        return "yes" if plain else "no"
    if isinstance(plain, str):
        if name.endswith("_usd") and plain.replace(".", "", 1).lstrip("-").isdigit():
            return f.usd(float(plain))
        return plain
    if isinstance(plain, (int, float)):
        return f.num(plain)
    if isinstance(plain, dict):
        return " · ".join(f"{k} {_plain_text(v, k)}" for k, v in plain.items()) or "-"
    if isinstance(plain, list):
        return ", ".join(_plain_text(v, name) for v in plain) or "-"
    return str(plain)


def extra_fields(record: Any, known: Iterable[str]) -> tuple[Item, ...]:
    """Fields of a dataclass record that the page has no place for, as name/value items.

    This is how the page shows everything a design holds: a field added to the design (a
    schedule, a software stack, link speeds) appears here until a section lays it out.
    """
    if record is None or not dataclasses.is_dataclass(record):
        return ()
    skip = set(known)
    return tuple(Item(fl.name.replace("_", " "), value_text(getattr(record, fl.name), fl.name))
                 for fl in dataclasses.fields(record) if fl.name not in skip)
