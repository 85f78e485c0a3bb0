"""Fabric drawings: device counts per tier, grouping of large fabrics, DOT, PNG and SVG output, CLI."""

from __future__ import annotations

import dataclasses
import re
import struct
import sys
import xml.etree.ElementTree as ET

import pytest
import typer
from typer.testing import CliRunner

from designer import design as design_mod, topology
from designer.catalog import load_catalog
from designer.cli import design as cli_design
from designer.errors import CatalogError, InputError
from designer.pictures import draw, layout, plot
from designer.pictures import drawing as drawing_mod

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# NVIDIA DGX SuperPOD H100 RA (RA-11333-001), Table 3: 4 SUs of 32 DGX H100 use 32 leaf (8 per SU,
# one per rail) and 16 spine QM9700 switches in the compute fabric.
SUPERPOD_4SU = {"server": 128, "leaf": 32, "spine": 16}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture
def superpod(design):
    """The shared factory's 128-node DGX H100 InfiniBand rail-optimized design (SuperPOD, 4 SUs)."""
    assert (design.system.server, design.system.switch, design.system.topology) == (
        "dgx-h100", "nvidia-qm9700", "rail_optimized")
    return design


@pytest.fixture
def cloud_design(design):
    """The same design turned into ``nodes`` rented p5.48xlarge instances."""
    def make(nodes: int):
        system = dataclasses.replace(design.system, deployment="cloud", server="aws-p5.48xlarge", nodes=nodes,
                                     gpus=nodes * 8, fabric="efa", topology="cloud", switch=None, tiers=0, racks=0)
        return dataclasses.replace(design, system=system, bom=())
    return make


def _dot_counts(dot: str) -> dict[str, int]:
    """Devices per role read back from the DOT text (``class`` and ``tooltip="leaf x 32"``)."""
    out: dict[str, int] = {}
    for role, count in re.findall(r'class="(\w+)", tooltip="\w+ x (\d+)"', dot):
        out[role] = out.get(role, 0) + int(count)
    return out


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


# ---------------------------------------------------------------- the drawing's graph


def test_superpod_tier_counts(superpod, catalog):
    drawing = draw.draw_design(superpod, catalog)
    assert drawing_mod.tier_counts(drawing) == SUPERPOD_4SU
    # 32 leaves and 16 spines fit the default limits: one box each; 128 servers do not: one per SU.
    leaves = [b for b in drawing.boxes if b.role == "leaf"]
    assert len(leaves) == 32 and all(b.count == 1 and len(b.rails) == 1 for b in leaves)
    servers = [b for b in drawing.boxes if b.role == "server"]
    assert [b.count for b in servers] == [32, 32, 32, 32]
    assert drawing.aggregated
    # The design's BOM agrees with the rebuilt fabric: no count warning.
    assert not any("bill of materials" in w for w in drawing.warnings)


def test_superpod_wires(superpod, catalog):
    drawing = draw.draw_design(superpod, catalog)
    node_leaf = [w for w in drawing.wires if w.tier == topology.NODE_LEAF]
    leaf_spine = [w for w in drawing.wires if w.tier == topology.LEAF_SPINE]
    # Every NIC port once: 128 x 8; each SU box reaches its 8 rail leaves with 32 links, one rail each.
    assert sum(w.links for w in node_leaf) == 128 * 8
    assert len(node_leaf) == 32 and all(w.links == 32 and len(w.rails) == 1 for w in node_leaf)
    # Non-blocking: as many leaf uplinks as NIC links, spread over all 16 spines (32 x 16 wires).
    assert sum(w.links for w in leaf_spine) == 128 * 8
    assert len(leaf_spine) == 32 * 16 and all(w.color == drawing_mod.MULTI_RAIL_COLOR for w in leaf_spine)
    ids = {b.id for b in drawing.boxes}
    assert all(w.a in ids and w.b in ids for w in drawing.wires)


