"""Untrusted text (names, descriptions, sources) cannot drive a terminal or break a table or a PR comment."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from designer import report
from designer.design import Design
from designer.report import escape, jsondoc

HOSTILE = "x\x1b[2J\x1b]8;;http://evil/\x07y\n| forged | row |\r\n<img src=x>`[l](javascript:1)`\u202eevil\x9b31m\u2028z"


def _hostile(design: Design) -> Design:
    line = dataclasses.replace(design.bom[0], source=HOSTILE, description=HOSTILE)
    return dataclasses.replace(design, spec_name=HOSTILE, bom=(line,) + design.bom[1:], warnings=(HOSTILE,))


def _raw_controls(text: str) -> list[str]:
    return sorted({ch for ch in text if escape._hidden(ch) and ch not in "\n\t"})


def test_visible_writes_controls_as_python_escapes() -> None:
    assert escape.visible("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert escape.visible("a\u202eb\x9bc\u2028d\x7f") == "a\\u202eb\\x9bc\\u2028d\\x7f"
    assert escape.visible("plain text, éü 中文 — ok") == "plain text, éü 中文 — ok"
    assert escape.terminal("a\n\tb\x1bc") == "a\n\tb\\x1bc"


def test_markdown_text_cannot_leave_its_cell_or_inject_markup() -> None:
    assert escape.markdown_text("a | b\nc") == "a \\| b c"
    assert escape.markdown_text("<img src=x> `code` [l](u) \\") == "\\<img src=x> \\`code\\` \\[l\\](u) \\\\"
    assert escape.markdown_text("a -> b") == "a -> b"


def test_html_text_and_csv_cell() -> None:
    assert escape.html_text('<script>"x"</script>\x1b') == "&lt;script&gt;&quot;x&quot;&lt;/script&gt;\\x1b"
    assert escape.csv_cell("=HYPERLINK(\"http://evil\")") == "'=HYPERLINK(\"http://evil\")"
    assert escape.csv_cell("@SUM(A1)") == "'@SUM(A1)" and escape.csv_cell("DGX H100") == "DGX H100"


@given(st.text())
def test_escaped_text_has_no_control_character_left(text: str) -> None:
    for out in (escape.visible(text), escape.markdown_text(text), escape.html_text(text)):
        assert not [ch for ch in out if escape._hidden(ch) and ch not in "\n\t"]
    assert "\n" not in escape.visible(text) and "\n" not in escape.markdown_text(text)


@pytest.mark.parametrize("fmt", ["github", "markdown", "plain"])
def test_bom_tables_keep_their_shape(design: Design, fmt: str) -> None:
    plain = report.render_bom(design, fmt)
    hostile = report.render_bom(_hostile(design), fmt)
    assert not _raw_controls(hostile)
    assert hostile.count("\n") == plain.count("\n")  # no forged row, no broken one
    if fmt != "plain":
        rows = [r for r in hostile.splitlines() if r.startswith("|")]
        cells = {r.replace("\\|", "").count("|") for r in rows}
        assert len(cells) == 1  # every row has the same number of cells
        assert not re.search(r"(?<!\\)<img", hostile) and "\\<img" in hostile


def test_summary_explain_and_json_are_clean(design: Design) -> None:
    d = _hostile(design)
    for fmt, shown in (("table", "x\\x1b[2J"), ("markdown", "x\\\\x1b\\[2J")):
        text = report.render_summary(d, fmt)
        assert not _raw_controls(text) and shown in text
    explain = report.render_explain(d)
    assert not _raw_controls(explain)
    doc = report.render_summary(d, "json")
    assert not _raw_controls(doc) and json.loads(doc)["spec_name"] == HOSTILE


def test_csv_cells_are_not_formulas(design: Design) -> None:
    line = dataclasses.replace(design.bom[0], description="=cmd|' /C calc'!A0", source="+1 (estimate)")
    text = report.render_bom(dataclasses.replace(design, bom=(line,) + design.bom[1:]), "csv")
    rows = list(csv.reader(io.StringIO(text)))
    first = [r for r in rows[1:] if r[1] == line.sku][0]
    assert first[2] == "'=cmd|' /C calc'!A0" and not any(c.startswith(("=", "+", "@")) for r in rows for c in r)
    assert any(c.lstrip("-").replace(".", "").isdigit() for c in first)  # numbers are left as numbers


def test_json_escapes_c1_and_bidi_controls() -> None:
    text = jsondoc.dumps({"a": "x\x1b\x9b\u202e\u2028"})
    assert not _raw_controls(text) and json.loads(text)["a"] == "x\x1b\x9b\u202e\u2028"
