"""Untrusted text made safe to show: on a terminal, in Markdown (a PR comment, a table cell) and in HTML.

Names, descriptions and sources come from specs, catalogs and design files that anyone may have
written. Shown raw, an escape sequence (``\\x1b[2J`` clears the screen, ``\\x1b]8;;URL`` plants a
link), a line break (a forged table row), a bidirectional override (text that reads other than
it is, "Trojan Source", CVE-2021-42574) or a ``|`` (a forged cell) changes what the reader sees.
Here each such character is written visibly, the way Python's ``repr`` writes it (``\\x1b``,
``\\n``, ``\\u202e``), so the text stays legible and cannot act. The HTML report reuses
:func:`html_text`.
"""

from __future__ import annotations

__all__ = ["visible", "terminal", "markdown_text", "html_text", "csv_cell"]

import html
import re
import unicodedata

# Bidirectional embeddings, overrides and isolates, and the Unicode line and paragraph separators
# (category Zl/Zp): invisible characters that reorder or break what is shown.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u061c\u200e\u200f\u2028\u2029")


def _hidden(ch: str) -> bool:
    return ch in _BIDI or unicodedata.category(ch) == "Cc"


def _shown(ch: str) -> str:
    return repr(ch)[1:-1]


def visible(text: str, keep: str = "") -> str:
    """``text`` with every control character (C0, DEL, C1), bidirectional control and line or
    paragraph separator written as its escape (``\\x1b``, ``\\u202e``), except those in ``keep``.

    Examples:
        >>> visible("a\\x1b[2Jb\\nc")
        'a\\\\x1b[2Jb\\\\nc'
        >>> visible("a\\nb", keep="\\n")
        'a\\nb'
    """
    if not any(_hidden(ch) for ch in text):
        return text
    return "".join(_shown(ch) if _hidden(ch) and ch not in keep else ch for ch in text)


def terminal(text: str) -> str:
    """A whole report for a terminal: its own line breaks and tabs kept, every other control
    character written visibly, so no input can move the cursor, recolour or clear the screen."""
    return visible(text, keep="\n\t")


# Characters that start Markdown syntax able to leave a table cell or inject markup: a cell's end,
# raw HTML (a tag needs its '<'), a code span, a link or image, an escape.
_MARKDOWN = re.compile(r"([\\|<`\[\]])")


def markdown_text(text: str) -> str:
    """One line of untrusted text inside Markdown (a table cell, a heading, a list item): control
    characters visible, line breaks as spaces, and ``\\ | < ` [ ]`` backslash-escaped (GitHub
    Flavored Markdown shows ``\\|`` as ``|`` and never reads ``\\<`` as a tag)."""
    flat = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return _MARKDOWN.sub(r"\\\1", visible(flat))


def html_text(text: str) -> str:
    """Untrusted text for an HTML element or attribute: escaped (``& < > " '``) with control
    characters visible. Line breaks are kept (HTML shows them as spaces)."""
    return html.escape(visible(text, keep="\n\t"), quote=True)


_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text: str) -> str:
    """A text cell of a CSV file: control characters visible, and a leading ``= + - @`` (which a
    spreadsheet runs as a formula: OWASP "CSV injection") prefixed with ``'``. Use it for text,
    not for numbers (``-5`` stays a number)."""
    shown = visible(text)
    return "'" + shown if shown.startswith(_FORMULA) else shown
