"""`designer draw -o fabric.graphml|.json`: the whole fabric graph, read back by networkx."""

from __future__ import annotations

import io
import json

import networkx as nx
import pytest
from typer.testing import CliRunner

from designer import design as design_mod
from designer.catalog import load_catalog
from designer.cli import app
from designer.pictures import export

# NVIDIA DGX SuperPOD H100 RA (RA-11333-001), Table 3: 4 SUs of 32 DGX H100 with 8 compute NIC
# ports each, on 32 leaf and 16 spine QM9700 switches, not oversubscribed: 1,024 node-leaf links
# and as many leaf-spine links.
NICS, LEAVES, SPINES = 128 * 8, 32, 16


@pytest.fixture
def design_file(tmp_path, design):
    assert (design.system.server, design.system.switch, design.system.topology) == (
        "dgx-h100", "nvidia-qm9700", "rail_optimized")
    path = tmp_path / "design.yaml"
    path.write_text(design_mod.dump_design(design))
    return path


def _roles(g: nx.Graph) -> dict[str, int]:
    out: dict[str, int] = {}
    for _, role in g.nodes(data="role"):
        out[role] = out.get(role, 0) + 1
    return out


def _links(g: nx.Graph, tier: str) -> int:
    return sum(d["links"] for _, _, d in g.edges(data=True) if d["tier"] == tier)


def test_graphml_holds_every_device_and_link(design_file, tmp_path):
    out = tmp_path / "fabric.graphml"
    result = CliRunner().invoke(app, ["draw", str(design_file), "-o", str(out)])
    assert result.exit_code == 0, result.output
    g = nx.read_graphml(out)
    assert _roles(g) == {"nic": NICS, "leaf": LEAVES, "spine": SPINES}
    assert _links(g, "node-leaf") == NICS
    assert _links(g, "leaf-spine") == NICS  # 1:1, not oversubscribed: as many links up as down
    assert g.graph["servers"] == 128 and g.graph["topology"] == "rail_optimized"
    nic = g.nodes["node-0000-nic3"]
    assert (nic["role"], nic["rail"], nic["node"]) == ("nic", 3, 0)
    assert all(d["rate_Bps"] == 50e9 for _, _, d in g.edges(data=True))  # 400 Gb/s NDR
    assert result.stdout == f"{out}: {NICS + LEAVES + SPINES:,} devices, {g.number_of_edges():,} edges " \
                            f"({2 * NICS:,} links)\n"


def test_node_link_json_round_trips_and_is_deterministic(design_file, design):
    runner = CliRunner()
    first = runner.invoke(app, ["draw", str(design_file), "--format", "json"])
    assert first.exit_code == 0, first.output
    assert runner.invoke(app, ["draw", str(design_file), "-f", "json"]).stdout == first.stdout
    doc = json.loads(first.stdout)
    assert list(doc)[0] == "format_version" and doc["format_version"] == 1
    g = nx.node_link_graph({k: v for k, v in doc.items() if k != "format_version"}, edges="links")
    built = export.fabric_graph(design, load_catalog())
    assert list(g.nodes) == list(built.nodes)  # build order
    assert sorted(map(sorted, g.edges)) == sorted(map(sorted, built.edges))
    graphml = runner.invoke(app, ["draw", str(design_file), "-f", "graphml"]).stdout
    assert nx.read_graphml(io.BytesIO(graphml.encode())).number_of_nodes() == g.number_of_nodes()


def test_a_bad_format_is_refused(design_file, tmp_path):
    bad = CliRunner().invoke(app, ["draw", str(design_file), "--format", "xml"])
    assert bad.exit_code == 2
    assert bad.stderr == "error: --format: unknown format 'xml'; use one of dot, png, svg, graphml, json\n"
    named = CliRunner().invoke(app, ["draw", str(design_file), "-o", str(tmp_path / "fabric.gml")])
    assert named.exit_code == 2 and "unknown picture format .gml" in named.stderr
