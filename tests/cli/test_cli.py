"""The command line in-process (CliRunner): help, exit codes, one-line errors, and output files."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from designer import design as design_mod, planner
from designer.cli import app
from tiny_spec import TINY
from designer.errors import SolverTimeoutError

ROOT = Path(__file__).resolve().parents[2]
RUNNER = CliRunner()

# The cheapest design of TINY costs about $0.25M (2025 catalog prices), so $1k cannot buy it.
TINY_INFEASIBLE = TINY.replace("budget: {total: $2M}", "budget: {total: $1k}")
PINNED = TINY + "system: {server: dgx-h100, nodes: 2, fabric: infiniband, topology: single_switch}\n"

ERROR_LINE = re.compile(r"^error: (?P<file>[^:]+)(?::(?P<line>\d+):(?P<col>\d+))?: \S.*$")


def run(*args: str):
    return RUNNER.invoke(app, [str(a) for a in args])


def digest(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


@pytest.fixture(scope="module")
def solved(tmp_path_factory) -> tuple[Path, Path, str]:
    """TINY solved once for the module: (spec, design file, stdout of --format json)."""
    folder = tmp_path_factory.mktemp("solved")
    spec = folder / "tiny.yaml"
    spec.write_text(TINY)
    out = folder / "design.yaml"
    result = run("solve", spec, "-o", out, "--format", "json")
    assert result.exit_code == 0, result.output
    return spec, out, result.stdout


# --- help --------------------------------------------------------------------------------------------

def _command_paths() -> list[list[str]]:
    root = typer.main.get_command(app)
    paths = []
    for name, cmd in root.commands.items():
        paths.append([name])
        paths.extend([name, sub] for sub in getattr(cmd, "commands", {}))
    return paths


@pytest.mark.parametrize("path", [[]] + _command_paths(), ids=lambda p: " ".join(p) or "designer")
def test_every_command_has_help(path):
    result = run(*path, "--help")
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.stdout
    assert len(result.stdout.strip().splitlines()) > 3


def test_the_contract_commands_exist():
    names = {" ".join(p) for p in _command_paths()}
    assert {"validate", "solve", "estimate", "bom", "diff", "explain", "catalog list", "catalog show",
            "schema"} <= names


def test_version():
    result = run("--version")
    assert result.exit_code == 0 and re.fullmatch(r"designer \d+\.\d+\.\d+\S*\n", result.stdout)


# --- validate ---------------------------------------------------------------------------------------------

def test_validate_ok_and_bad_together(tmp_path, tiny):
    bad = tmp_path / "bad.yaml"
    bad.write_text(TINY.replace("deadline: 30 days", "deadline: 30"))
    result = run("validate", tiny, bad)
    assert result.exit_code == 2
    assert result.stdout == f"{tiny}: ok\n"
    (line,) = result.stderr.splitlines()
    m = ERROR_LINE.match(line)
    assert m and m["file"] == str(bad) and (m["line"], m["col"]) == ("10", "15")
    assert run("validate", tiny).exit_code == 0


def test_validate_reports_every_bad_file(tmp_path):
    paths = []
    for i in range(3):
        paths.append(tmp_path / f"bad{i}.yaml")
        paths[-1].write_text(f"version: {i + 2}\n")
    result = run("validate", *paths)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    # Each file's problems (version, name, workloads), file by file in the order given.
    files = [ERROR_LINE.match(l)["file"] for l in lines]
    assert list(dict.fromkeys(files)) == [str(p) for p in paths] and len(files) == 3 * len(paths)


def test_validate_without_arguments_is_a_usage_error():
    result = run("validate")
    assert result.exit_code == 2 and "Traceback" not in result.output


# --- schema ------------------------------------------------------------------------------------------------

def test_schema_prints_json_schema_the_examples_fit():
    result = run("schema")
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    from designer.spec import yamlio
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        data = yamlio.load_yaml(path).data
        assert set(data) <= set(schema["properties"]), path.name
        assert set(schema["required"]) <= set(data), path.name
    for ref in re.findall(r'"\$ref": "#/\$defs/([^"]+)"', result.stdout):
        assert ref in schema["$defs"]


# --- solve: output only on success, exit codes -----------------------------------------------------

def test_solve_writes_the_design_and_prints_the_contract_keys(solved):
    spec, out, stdout = solved
    design = design_mod.load_design(out)
    assert design.spec_name == "tiny" and design.cost.total_usd > 0
    data = json.loads(stdout)
    assert {"system", "cost", "workloads", "bom", "alternatives"} <= set(data)
    assert {"deployment", "server", "gpu", "nodes", "gpus", "fabric", "topology",
            "oversubscription"} <= set(data["system"])
    assert {"capex_usd", "opex_usd", "cloud_usd", "total_usd"} <= set(data["cost"])
    assert sorted(p.name for p in out.parent.iterdir()) == ["design.yaml", "tiny.yaml"]  # no temp files


def test_infeasible_solve_exits_3_says_what_to_relax_and_keeps_the_old_design(tmp_path, solved):
    spec = tmp_path / "broke.yaml"
    spec.write_text(TINY_INFEASIBLE)
    out = tmp_path / "design.yaml"
    out.write_bytes(solved[1].read_bytes())
    before = digest(out)
    result = run("solve", spec, "-o", out)
    assert result.exit_code == 3, result.output
    assert result.stderr.startswith("infeasible: ")
    assert re.search(r"raise budget\.total from \$1,000\.00 to \$[\d,]+\.\d\d", result.stderr)
    assert "Traceback" not in result.output and result.stdout == ""
    assert digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broke.yaml", "design.yaml"]


@pytest.mark.parametrize("target, pattern", [
    ("missing/design.yaml", r"cannot write: the folder '.*missing' does not exist$"),
    (".", r"is a folder; give a file name to write to$"),
    ("tiny.yaml/design.yaml", r"cannot write: the folder '.*tiny\.yaml' is not a folder$"),
])
def test_an_unwritable_output_is_one_clear_line_and_exit_2(tmp_path, tiny, target, pattern, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("solved before checking that the design can be written")
    monkeypatch.setattr(planner, "plan", never)  # the check comes first: no solve is wasted
    result = run("solve", tiny, "-o", tmp_path / target)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {tmp_path / target}: ") and re.search(pattern, line), line
    assert tiny.read_text() == TINY


@pytest.mark.skipif(not hasattr(__import__("os"), "geteuid") or __import__("os").geteuid() == 0,
                    reason="root writes into read-only folders")
def test_a_read_only_folder_fails_before_solving(tmp_path, tiny, monkeypatch):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    monkeypatch.setattr(planner, "plan", lambda *a, **k: pytest.fail("solved before the write check"))
    try:
        result = run("solve", tiny, "-o", folder / "design.yaml")
    finally:
        folder.chmod(0o700)
    assert result.exit_code == 2
    assert re.search(r"cannot write into the folder '.*locked': permission denied$", result.stderr.strip())
    assert list(folder.iterdir()) == []


def test_a_failed_write_keeps_the_old_design_and_leaves_no_temporary_file(tmp_path, tiny, monkeypatch):
    out = tmp_path / "design.yaml"
    out.write_text("the previous design\n")
    before = digest(out)

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr("designer.cli.atomic.os.replace", full_disk)
    result = run("solve", tiny, "-o", out)
    assert result.exit_code == 2
    assert result.stderr == f"error: {out}: cannot write: no space left on device; the previous file is unchanged\n"
    assert digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["design.yaml", "tiny.yaml"]


def test_solve_leaves_its_inputs_unchanged(tmp_path, solved):
    spec, _, _ = solved
    cat = tmp_path / "prices.yaml"
    cat.write_text("schema_version: 1\nkind: switch\nitems:\n  - name: nvidia-qm9700\n    price: $30,000\n"
                   "    source: a quote\n    as_of: 2025-01\n")
    path = tmp_path / "spec.yaml"
    path.write_text(TINY + "catalogs: [prices.yaml]\n")
    before = {p: digest(p) for p in (path, cat)}
    assert run("solve", path, "-o", tmp_path / "d.yaml").exit_code == 0
    assert {p: digest(p) for p in (path, cat)} == before


def test_time_limit_is_accepted_and_checked(tiny):
    assert run("solve", tiny, "--time-limit", "30").exit_code == 0
    for bad in ("0", "-1", "soon"):
        result = run("solve", tiny, "--time-limit", bad)
        assert result.exit_code == 2 and "Traceback" not in result.output, bad


def test_solver_time_out_exits_4(tiny, monkeypatch):
    def slow(*args, **kwargs):
        raise SolverTimeoutError("no feasible design within the 0.1 s time limit; raise --time-limit")
    monkeypatch.setattr(planner, "plan", slow)
    result = run("solve", tiny, "--time-limit", "0.1")
    assert result.exit_code == 4
    assert result.stderr == "error: no feasible design within the 0.1 s time limit; raise --time-limit\n"


@pytest.mark.parametrize("exc, code, pattern", [
    (KeyboardInterrupt(), 130, r"^interrupted; no output was written$"),
    (MemoryError(), 2, r"^error: out of memory"),
    (ZeroDivisionError("float division by zero"), 70,
     r"^internal error: ZeroDivisionError: float division by zero \(rerun with --debug"),
])
def test_unexpected_failures_are_one_line_with_their_exit_code(tmp_path, tiny, monkeypatch, exc, code, pattern):
    def boom(*args, **kwargs):
        raise exc
    monkeypatch.setattr(planner, "plan", boom)
    out = tmp_path / "d.yaml"
    result = run("solve", tiny, "-o", out)
    assert result.exit_code == code
    (line,) = result.stderr.splitlines()
    assert re.search(pattern, line), line
    assert not out.exists()


def test_debug_shows_the_traceback(tiny, monkeypatch):
    def boom(*args, **kwargs):
        raise ZeroDivisionError("x")
    monkeypatch.setattr(planner, "plan", boom)
    result = run("--debug", "solve", tiny)
    assert isinstance(result.exception, ZeroDivisionError)


# --- the other commands on bad input ------------------------------------------------------------------

def test_estimate_on_a_pinned_spec(tmp_path):
    path = tmp_path / "pinned.yaml"
    path.write_text(PINNED)
    result = run("estimate", path, "--json")
    assert result.exit_code == 0, result.output
    (w,) = json.loads(result.stdout)["workloads"]
    assert w["gpus"] == 16 and 0 < w["utilization"] <= 1
    assert {"compute_s", "tp_comm_s", "pp_comm_s", "dp_comm_s", "ep_comm_s", "bubble_s",
            "exposed_comm_s"} <= set(w["breakdown"])


@pytest.mark.parametrize("args", [["bom"], ["explain"], ["diff", "{ok}"], ["estimate"], ["solve"], ["validate"]])
@pytest.mark.parametrize("content", [None, b"", b"\x00\x01\x02", b"- a list\n", b"schema_version: 99\n", b"a: [\n"])
def test_every_command_refuses_a_bad_file_in_one_line(tmp_path, solved, args, content):
    bad = tmp_path / "bad.yaml"
    if content is not None:
        bad.write_bytes(content)
    argv = [a.format(ok=solved[1]) for a in args] + [str(bad)]
    result = run(*argv)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert lines  # one located line per problem
    for line in lines:
        m = ERROR_LINE.match(line)
        assert m and m["file"] == str(bad), line


def test_bom_diff_and_explain_on_a_design(solved):
    _, out, _ = solved
    assert run("bom", out, "--format", "json").exit_code == 0
    assert run("explain", out).exit_code == 0
    assert run("diff", out, out).exit_code == 0
    assert run("bom", out, "--by", "shelf").exit_code == 2


def test_solve_warns_once_about_old_prices(tmp_path):
    # A price dated 2019 is older than 18 months on any day this test runs.
    (tmp_path / "old.yaml").write_text(
        "schema_version: 1\nkind: server\nitems:\n  - name: dgx-h100\n    price: $300,000\n"
        "    source: an old quote\n    as_of: 2019-01\n")
    spec = tmp_path / "tiny.yaml"
    spec.write_text(PINNED + "catalogs: [./old.yaml]\n")
    result = run("solve", spec)
    assert result.exit_code == 0, result.output
    warnings = [l for l in result.stderr.splitlines() if "older than 18 months" in l]
    assert len(warnings) == 1 and "dgx-h100 (2019-01)" in warnings[0]
    assert "older than" not in result.stdout