def test_superpod_dot_counts(superpod, catalog):
    dot = plot.render_dot(draw.draw_design(superpod, catalog))
    assert _dot_counts(dot) == SUPERPOD_4SU
    assert dot.startswith("graph fabric {") and dot.endswith("}\n")
    assert dot.count(" -- ") == 32 + 32 * 16 + 2  # wires, plus the invisible rank links of 3 tiers
    assert plot.render_dot(draw.draw_design(superpod, catalog)) == dot  # deterministic


def test_detail_draws_every_server(superpod, catalog):
    drawing = draw.draw_design(superpod, catalog, max_boxes=(200, 200, 200, 200))
    assert not drawing.aggregated
    assert len([b for b in drawing.boxes if b.role == "server"]) == 128
    assert drawing_mod.tier_counts(drawing) == SUPERPOD_4SU


def test_16k_gpu_fabric_is_grouped(catalog):
    server = catalog.servers["dgx-h100"]
    request = topology.request_for(server, catalog.nics[server.nic], catalog.switches["nvidia-qm9700"],
                                   "rail_optimized", 2048, rack_power_w=40e3)
    summary = topology.summarize(request)
    drawing = layout.drawing_from_graph(topology.build_graph(request))
    counts = drawing_mod.tier_counts(drawing)
    assert counts == {"server": 2048, "leaf": summary.leaves, "spine": summary.spines, "core": summary.cores}
    assert summary.tiers == 3
    for tier, limit in enumerate(drawing_mod.MAX_BOXES):
        assert len([b for b in drawing.boxes if b.tier == tier]) <= limit
    # Rail leaves stay apart by rail: the rail colour is what the picture shows.
    leaf_labels = sorted(b.label for b in drawing.boxes if b.role == "leaf")
    assert leaf_labels[0] == f"leaf x {summary.leaves // 8}\n(rail 0)"
    assert len(drawing.wires) < 600


@pytest.mark.parametrize("kind, nodes", [("fat_tree", 40), ("rail_only", 256), ("single_switch", 4)])
def test_other_topologies_keep_counts(catalog, kind, nodes):
    server = catalog.servers["dgx-h100"]
    request = topology.request_for(server, catalog.nics[server.nic], catalog.switches["nvidia-qm9700"], kind, nodes)
    summary = topology.summarize(request)
    counts = drawing_mod.tier_counts(layout.drawing_from_graph(topology.build_graph(request)))
    switches = {"single_switch": {"switch": 1}}.get(kind, {"leaf": summary.leaves, "spine": summary.spines})
    assert counts == {"server": nodes, **{k: v for k, v in switches.items() if v}}


def test_cloud_design(catalog, cloud_design):
    drawing = draw.draw_design(cloud_design(4), catalog)
    assert drawing_mod.tier_counts(drawing) == {"server": 4, "cloud": 1}
    assert [w.links for w in drawing.wires] == [8, 8, 8, 8]  # one link per GPU (P5: 8 x 400G)
    cloud = next(b for b in drawing.boxes if b.role == "cloud")
    assert cloud.label.startswith("aws efa network")
    assert drawing.tier_labels[0] == (0, "instances: 4 x aws-p5.48xlarge")


def test_hybrid_design_draws_its_on_prem_part(superpod, catalog):
    rented = dataclasses.replace(superpod.workloads[0], name="extra", deployment="cloud", server="aws-p5.48xlarge")
    hybrid = dataclasses.replace(superpod, system=dataclasses.replace(superpod.system, deployment="hybrid"),
                                 workloads=superpod.workloads + (rented,))
    drawing = draw.draw_design(hybrid, catalog)
    assert drawing_mod.tier_counts(drawing) == SUPERPOD_4SU
    assert drawing.title.endswith("also rents aws-p5.48xlarge")


def test_unknown_catalog_name(superpod, catalog):
    bad = dataclasses.replace(superpod, system=dataclasses.replace(superpod.system, server="no-such-server"))
    with pytest.raises(CatalogError, match="no-such-server"):
        draw.draw_design(bad, catalog)


