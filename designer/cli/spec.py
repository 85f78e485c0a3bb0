"""``designer validate`` and ``designer schema``: check specs against their catalogs; print the spec's JSON Schema."""

from __future__ import annotations

__all__ = ["validate", "schema"]

import json
from pathlib import Path
from typing import List

import typer

from designer.cli.run import err, one_line, run
from designer.errors import InputError


def validate(specs: List[Path] = typer.Argument(..., help="Spec files to check.", show_default=False)) -> None:
    """Check specs (and the catalogs they name); errors as FILE:LINE:COL: message. Exit 0 valid, 2 invalid."""
    from designer.planner import inputs

    def body() -> int:
        bad = 0
        for path in specs:
            try:
                spec, _ = inputs.load_inputs(path)
            except InputError as exc:
                err(f"error: {one_line(exc.located())}")
                bad += 1
            else:
                for warning in spec.warnings:
                    err(f"warning: {one_line(warning)}")
                typer.echo(f"{path}: ok")
        return 2 if bad else 0

    run(body)


def schema() -> None:
    """Print the JSON Schema of the spec (for editor completion and validation)."""
    from designer.spec import schema as spec_schema

    run(lambda: typer.echo(json.dumps(spec_schema.spec_json_schema(), indent=2, sort_keys=True)))
