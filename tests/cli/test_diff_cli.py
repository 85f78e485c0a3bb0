"""`designer diff`: + ~ - markers and a summary line, the cost gate --fail-on-increase (exit 5), and
--baseline GITREF (the design as committed)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from designer.cli import app
from designer.design import diff as diff_mod
from designer.design import io as design_io
from tiny_spec import TINY

RUNNER = CliRunner()


def run(*args):
    return RUNNER.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def designs(tmp_path_factory) -> tuple[Path, Path]:
    """TINY on its cheapest system (a DGX A100), and the same spec allowed only MI300Xs (dearer by about 2.2%)."""
    folder = tmp_path_factory.mktemp("diff")
    old, new = folder / "old.yaml", folder / "new.yaml"
    for path, text in ((old, TINY), (new, TINY.replace("  max_nodes: 4\n", "  max_nodes: 4\n  gpus: [mi300x]\n"))):
        spec = folder / f"{path.stem}.spec.yaml"
        spec.write_text(text)
        assert run("solve", spec, "-o", path).exit_code == 0
    return old, new


def _diff(designs):
    return diff_mod.diff_designs(*(design_io.load_design(p) for p in designs))


def test_markers_and_summary_line(designs):
    result = run("diff", *designs)
    assert result.exit_code == 1
    d = _diff(designs)
    c = d.counts()
    assert c["added"] and c["removed"]
    lines = result.stdout.splitlines()
    assert lines[2] == (f"Summary: +{c['added']} added, ~{c['changed']} changed, -{c['removed']} removed "
                        f"bill-of-materials lines; {c['system_fields']} system fields and 1 workload changed.")
    bom_rows = [l for l in lines if l[:2] in ("+ ", "~ ", "- ")]
    assert len(bom_rows) == c["added"] + c["changed"] + c["removed"] + c["workloads"]
    assert not any(word in result.stdout for word in (" added  ", " removed  "))  # no words in the change column


def test_json_carries_the_summary_and_symbols(designs):
    doc = json.loads(run("diff", *designs, "--format", "json").stdout)
    d = _diff(designs)
    assert doc["summary"] == d.counts()
    assert {(i["status"], i["symbol"]) for i in doc["bom"]} <= {("added", "+"), ("changed", "~"), ("removed", "-")}


def test_identical_designs_have_no_summary_line(designs):
    result = run("diff", designs[0], designs[0])
    assert result.exit_code == 0 and "Summary:" not in result.stdout


def test_fail_on_increase_by_percent_and_by_dollars(designs):
    t = _diff(designs).total
    assert t.delta_usd > 0
    pct = t.delta_pct
    below, above = f"{pct * 0.9:.3f}%", f"{pct * 1.1:.3f}%"
    r = run("diff", *designs, "--fail-on-increase", below)
    assert r.exit_code == 5 and r.stderr.startswith("cost increase: the total rose $")
    assert run("diff", *designs, "--fail-on-increase", above).exit_code == 1
    assert run("diff", *designs, "--fail-on-increase", f"${t.delta_usd - 1:.2f}").exit_code == 5
    assert run("diff", *designs, "--fail-on-increase", f"${t.delta_usd:.2f}").exit_code == 1  # not more than
    # A decrease never trips the gate.
    assert run("diff", designs[1], designs[0], "--fail-on-increase", "0%").exit_code == 1
    assert run("diff", designs[0], designs[0], "--fail-on-increase", "0%").exit_code == 0


@pytest.mark.parametrize("text", ["5", "five%", "-3%", "$", "5 USD/h"])
def test_a_bad_limit_is_bad_input(designs, text):
    r = run("diff", *designs, "--fail-on-increase", text)
    assert r.exit_code == 2 and r.stderr.startswith("error: --fail-on-increase")


def test_an_old_total_of_zero(designs):
    d = _diff(designs)
    zero = dataclasses.replace(d, total=diff_mod.MoneyChange(0.0, 10.0))
    assert diff_mod.parse_increase_limit("50%").exceeded_by(zero)
    assert not diff_mod.parse_increase_limit("$20").exceeded_by(zero)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_baseline_compares_with_the_committed_design(designs, tmp_path):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True,
                       env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                            "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})

    git("init", "-q")
    (tmp_path / "sub").mkdir()
    design = tmp_path / "sub" / "design.yaml"
    shutil.copy(designs[0], design)
    git("add", ".")
    git("commit", "-qm", "the design before")
    shutil.copy(designs[1], design)
    committed = run("diff", "--baseline", "HEAD", design, "--format", "json")
    direct = run("diff", designs[0], designs[1], "--format", "json")
    assert committed.exit_code == 1 and json.loads(committed.stdout) == json.loads(direct.stdout)
    missing = run("diff", "--baseline", "no-such-branch", design)
    assert missing.exit_code == 2
    assert missing.stderr.startswith(f"error: {design}: unknown git revision 'no-such-branch'; name a branch")
    new_file = tmp_path / "sub" / "other.yaml"
    shutil.copy(designs[1], new_file)
    absent = run("diff", "--baseline", "HEAD", new_file)
    assert absent.exit_code == 2 and absent.stderr.startswith(f"error: {new_file}: not in git revision 'HEAD' (")
    assert "\n" not in absent.stderr.strip() and "Traceback" not in absent.stderr
    assert run("diff", "--baseline", "--help", design).exit_code == 2
    assert run("diff", "--baseline", "HEAD", design, design).exit_code == 2
    assert run("diff", design).exit_code == 2


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_baseline_outside_a_repository_is_one_located_line(designs, tmp_path):
    design = tmp_path / "design.yaml"
    shutil.copy(designs[0], design)
    result = run("diff", "--baseline", "HEAD", design)
    assert result.exit_code == 2 and result.stderr.startswith(f"error: {design}: not in a git repository")
    assert len(result.stderr.splitlines()) == 1
