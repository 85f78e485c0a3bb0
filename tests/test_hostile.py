"""The hostile-input suite: the attacks of docs/reliability.md run as a user would, each `designer`
command in a process of its own, and a fuzzer over specs, catalogs and design files that runs every
generated file through the real command line.

Every run must end with exit 0, 1 (diff), 2 or 3, print no traceback and no internal error (exit
70), leave its inputs untouched, and show no raw control character. ``HOSTILE_PROCESS_RUNS``
(default 4) sets the generated files per kind; ``HOSTILE_PROCESS_RUNS=200`` is the long profile.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz import gen
from tiny_spec import TINY

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
DESIGN = (GOLDEN / "example-quickstart" / "design.yaml").read_text(encoding="utf-8")
RUNS = int(os.environ.get("HOSTILE_PROCESS_RUNS", "4"))
LONG = RUNS > 4  # the long profile also solves what validates
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def designer(*args: str, cwd: Path, stdin: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """One command as a user runs it; checks what must hold of every run."""
    proc = subprocess.run([sys.executable, "-m", "designer", *args], cwd=cwd, input=stdin, capture_output=True,
                          timeout=timeout, env=dict(os.environ, COLUMNS="200"))
    out, err = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    assert proc.returncode in (0, 1, 2, 3), (args, proc.returncode, err[-2000:])
    assert "Traceback" not in err and "internal error" not in err, (args, err[-2000:])
    assert not _CONTROL.search(out) and not _CONTROL.search(err), (args, out[-500:], err[-500:])
    if proc.returncode >= 2:
        assert err.strip(), args  # a refusal says why
    proc.out, proc.err = out, err  # type: ignore[attr-defined]
    return proc


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _spec(tmp_path: Path, text: str = TINY, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- output safety (item 1)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="creating a character device needs root")
def test_o_onto_a_character_device_or_the_spec_leaves_both_untouched(tmp_path: Path) -> None:
    import stat

    spec = _spec(tmp_path)
    before = _digest(spec)
    dev = tmp_path / "null"
    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the device /dev/null is
    for target in (dev, spec, Path("/dev/null")):
        run = designer("solve", str(spec), "-o", str(target), cwd=tmp_path)
        assert run.returncode == 2 and str(target) in run.err
    assert stat.S_ISCHR(dev.lstat().st_mode) and stat.S_ISCHR(os.lstat("/dev/null").st_mode)
    assert _digest(spec) == before and sorted(p.name for p in tmp_path.iterdir()) == ["null", "spec.yaml"]


# ---------------------------------------------------------------- confinement and edge cases (items 2, 9)


def test_no_line_of_a_secret_file_named_as_a_catalog_is_echoed(tmp_path: Path) -> None:
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$Zx9hash$abcdefgh:19000:0:99999:7:::\nkind: nope\n", encoding="utf-8")
    spec = _spec(tmp_path, TINY + "catalogs: [shadow]\n")
    run = designer("validate", str(spec), cwd=tmp_path)
    assert run.returncode == 2 and "Zx9hash" not in run.err and "root:" not in run.err and "nope" not in run.err
    missing = designer("validate", str(_spec(tmp_path, TINY + "catalogs: [no/such]\n", "m.yaml")), cwd=tmp_path)
    # The same words for a file that exists and one that does not: naming a path tells nothing.
    assert missing.err.replace("no/such", "P").replace("m.yaml", "S") == run.err.replace("shadow", "P").replace(
        "spec.yaml", "S")


def test_a_catalog_from_a_pipe_is_refused(tmp_path: Path) -> None:
    spec = _spec(tmp_path, TINY + "catalogs: [/dev/stdin]\n")
    run = designer("validate", str(spec), cwd=tmp_path, stdin=b"schema_version: 1\nkind: switches\nitems: []\n")
    assert run.returncode == 2 and "/dev/stdin" in run.err


@pytest.mark.parametrize("edit, words", [
    (("horizon: 1 years", "horizon: 1 s"), "horizon"),
    (("version: 1", "version: true"), "version"),
    (("deadline: 30 days", "deadline: 1e13 years"), "deadline"),
    (("global_batch: 64", "global_batch: 1e300T"), "global_batch"),
    (("budget: {total: $2M}", "budget: {total: $1e308B}"), "budget"),
])
def test_absurd_values_are_refused_by_validate_and_by_solve(tmp_path: Path, edit: tuple[str, str], words: str) -> None:
    spec = _spec(tmp_path, TINY.replace(*edit))
    for command in ("validate", "solve", "estimate"):
        run = designer(command, str(spec), cwd=tmp_path)
        assert run.returncode == 2 and words in run.err, (command, run.err)


# ---------------------------------------------------------------- bounded time (item 5)

# What the command may take beyond its limit: start-up (imports) and the one step in progress when
# the limit passes. Measured: `--time-limit 5` on 40 workloads ended after 6.7 s at a load average
# of 4 on 2 cores, and the same solve without a limit ran past 190 s, so this bound still fails
# when the limit is ignored while leaving room for a loaded CI machine.
_OVERRUN_S = 25.0


def test_time_limit_5_on_40_workloads_ends_within_a_few_seconds_of_it(tmp_path: Path) -> None:
    from benchmarks.specs_large import large_spec

    spec = _spec(tmp_path, large_spec(40), "large-40.yaml")
    out = tmp_path / "design.yaml"
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "designer", "solve", str(spec), "--time-limit", "5", "-o", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=5 + 4 * _OVERRUN_S)
    wall = time.monotonic() - start
    assert wall < 5 + _OVERRUN_S, f"took {wall:.1f} s with --time-limit 5"
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-2000:]
    if proc.returncode == 0:  # the best design found by then, said to be feasible (with its gap), written
        assert "status: feasible" in out.read_text(encoding="utf-8") or "status: optimal" in out.read_text(encoding="utf-8")
    else:
        assert proc.returncode == 4 and "time limit" in proc.stderr and not out.exists(), proc.stderr[-2000:]


# ---------------------------------------------------------------- design files (items 7, 8)


def _design_file(tmp_path: Path, text: str, name: str = "d.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("old, new", [
    (re.search(r"  total_usd: '[\d.]+'", DESIGN).group(0), "  total_usd: '" + "9" * 400 + ".00'"),
    (re.search(r"  topology: \w+\n", DESIGN).group(0), "  topology: hypercube\n"),
    (re.search(r"  nodes: \d+\n", DESIGN).group(0), "  nodes: 0\n"),
    (re.search(r"  utilization: [\d.]+\n", DESIGN).group(0), "  utilization: 7.5\n"),
])
def test_design_files_out_of_range_are_refused_by_every_reader(tmp_path: Path, old: str, new: str) -> None:
    bad = _design_file(tmp_path, DESIGN.replace(old, new, 1))
    good = _design_file(tmp_path, DESIGN, "good.yaml")
    for args in (["bom", str(bad)], ["explain", str(bad)], ["diff", str(good), str(bad)], ["draw", str(bad)],
                 ["report", str(bad)], ["bom", str(bad), "--trust"]):
        run = designer(*args, cwd=tmp_path)
        assert run.returncode == 2 and run.err.startswith(f"error: {bad}:") and run.err.count("\n") == 1, args


def test_an_edited_spec_digest_is_caught_and_diff_compares_content(tmp_path: Path) -> None:
    good = _design_file(tmp_path, DESIGN, "good.yaml")
    edited = _design_file(tmp_path, re.sub(r"spec_digest: \w+", "spec_digest: " + "ab" * 32, DESIGN))
    run = designer("diff", str(good), str(edited), cwd=tmp_path)
    assert run.returncode == 2 and "design_digest: does not match" in run.err
    trusted = designer("diff", str(good), str(edited), "--trust", cwd=tmp_path)
    assert trusted.returncode == 0 and "warning:" in trusted.err and "spec_digest" in trusted.out


def test_escape_sequences_in_a_design_are_shown_not_obeyed(tmp_path: Path) -> None:
    from designer.design import dump_design, parse_design
    import dataclasses

    design = parse_design(DESIGN)
    evil = "x\x1b[2J\x1b]8;;http://evil/\x07\n| forged | row |\u202e"
    line = dataclasses.replace(design.bom[0], source=evil)
    path = _design_file(tmp_path, dump_design(dataclasses.replace(design, spec_name=evil, bom=(line,) + design.bom[1:])))
    for fmt in ("github", "plain", "csv", "json"):
        run = designer("bom", str(path), "--format", fmt, cwd=tmp_path)  # designer() checks: no raw control
        assert run.returncode == 0 and "forged" in run.out
        assert "\n| forged" not in run.out  # no forged table row
    assert designer("explain", str(path), cwd=tmp_path).returncode == 0


# ---------------------------------------------------------------- the process fuzzer


_FUZZ = settings(max_examples=RUNS, deadline=None, suppress_health_check=list(HealthCheck))


@_FUZZ
@given(text=gen.spec_texts())
def test_fuzzed_specs_through_the_command_line(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    tmp_path = tmp_path_factory.mktemp("spec")
    spec = _spec(tmp_path, text)
    before = _digest(spec)
    run = designer("validate", str(spec), cwd=tmp_path)
    if run.returncode == 0:  # what validate accepts, every command takes without an internal error
        designer("estimate", str(spec), cwd=tmp_path)
        if LONG:
            designer("solve", str(spec), "--time-limit", "10", cwd=tmp_path, timeout=300)
    assert _digest(spec) == before


@_FUZZ
@given(text=gen.catalog_texts())
def test_fuzzed_catalogs_through_the_command_line(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    tmp_path = tmp_path_factory.mktemp("catalog")
    catalog = tmp_path / "cat.yaml"
    catalog.write_text(text, encoding="utf-8")
    designer("validate", str(_spec(tmp_path, TINY + "catalogs: [cat.yaml]\n")), cwd=tmp_path)
    designer("catalog", "list", "-c", str(catalog), cwd=tmp_path)


@_FUZZ
@given(data=st.data())
def test_fuzzed_design_files_through_the_command_line(tmp_path_factory: pytest.TempPathFactory, data) -> None:
    text = data.draw(gen.mutated_text(DESIGN))
    tmp_path = tmp_path_factory.mktemp("design")
    path = _design_file(tmp_path, text)
    for command in ("bom", "explain"):
        designer(command, str(path), cwd=tmp_path)
