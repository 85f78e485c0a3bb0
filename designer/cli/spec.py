"""``designer validate`` and ``designer schema``: check specs against their catalogs; print the spec's JSON Schema."""

from __future__ import annotations

__all__ = ["ValidateFormat", "validate", "schema", "presets", "read_stdin"]

from enum import Enum
from pathlib import Path
from typing import Any, List, Optional

import typer

from designer.cli.run import err, info, one_line, run
from designer.errors import Diagnostic, InputError, Location

STDIN = "-"
STDIN_NAME = "<stdin>"


class ValidateFormat(str, Enum):
    text = "text"
    json = "json"


def read_stdin() -> str:
    """The spec on standard input, as text; at most the YAML reader's size limit is read.

    Raises:
        InputError: larger than the limit, or not UTF-8.
    """
    from designer.spec import yamlio

    raw = typer.get_binary_stream("stdin").read(yamlio.MAX_BYTES + 1)
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


def validate(
    specs: List[Path] = typer.Argument(..., metavar="SPEC...", show_default=False,
                                       help="Spec files to check; - reads one from standard input."),
    fmt: ValidateFormat = typer.Option(ValidateFormat.text, "--format", "-f",
                                       help="text: FILE:LINE:COL: message lines; json: one document for scripts."),
) -> None:
    """Check specs and the catalogs they name: every problem of each file, located FILE:LINE:COL.

    Exit 0 valid (warnings allowed), 2 invalid.
    """
    def body() -> int:
        results = [_check(path) for path in specs]
        errors = sum(d.severity == "error" for _, ds in results for d in ds)
        if fmt is ValidateFormat.json:
            from designer.report import jsondoc

            warnings = sum(d.severity == "warning" for _, ds in results for d in ds)
            files = [{"file": name, "valid": not any(d.severity == "error" for d in ds),
                      "error_count": sum(d.severity == "error" for d in ds),
                      "warning_count": sum(d.severity == "warning" for d in ds)} for name, ds in results]
            doc = {"valid": errors == 0, "error_count": errors, "warning_count": warnings, "files": files,
                   "diagnostics": [_diagnostic_json(d) for _, ds in results for d in ds]}
            typer.echo(jsondoc.dumps(doc), nl=False)
            return 2 if errors else 0
        for name, ds in results:
            for d in ds:
                err(f"{d.severity}: {one_line(d.located())}")
            if not any(d.severity == "error" for d in ds):
                count = len(ds)
                info(f"{name}: ok" + (f" ({count} warning{'s' if count > 1 else ''})" if count else ""))
        return 2 if errors else 0

    run(body)


def schema() -> None:
    """Print the JSON Schema of the spec (draft 2020-12) for editors and CI: values as written, with units."""
    from designer.spec import jsonschema

    run(lambda: typer.echo(json_text(jsonschema.spec_json_schema())))


def presets(
    name: Optional[str] = typer.Argument(None, metavar="[NAME]", show_default=False,
                                         help="One preset: every field as `model:` names it, and its source."),
    as_json: bool = typer.Option(False, "--json", help="JSON for scripts instead of a table."),
) -> None:
    """List the model presets a spec can name (`model: {preset: NAME}`): architecture and source."""
    def body() -> int:
        import difflib

        from designer.report import jsondoc, presets as report_presets
        from designer.spec import presets as spec_presets

        if name is not None and name not in spec_presets.PRESETS:
            close = difflib.get_close_matches(name, spec_presets.preset_names(), n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"known presets: {', '.join(spec_presets.preset_names())}"
            raise InputError(f"unknown preset '{name}'; {hint}", Location("presets"))
        if as_json:
            doc = report_presets.presets_to_json_dict(spec_presets.PRESETS)
            if name is not None:
                doc = next(p for p in doc["presets"] if p["name"] == name)
            typer.echo(jsondoc.dumps(doc), nl=False)
        else:
            known = spec_presets.PRESETS
            text = report_presets.render_presets(known) if name is None else report_presets.render_preset(known, name)
            typer.echo(text, nl=False)
        return 0

    run(body)


def json_text(doc: Any) -> str:
    """Indented JSON with sorted keys (the schema is a reference document: stable for diffs)."""
    import json

    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)
