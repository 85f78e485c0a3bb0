"""The fabric drawing as SVG written without matplotlib (the review page's picture)."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import pytest

from designer.catalog import load_catalog
from designer.pictures import draw, svg
from designer.pictures.drawing import RAIL_COLORS, tier_counts

NS = {"s": "http://www.w3.org/2000/svg"}
# NVIDIA DGX SuperPOD H100 RA (RA-11333-001), Table 3: 4 SUs of 32 DGX H100 use 32 leaf and 16
# spine QM9700 switches in the compute fabric.
SUPERPOD_4SU = {"server": 128, "leaf": 32, "spine": 16}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _counts(root: ET.Element) -> dict[str, int]:
    out: dict[str, int] = {}
    for g in root.iterfind(".//s:g", NS):
        cls = g.get("class", "")
        if cls.startswith("box role-"):
            role = cls.removeprefix("box role-")
            out[role] = out.get(role, 0) + int(g.get("data-count"))
    return out


def test_the_superpod_drawing_holds_every_device_and_rail(design, catalog):
    drawing = draw.draw_design(design, catalog)
    text = svg.render_svg(drawing)
    root = ET.fromstring(text)  # well-formed XML
    assert _counts(root) == tier_counts(drawing) == SUPERPOD_4SU
    strokes = {line.get("stroke") for line in root.iterfind(".//s:g[@class='wires']/s:line", NS)}
    assert set(RAIL_COLORS) <= strokes  # 8 rails, each in its colour (rail-optimized leaves)
    links = sum(int(line.get("data-links")) for line in root.iterfind(".//s:g[@class='wires']/s:line", NS))
    assert links == sum(w.links for w in drawing.wires if w.a != w.b)
    width, height = float(root.get("width")), float(root.get("height"))
    assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}" and width > 0 and height > 0


def test_text_is_escaped_and_the_output_is_the_same_bytes(design, catalog):
    drawing = draw.draw_design(dataclasses.replace(design, spec_name='<b>&"x"</b>'), catalog)
    text = svg.render_svg(drawing)
    assert "<b>" not in text and "&lt;b&gt;&amp;" in text
    assert ET.fromstring(text).find("s:title", NS).text.startswith('<b>&"x"</b>')
    assert text == svg.render_svg(drawing)
    assert "<style" not in text and "style=" not in text  # presentation attributes only (the page's policy)
