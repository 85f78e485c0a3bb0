"""The docs say what the tool does: every command is in the contract, the units page's examples
parse, and the README and `--help` point at the contract."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from designer.cli import app
from designer.spec import units

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = (ROOT / "docs" / "contract.md").read_text()


def _commands() -> list[str]:
    root = typer.main.get_command(app)
    out = []
    for name, cmd in root.commands.items():
        sub = getattr(cmd, "commands", None)
        out += [f"{name} {s}" for s in sub] if sub else [name]
    return out


@pytest.mark.parametrize("command", _commands())
def test_every_command_is_in_the_contract(command):
    assert f"`designer {command}" in CONTRACT, f"docs/contract.md does not list `designer {command}`"


def test_the_readme_and_help_point_at_the_contract():
    assert "docs/contract.md" in (ROOT / "README.md").read_text()
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0 and "docs/contract.md" in result.stdout


_PARSERS = {
    "bandwidth": units.parse_bandwidth, "data size": units.parse_data_size, "count": units.parse_count,
    "money": units.parse_money, "duration": units.parse_duration, "power": units.parse_power,
    "electricity price": units.parse_energy_price, "hourly price": units.parse_hourly_price,
    "compute rate": units.parse_flops, "fraction": units.parse_fraction,
}


def _unit_rows() -> list[tuple[str, str]]:
    rows = []
    for line in (ROOT / "docs" / "units.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] in _PARSERS:
            rows += [(cells[0], text) for text in re.findall(r"`([^`]+)`", cells[1])]
    return rows


def test_the_units_page_lists_every_quantity():
    assert {kind for kind, _ in _unit_rows()} == set(_PARSERS)


@pytest.mark.parametrize("kind, text", _unit_rows())
def test_every_example_on_the_units_page_parses(kind, text):
    value = text if kind != "fraction" or text.endswith("%") else float(text)
    assert _PARSERS[kind](value) >= 0
