"""``designer validate``'s work: check spec files against their catalogs and print what was found.

Free of typer, so that :mod:`designer.cli.shortcut` can run a plain ``validate`` without loading the
command-line library; :func:`designer.cli.spec.validate` (the typer command) calls the same
:func:`check_specs`.
"""

from __future__ import annotations

__all__ = ["STDIN", "STDIN_NAME", "FORMATS", "check_specs", "read_stdin"]

import sys
from pathlib import Path
from typing import Any, Sequence

from designer.cli.run import echo, err, info, one_line
from designer.errors import Diagnostic, InputError, Location

STDIN = "-"
STDIN_NAME = "<stdin>"
FORMATS = ("text", "json")


def _stdin_bytes() -> Any:
    typer: Any = sys.modules.get("typer")
    return typer.get_binary_stream("stdin") if typer is not None else sys.stdin.buffer


def read_stdin() -> str:
    """The spec on standard input, as text; at most the YAML reader's size limit is read.

    Raises:
        InputError: larger than the limit, or not UTF-8.
    """
    from designer.spec import yamlio

    raw = _stdin_bytes().read(yamlio.MAX_BYTES + 1)
    if len(raw) > yamlio.MAX_BYTES:
        raise InputError(f"standard input is larger than the limit of {yamlio.MAX_BYTES:,} bytes", Location(STDIN_NAME))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", Location(STDIN_NAME)) from None


def _check(path: Path) -> tuple[str, tuple[Diagnostic, ...]]:
    """(the file's name as shown, its diagnostics)."""
    from designer.planner import inputs

    if str(path) == STDIN:
        try:
            text = read_stdin()
        except InputError as exc:
            return STDIN_NAME, (exc.diagnostic(),)
        return STDIN_NAME, inputs.check_inputs(text=text, file=STDIN_NAME, base_dir=Path.cwd())
    return str(path), inputs.check_inputs(path)


def _diagnostic_json(d: Diagnostic) -> dict[str, Any]:
    loc = d.location
    return {"file": loc.file, "line": loc.line, "column": loc.col if loc.line is None else (loc.col or 1),
            "severity": d.severity, "message": d.message, "hint": d.hint, "path": loc.path or None}


def check_specs(specs: Sequence[Path], fmt: str) -> int:
    """Check every spec (``-``: standard input) and print its diagnostics in ``fmt`` (text or json).

    Text: one ``severity: FILE:LINE:COL: message`` line per problem on stderr and ``FILE: ok`` on
    stdout for a valid file; json: one document (docs/contract.md, ``validate --format json``).

    Returns:
        The exit code: 0 every file valid (warnings allowed), 2 an error in any.
    """
    results = [_check(path) for path in specs]
    errors = sum(d.severity == "error" for _, ds in results for d in ds)
    if fmt == "json":
        from designer.report import jsondoc

        warnings = sum(d.severity == "warning" for _, ds in results for d in ds)
        files = [{"file": name, "valid": not any(d.severity == "error" for d in ds),
                  "error_count": sum(d.severity == "error" for d in ds),
                  "warning_count": sum(d.severity == "warning" for d in ds)} for name, ds in results]
        doc = {"valid": errors == 0, "error_count": errors, "warning_count": warnings, "files": files,
               "diagnostics": [_diagnostic_json(d) for _, ds in results for d in ds]}
        echo(jsondoc.dumps(doc), nl=False)
        return 2 if errors else 0
    for name, ds in results:
        for d in ds:
            err(f"{d.severity}: {one_line(d.located())}")
        if not any(d.severity == "error" for d in ds):
            count = len(ds)
            info(f"{name}: ok" + (f" ({count} warning{'s' if count > 1 else ''})" if count else ""))
    return 2 if errors else 0
