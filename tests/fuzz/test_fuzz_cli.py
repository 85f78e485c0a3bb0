"""`designer validate` on mutated and random specs and user catalogs, in-process: exit 0 or 2, one
located line on stderr per problem, in the project's words, never a traceback."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import given, strategies as st
from typer.testing import CliRunner

from designer.cli import app

from . import gen

RUNNER = CliRunner()
# pydantic's own phrasing, which must never reach a user: messages are in the project's words.
PYDANTIC_WORDS = re.compile(r"Input should|should (be|have)|after validation|Value error|validation error|"
                            r"Field required|Extra inputs|valid (integer|string|number|boolean|dictionary|list)")

# A valid spec naming a user catalog; the catalog is what gets mutated.
SPEC_WITH_CATALOG = """\
version: 1
name: fuzz
workloads:
  - name: w
    model: {preset: llama3-8b}
    tokens: 20B
    global_batch: 64
catalogs: [user.yaml]
"""


@given(st.one_of(gen.spec_texts().map(lambda t: t.encode("utf-8")), st.binary(max_size=2000)))
def test_validate_on_any_spec(raw):
    gen.CASES["cli spec"] += 1
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spec.yaml"
        path.write_bytes(raw)
        result = RUNNER.invoke(app, ["validate", str(path)])
        gen.assert_cli_outcome(result, {str(path)})
        assert not PYDANTIC_WORDS.search(result.stderr), result.stderr[:2000]
        if result.exit_code == 0:
            assert result.stdout.startswith(f"{path}: ok")


@given(gen.catalog_texts())
def test_validate_with_a_mutated_user_catalog(text):
    gen.CASES["cli catalog"] += 1
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "spec.yaml"
        spec.write_text(SPEC_WITH_CATALOG)
        (Path(folder) / "user.yaml").write_text(text, encoding="utf-8")
        result = RUNNER.invoke(app, ["validate", str(spec)])
        gen.assert_cli_outcome(result, {str(spec), str(Path(folder) / "user.yaml")})