def test_changed_catalog_warns(superpod, catalog):
    # Halve the BOM's leaves: the drawing (from the catalog) and the design now disagree.
    lines = tuple(dataclasses.replace(l, quantity=16.0) if l.role == "leaf" else l for l in superpod.bom)
    drawing = draw.draw_design(dataclasses.replace(superpod, bom=lines), catalog)
    assert any("lists 16 leaf switches; the catalog now gives 32" in w for w in drawing.warnings)


# ---------------------------------------------------------------- images


def test_png_is_a_sensible_image(superpod, catalog):
    pytest.importorskip("matplotlib")
    data = plot.render_drawing(draw.draw_design(superpod, catalog), "png")
    width, height = _png_size(data)
    assert 1200 <= width <= 5000 and 400 <= height <= 2000
    assert width > height  # tiers stack up, boxes spread across
    assert plot.render_drawing(draw.draw_design(superpod, catalog), "png") == data


def test_svg_parses_and_is_deterministic(catalog, cloud_design):
    pytest.importorskip("matplotlib")
    drawing = draw.draw_design(cloud_design(2), catalog)
    data = plot.render_drawing(drawing, "svg")
    root = ET.fromstring(data)
    assert root.tag.endswith("svg")
    assert float(root.attrib["width"].rstrip("pt")) > 300
    assert b"aws efa network" in data  # text stays text
    assert plot.render_drawing(drawing, "svg") == data


def test_format_of():
    assert plot.format_of("a/b.PNG") == "png"
    with pytest.raises(InputError, match=r"\.jpg"):
        plot.format_of("x.jpg")
    with pytest.raises(InputError, match="png, .svg"):
        plot.format_of("x.dot", plot.IMAGE_FORMATS)


def test_missing_matplotlib_says_how_to_install(superpod, catalog, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    with pytest.raises(InputError, match=re.escape("pip install 'designer[plot]'")):
        plot.render_drawing(draw.draw_design(superpod, catalog), "png")
    assert _dot_counts(plot.render_dot(draw.draw_design(superpod, catalog))) == SUPERPOD_4SU


# ---------------------------------------------------------------- command line


@pytest.fixture
def runner_app():
    app = typer.Typer()
    for name, command in (("bom", cli_design.bom), ("draw", cli_design.draw_command)):  # a group, as in the CLI
        app.command(name)(command)
    return app


@pytest.fixture
def design_file(tmp_path, superpod):
    path = tmp_path / "design.yaml"
    path.write_text(design_mod.dump_design(superpod))
    return path


def test_cli_draw_formats(runner_app, design_file, tmp_path):
    pytest.importorskip("matplotlib")
    runner = CliRunner()
    for ext in ("dot", "svg", "png"):
        out = tmp_path / f"fabric.{ext}"
        result = runner.invoke(runner_app, ["draw", str(design_file), "-o", str(out)])
        assert result.exit_code == 0, result.output
        assert out.stat().st_size > 1000
    assert _png_size((tmp_path / "fabric.png").read_bytes())[0] > 1000
    assert _dot_counts((tmp_path / "fabric.dot").read_text()) == SUPERPOD_4SU


def test_cli_draw_errors(runner_app, design_file, tmp_path, monkeypatch):
    runner = CliRunner()
    result = runner.invoke(runner_app, ["draw", str(design_file), "-o", str(tmp_path / "x.jpg")])
    assert result.exit_code == 2 and "unknown picture format .jpg" in result.output
    result = runner.invoke(runner_app, ["draw", str(tmp_path / "missing.yaml"), "-o", str(tmp_path / "x.dot")])
    assert result.exit_code == 2
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = runner.invoke(runner_app, ["draw", str(design_file), "-o", str(tmp_path / "x.png")])
    assert result.exit_code == 2 and "pip install 'designer[plot]'" in result.output
    assert not (tmp_path / "x.png").exists()
    result = runner.invoke(runner_app, ["draw", str(design_file)])  # DOT on stdout, no matplotlib needed
    assert result.exit_code == 0 and _dot_counts(result.stdout) == SUPERPOD_4SU
