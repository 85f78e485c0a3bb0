"""The command line's terminal habits: --quiet, colour only on a terminal (--no-color, NO_COLOR), shell
completion, and a start-up that loads neither the solver nor the spec reader for --help."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from designer.cli import app
from designer.cli import run as cli_run
from tiny_spec import TINY

ROOT = Path(__file__).resolve().parents[2]
RUNNER = CliRunner()
RED = "\x1b[31m"


def _on_a_terminal(args: list[str], env: dict[str, str] | None = None) -> str:
    """What ``python -m designer ARGS`` writes to a pseudo-terminal (stdout and stderr both)."""
    leader, follower = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    full_env.update({"TERM": "xterm", **(env or {})})
    proc = subprocess.Popen([sys.executable, "-m", "designer", *args], stdin=subprocess.DEVNULL, stdout=follower,
                            stderr=follower, cwd=ROOT, env=full_env)
    os.close(follower)
    out = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed: the process ended
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=60)
    os.close(leader)
    return out.decode()


def _bad_spec(tmp_path: Path) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(TINY.replace("budget: {total: $2M}", "budget: {total: 2 apples}"))
    return path


def test_quiet_drops_the_ok_line_but_keeps_errors(tmp_path):
    good = tmp_path / "tiny.yaml"
    good.write_text(TINY)
    assert RUNNER.invoke(app, ["validate", str(good)]).stdout == f"{good}: ok\n"
    quiet = RUNNER.invoke(app, ["--quiet", "validate", str(good)])
    assert (quiet.exit_code, quiet.stdout) == (0, "")
    bad = RUNNER.invoke(app, ["-q", "validate", str(_bad_spec(tmp_path))])
    assert bad.exit_code == 2
    assert "error:" in bad.stderr and "budget" in bad.stderr


def test_quiet_does_not_hide_results(tmp_path):
    out = RUNNER.invoke(app, ["--quiet", "catalog", "list", "--kind", "gpu"])
    assert out.exit_code == 0
    assert "h100-sxm " in out.stdout


def test_errors_are_red_on_a_terminal_only(tmp_path):
    bad = str(_bad_spec(tmp_path))
    coloured = _on_a_terminal(["validate", bad])
    assert f"{RED}error:" in coloured
    assert RED not in _on_a_terminal(["--no-color", "validate", bad])
    assert RED not in _on_a_terminal(["validate", bad], {"NO_COLOR": "1"})
    assert RED not in _on_a_terminal(["validate", bad], {"TERM": "dumb"})
    piped = subprocess.run([sys.executable, "-m", "designer", "validate", bad], capture_output=True, text=True,
                           cwd=ROOT)
    assert piped.returncode == 2 and "\x1b[" not in piped.stderr


def test_paint_diff_colours_only_marked_lines(monkeypatch):
    class Tty:
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdout", Tty())
    monkeypatch.setitem(cli_run.state, "color", True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    text = "+ switch a\n~ total 1 -> 2\n- cable b\n  unchanged\n3 added\n"
    painted = cli_run.paint_diff(text)
    assert painted.splitlines() == ["\x1b[32m+ switch a\x1b[0m", "\x1b[33m~ total 1 -> 2\x1b[0m",
                                    "\x1b[31m- cable b\x1b[0m", "  unchanged", "3 added"]
    monkeypatch.setenv("NO_COLOR", "1")
    assert cli_run.paint_diff(text) == text


def test_shell_completion_is_offered():
    help_text = RUNNER.invoke(app, ["--help"]).stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text
    script = subprocess.run([sys.executable, "-m", "designer", "--show-completion", "bash"], capture_output=True,
                            text=True, cwd=ROOT)
    assert script.returncode == 0 and "COMPREPLY" in script.stdout


_PROBE = """
import sys
from designer.cli.commands import app
try:
    app(args=sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
print(" ".join(sorted({m.split(".")[0] for m in sys.modules} | {m for m in sys.modules if m.startswith("designer.")})))
"""


def _modules_after(*args: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, cwd=ROOT, check=True)
    return set(out.stdout.split("\n")[-2].split())


def test_help_loads_no_library_and_validate_no_solver():
    # Start-up time is the import of what a command needs (benchmarks/startup.py prints it); these are the
    # heavy packages that must stay out of a command that does not use them.
    helped = _modules_after("--help")
    assert not helped & {"pydantic", "yaml", "networkx", "pulp", "rich", "designer.catalog.types",
                         "designer.planner", "designer.optimize"}
    validated = _modules_after("validate", str(ROOT / "examples" / "quickstart.yaml"))
    assert "pydantic" in validated  # the spec reader does run
    assert not validated & {"networkx", "pulp", "matplotlib", "rich", "designer.topology", "designer.study.executor"}
