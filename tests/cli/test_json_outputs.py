"""Every JSON document the command line prints starts with `format_version` (docs/contract.md).

The commands are found by walking the CLI: any option that offers JSON (``--json``, or ``json``
among a ``--format``'s choices) must be exercised here, so a new JSON output cannot go untested.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from designer.cli import app
from designer.report.jsondoc import FORMAT_VERSION
from tiny_spec import TINY

RUNNER = CliRunner()

PINNED = TINY + "system: {server: dgx-h100, nodes: 2, fabric: infiniband, topology: single_switch}\n"


def run(*args):
    return RUNNER.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("json")
    spec, pinned = folder / "tiny.yaml", folder / "pinned.yaml"
    spec.write_text(TINY)
    pinned.write_text(PINNED)
    design = folder / "design.yaml"
    assert run("solve", spec, "-o", design).exit_code == 0
    return {"spec": spec, "pinned": pinned, "design": design}


# (command path, option) -> the arguments that make it print JSON.
CASES = {
    ("solve", "--format"): ["solve", "{spec}", "--format", "json"],
    ("estimate", "--json"): ["estimate", "{pinned}", "--json"],
    ("bom", "--format"): ["bom", "{design}", "--format", "json"],
    ("bom --by rack", "--format"): ["bom", "{design}", "--by", "rack", "--format", "json"],
    ("diff", "--format"): ["diff", "{design}", "{design}", "--format", "json"],
    ("validate", "--format"): ["validate", "{spec}", "--format", "json"],
    ("catalog list", "--json"): ["catalog", "list", "--kind", "switch", "--json"],
    ("catalog show", "--json"): ["catalog", "show", "nvidia-qm9700", "--json"],
    ("presets", "--json"): ["presets", "--json"],
    ("frontier", "--json"): ["frontier", "{spec}", "--utilization", "0.5,0.6", "--json", "-j", "1"],
    ("sweep", "--json"): ["sweep", "{spec}", "--vary", "gpu_price=-10%..+10%", "--steps", "2", "--json", "-j", "1"],
    ("study", "--format"): ["study", "{spec}", "--vary", "gpu_price=normal:10%", "--samples", "2", "--format", "json",
                            "-j", "1"],
}


def _json_options() -> set[tuple[str, str]]:
    """Every (command path, option) of the CLI that can print JSON."""
    found: set[tuple[str, str]] = set()

    # Typer vendors its own click (typer._click), so the walk goes by the objects' shape, not by
    # click's classes: a group has sub-commands, an option has a param_type_name of 'option'.
    def walk(cmd, path: list[str]) -> None:
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(sub, path + [name])
            return
        for p in cmd.params:
            if getattr(p, "param_type_name", "") != "option":
                continue
            kind = getattr(getattr(p, "type_descriptor", None), "annotation", None)
            choices = [m.value for m in kind] if isinstance(kind, type) and issubclass(kind, enum.Enum) else []
            if "--json" in p.opts or "json" in [str(c) for c in choices]:
                found.add((" ".join(path), p.opts[0] if p.opts[0].startswith("--") else p.opts[-1]))

    walk(typer.main.get_command(app), [])
    return found


def test_every_json_output_is_covered_here():
    missing = {k for k in _json_options() if k not in CASES}
    assert not missing, f"add these JSON outputs to CASES: {sorted(missing)}"


@pytest.mark.parametrize("key", sorted(CASES), ids=lambda k: " ".join(k))
def test_json_output_starts_with_format_version(files, key):
    args = [a.format(**files) for a in CASES[key]]
    result = run(*args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert next(iter(doc)) == "format_version" and doc["format_version"] == FORMAT_VERSION == 1
