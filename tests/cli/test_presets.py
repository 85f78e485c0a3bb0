"""`designer presets`: every model preset with its architecture and source; one in full; JSON."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from designer.cli import app
from designer.spec import presets

RUNNER = CliRunner()


def run(*args: str):
    return RUNNER.invoke(app, ["presets", *args])


def test_the_table_lists_every_preset_with_its_architecture():
    out = run()
    assert out.exit_code == 0
    rows = {line.split()[0]: line.split() for line in out.stdout.splitlines()[2:] if line and line[0].isalnum()
            and line.split()[0] in presets.PRESETS}
    assert sorted(rows) == list(presets.preset_names())
    # Llama 3 70B (Meta 2024, Table 3): 80 layers, model dim 8192, 64 heads with 8 KV heads, FFN 28672.
    assert rows["llama3-70b"][:9] == ["llama3-70b", "70.6B", "80", "8192", "64", "(8)", "28672", "8192", "128256"]
    assert rows["llama3-70b"][9] == "GQA" and rows["gpt3-175b"][9] == "MHA" and rows["deepseek-v3"][9] == "MLA"
    assert "256 experts + 1 shared, top-8" in out.stdout and "8 experts, top-2" in out.stdout


def test_one_preset_in_full_with_its_source():
    out = run("mixtral-8x7b")
    assert out.exit_code == 0
    assert out.stdout.startswith("mixtral-8x7b: 46.7B parameters, GQA attention, 8 experts, top-2\n")
    assert "  kv_heads   8\n" in out.stdout and "  gated_mlp  true\n" in out.stdout
    assert "Jiang et al., Mixtral of Experts (2024)" in out.stdout


def test_json_is_the_presets_as_the_spec_names_their_fields():
    doc = json.loads(run("--json").stdout)
    assert doc["format_version"] == 1
    assert [p["name"] for p in doc["presets"]] == list(presets.preset_names())
    for p in doc["presets"]:
        want = {k: (dict(v) if hasattr(v, "items") else v) for k, v in presets.PRESETS[p["name"]].items()}
        assert {k: v for k, v in p.items() if k not in ("name", "attention")} == want
    one = json.loads(run("deepseek-v3", "--json").stdout)
    assert one["format_version"] == 1 and one["name"] == "deepseek-v3" and one["moe"]["experts"] == 256


def test_an_unknown_preset_is_bad_input_with_the_closest_name():
    out = run("llama3-7b")
    assert out.exit_code == 2
    assert out.stderr == "error: presets: unknown preset 'llama3-7b'; did you mean 'llama3-70b'?\n"
