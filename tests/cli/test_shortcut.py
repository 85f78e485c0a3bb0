"""`designer validate` run without typer (designer.cli.shortcut) prints the same bytes and exits with
the same code as the typer command, and every other command line still goes to typer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from designer.cli.shortcut import Validate, plain_validate
from tiny_spec import TINY

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "examples" / "quickstart.yaml")

# Two problems, one of them a misspelt key, and a file that is not there.
BAD = TINY.replace("tokens: 20B", "tokns: 20B").replace("max_nodes: 4", "max_nodes: -4")
# Through typer whatever the command line: what the console script ran before the shortcut.
TYPER = "import sys; from designer.cli.commands import run_app; sys.argv[0] = 'designer'; run_app()"
SHORTCUT = "import sys; from designer.cli import main; sys.argv[0] = 'designer'; main()"


@pytest.mark.parametrize("argv, call", [
    (["validate", "a.yaml"], Validate(("a.yaml",))),
    (["validate", "a.yaml", "-", "b.yaml"], Validate(("a.yaml", "-", "b.yaml"))),
    (["-q", "--no-color", "validate", "--format", "json", "a.yaml"],
     Validate(("a.yaml",), "json", quiet=True, no_color=True)),
    (["--debug", "validate", "a.yaml", "-f", "text", "b.yaml"], Validate(("a.yaml", "b.yaml"), debug=True)),
    (["validate", "--format=json", "a.yaml"], Validate(("a.yaml",), "json")),
])
def test_the_plain_forms_are_recognised(argv, call):
    assert plain_validate(argv, {}) == call


@pytest.mark.parametrize("argv", [
    [], ["--help"], ["--version"], ["validate"], ["validate", "--help"], ["validate", "-h", "a.yaml"],
    ["validate", "--format", "JSON", "a.yaml"], ["validate", "--format", "json", "-f", "json", "a.yaml"],
    ["validate", "--format"], ["validate", "-fjson", "a.yaml"], ["validate", "--", "a.yaml"],
    ["validate", "a.yaml", "--quiet"], ["-q", "-q", "validate", "a.yaml"], ["--quiet=1", "validate", "a.yaml"],
    ["valid", "a.yaml"], ["solve", "a.yaml"], ["validate", ""], ["validate", "a\udcffb.yaml"],
])
def test_everything_else_goes_to_typer(argv):
    assert plain_validate(argv, {}) is None


def test_shell_completion_goes_to_typer():
    assert plain_validate(["validate", "a.yaml"], {"_DESIGNER_COMPLETE": "complete_bash"}) is None


def _run(code: str, args: list[str], stdin: str = "") -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-c", code, *args], input=stdin, capture_output=True, text=True,
                          cwd=ROOT, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "NO_COLOR": ""})
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("args", [
    ["validate", QUICKSTART],
    ["-q", "validate", QUICKSTART],
    ["--no-color", "validate", "--format=json", QUICKSTART, "-"],
    ["validate", "-", "no-such-file.yaml", QUICKSTART],
    ["validate", "-f", "json", "-", "no-such-file.yaml"],
])
def test_the_shortcut_prints_what_typer_prints(args):
    shortcut = _run(SHORTCUT, args, BAD)
    assert shortcut == _run(TYPER, args, BAD)
    assert shortcut[0] == (0 if "-" not in args and "no-such-file.yaml" not in args else 2)
    assert shortcut[1] or shortcut[2] or "-q" in args


def test_a_plain_validate_loads_no_typer():
    probe = ("import sys\nfrom designer.cli import main\ntry:\n    main()\nexcept SystemExit as exc:\n"
             "    print(exc.code, 'typer' in sys.modules, 'importlib.metadata' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe, "validate", QUICKSTART], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.splitlines()[-1] == "0 False False"
