"""`designer validate`: every problem of a file in one pass, located; warnings; `--format json`; stdin."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from designer.cli import app
from designer.planner import inputs
from tiny_spec import TINY

RUNNER = CliRunner()
ROOT = Path(__file__).resolve().parents[2]

MARK = "⟦"

# Ten problems in one file, each marked where it must be located (the marker is removed).
MANY = """\
version: 1
name: bad
horizon: ⟦3 yearz
budget: {total: ⟦2000000}
workloads:
  - name: a
    model: {preset: llama3-8b}
    ⟦tokns: 15T
    global_batch: ⟦-3
    parallelism: {tp: ⟦x, pp: 2}
  - name: b
    model: {preset: llama3-8b}
    tokens: 1T
    global_batch: 64
    parallelism: ⟦manual
constraints:
  fabrics: [roce, ⟦ethernt]
  deployments: ⟦[]
  min_utilization: ⟦1.5
system: {nodes: ⟦0}
"""


def unmark(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The text without markers, and each marker's 1-based (line, column)."""
    places = []
    lines = text.split("\n")
    for n, line in enumerate(lines, start=1):
        while MARK in line:
            col = line.index(MARK) + 1
            places.append((n, col))
            line = line.replace(MARK, "", 1)
        lines[n - 1] = line
    return "\n".join(lines), places


def run(*args, **kw):
    return RUNNER.invoke(app, [str(a) for a in args], **kw)


def test_every_problem_of_a_file_in_one_pass_in_document_order(tmp_path):
    text, places = unmark(MANY)
    path = tmp_path / "many.yaml"
    path.write_text(text)
    result = run("validate", path)
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    got = [re.match(rf"^error: {re.escape(str(path))}:(\d+):(\d+): ", line) for line in lines]
    assert all(got), lines
    assert [(int(m[1]), int(m[2])) for m in got] == places
    # The unknown key explains the missing `tokens`: it is not reported a second time.
    assert not any("tokens: required key is missing" in line for line in lines)
    assert "did you mean 'tokens'?" in lines[2] and "did you mean 'ethernet'?" in lines[6]
    assert lines[4].endswith("or 'auto' to let the optimizer choose")


def test_json_gives_located_diagnostics_with_a_hint(tmp_path):
    text, places = unmark(MANY)
    path = tmp_path / "many.yaml"
    path.write_text(text)
    result = run("validate", "--format", "json", path)
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["format_version"] == 1
    assert (doc["valid"], doc["error_count"], doc["warning_count"]) == (False, len(places), 0)
    assert doc["files"] == [{"file": str(path), "valid": False, "error_count": len(places), "warning_count": 0}]
    diags = doc["diagnostics"]
    assert [(d["line"], d["column"]) for d in diags] == places
    assert {tuple(sorted(d)) for d in diags} == {("column", "file", "hint", "line", "message", "path", "severity")}
    typo = diags[2]
    assert typo == {"file": str(path), "line": 8, "column": 5, "severity": "error",
                    "message": "unknown key 'tokns' in workloads[0]", "hint": "did you mean 'tokens'?",
                    "path": "workloads[0].tokns"}
    assert diags[1]["message"] == "budget.total: an amount of money needs a unit"
    assert diags[1]["hint"] == 'did you mean "$2000000"?'


def test_checks_after_the_first_pass_run_on_the_valid_workloads(tmp_path):
    # Workload b is valid by itself: its unknown preset is found although workload a is refused.
    text = TINY.replace("constraints:", "  - name: b\n    model: {preset: llama3-8bx}\n    tokens: 1T\n"
                                        "    global_batch: 8\nconstraints:").replace("global_batch: 64", "global_batch: 0")
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    lines = run("validate", path).stderr.splitlines()
    assert len(lines) == 2, lines
    assert "global_batch: must be at least 1 (got 0)" in lines[0]
    assert lines[1].endswith("unknown model preset 'llama3-8bx'; did you mean 'llama3-8b'?")


def test_the_names_the_spec_uses_are_all_checked(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(TINY.replace("  max_nodes: 4\n", "  max_nodes: 4\n  gpus: [h100x, b200x]\n")
                    + "system: {switch: qm9700}\n")
    result = run("validate", "-f", "json", path)
    doc = json.loads(result.stdout)
    assert result.exit_code == 2 and doc["error_count"] == 3
    messages = [d["message"] for d in doc["diagnostics"]]
    assert messages == ["unknown GPU 'h100x'", "unknown GPU 'b200x'", "unknown switch 'qm9700'"]
    assert [d["path"] for d in doc["diagnostics"]] == ["constraints.gpus[0]", "constraints.gpus[1]", "system.switch"]


def test_warnings_do_not_fail_validation(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(TINY.replace("fabrics: [infiniband]", "fabrics: [infiniband, infiniband]")
                    .replace("deadline: 30 days", "deadline: 400 days"))
    result = run("validate", path)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{path}: ok (2 warnings)\n"
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"warning: {path}:10:15: the deadline (400 days) is longer than the horizon (365 days)")
    assert lines[1] == (f"warning: {path}:14:25: constraints.fabrics lists 'infiniband' twice; it counts once; "
                        "remove the repeat")
    doc = json.loads(run("validate", "--format", "json", path).stdout)
    assert (doc["valid"], doc["error_count"], doc["warning_count"]) == (True, 0, 2)
    assert {d["severity"] for d in doc["diagnostics"]} == {"warning"}


def test_stdin(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("validate", "-", input=TINY)
    assert result.exit_code == 0 and result.stdout == "<stdin>: ok\n"
    bad = run("validate", "-f", "json", "-", input=TINY.replace("tokens: 20B", "tokens: 20 apples"))
    doc = json.loads(bad.stdout)
    assert bad.exit_code == 2
    (d,) = doc["diagnostics"]
    assert (d["file"], d["line"], d["column"], d["path"]) == ("<stdin>", 8, 13, "workloads[0].tokens")
    assert d["message"].startswith("workloads[0].tokens: unknown count suffix 'apples'")


def test_stdin_catalog_paths_resolve_against_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("validate", "-", input=TINY + "catalogs: [mine.yaml]\n")
    assert result.exit_code == 2 and "error: <stdin>:17:12: catalog file 'mine.yaml' is not a readable" in result.stderr
    (tmp_path / "mine.yaml").write_text("schema_version: 1\nkind: switch\nitems: []\n")
    assert run("validate", "-", input=TINY + "catalogs: [mine.yaml]\n").exit_code == 0


def test_stdin_that_is_not_utf8():
    result = run("validate", "-f", "json", "-", input=b"\xff\xfe")
    assert result.exit_code == 2
    (d,) = json.loads(result.stdout)["diagnostics"]
    assert d["file"] == "<stdin>" and d["message"] == "not UTF-8 text (byte 0)" and d["line"] is None


def test_a_missing_file_is_a_diagnostic_without_a_line(tmp_path):
    path = tmp_path / "nope.yaml"
    doc = json.loads(run("validate", "--format", "json", path, ROOT / "examples" / "quickstart.yaml").stdout)
    assert doc["valid"] is False and [f["valid"] for f in doc["files"]] == [False, True]
    assert doc["diagnostics"] == [{"file": str(path), "line": None, "column": None, "severity": "error",
                                   "message": "no such file", "hint": None, "path": None}]


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.yaml")), ids=lambda p: p.name)
def test_examples_have_neither_errors_nor_warnings(path):
    assert inputs.check_inputs(path) == ()
