"""Reading the review pages back in tests: table rows by key, element counts, attributes, visible text.

A small :class:`html.parser.HTMLParser` over the whole document (the standard library only); it
reads what a browser would build for these pages, whose markup is well formed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class TableRows:
    """A table's rows: each its ``data-key`` and the text of every cell."""

    id: str
    headers: list[str] = field(default_factory=list)
    rows: list[tuple[str, list[str]]] = field(default_factory=list)
    foot: list[str] = field(default_factory=list)


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, TableRows] = {}
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._table: TableRows | None = None
        self._section = ""
        self._row: tuple[str, list[str]] | None = None
        self._cell: list[str] | None = None
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag in ("style", "script"):
            self._skip += 1
        elif tag == "table":
            self._table = self.tables.setdefault(a.get("id") or f"t{len(self.tables)}", TableRows(a.get("id") or ""))
        elif tag in ("thead", "tbody", "tfoot"):
            self._section = tag
        elif tag == "tr" and self._table is not None:
            self._row = (a.get("data-key") or "", [])
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script"):
            self._skip -= 1
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row[1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            if self._section == "thead":
                self._table.headers = self._row[1]
            elif self._section == "tfoot":
                self._table.foot = self._row[1]
            else:
                self._table.rows.append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def parse(html: str) -> _Page:
    """The parsed page: ``tables`` by id, every start ``tags`` with its attributes, and its ``text``."""
    page = _Page()
    page.feed(html)
    page.close()
    return page


def visible_text(html: str) -> str:
    """The page's text outside style and script, whitespace collapsed."""
    return " ".join(" ".join(parse(html).text).split())


def inline_block(html: str, tag: str) -> str:
    """The content of the page's one ``<style>`` or ``<script>`` element, byte for byte."""
    (body,) = re.findall(rf"<{tag}>(.*?)</{tag}>", html, flags=re.S)
    return body
