"""A design file depends on the spec and its catalogs, never on the folder they are in: the same spec
with a user catalog solved in two folders gives the same bytes, and records the catalog by the name
the spec gives it and the sha256 of its bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml
from typer.testing import CliRunner

from designer.cli import app
from tiny_spec import TINY

CATALOG = """\
schema_version: 1
kind: switch
items:
  - name: nvidia-qm8700
    price: $15,000
    source: a negotiated quote (test)
    as_of: 2026-10
"""


def _checkout(root: Path) -> Path:
    (root / "prices").mkdir(parents=True)
    (root / "prices" / "mine.yaml").write_text(CATALOG)
    spec = root / "spec.yaml"
    spec.write_text(TINY + "catalogs: [prices/mine.yaml]\n")
    return spec


def test_same_spec_in_two_folders_gives_the_same_design_bytes(tmp_path, monkeypatch):
    first, second = _checkout(tmp_path / "a"), _checkout(tmp_path / "elsewhere" / "deeper" / "b")
    runner = CliRunner()
    monkeypatch.chdir(tmp_path / "a")
    assert runner.invoke(app, ["solve", "spec.yaml", "-o", "design.yaml"]).exit_code == 0
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "other.yaml"
    assert runner.invoke(app, ["solve", str(second), "-o", str(out)]).exit_code == 0
    one, two = (first.parent / "design.yaml").read_bytes(), out.read_bytes()
    assert one == two
    assert str(tmp_path).encode() not in one
    design = yaml.safe_load(one)
    digest = hashlib.sha256(CATALOG.encode()).hexdigest()
    assert design["catalog_files"]["prices/mine.yaml"] == digest
    assert design["catalog_dates"]["prices/mine.yaml"] == "2026-10"
    assert all(k.startswith("builtin:") for k in design["catalog_files"] if k != "prices/mine.yaml")
    # The switch price of the user catalog is the one used.
    assert any(line["sku"] == "nvidia-qm8700" and line["unit_price_usd"] == "15000.00" for line in design["bom"])
