"""``designer validate``, ``schema`` and ``presets``: check specs against their catalogs (the work is
:mod:`designer.cli.checking`), print the spec's JSON Schema, list the model presets."""

from __future__ import annotations

__all__ = ["ValidateFormat", "validate", "schema", "presets"]

from enum import Enum
from pathlib import Path
from typing import Any, List, Optional

import typer

from designer.cli.run import run
from designer.errors import InputError, Location


class ValidateFormat(str, Enum):
    text = "text"
    json = "json"


def validate(
    specs: List[Path] = typer.Argument(..., metavar="SPEC...", show_default=False,
                                       help="Spec files to check; - reads one from standard input."),
    fmt: ValidateFormat = typer.Option(ValidateFormat.text, "--format", "-f",
                                       help="text: FILE:LINE:COL: message lines; json: one document for scripts."),
) -> None:
    """Check specs and the catalogs they name: every problem of each file, located FILE:LINE:COL.

    Exit 0 valid (warnings allowed), 2 invalid.
    """
    from designer.cli import checking

    run(lambda: checking.check_specs(specs, fmt.value))


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
