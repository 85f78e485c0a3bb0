"""The spec loader on bad input: every problem is a SpecError at the right FILE:LINE:COL, and
`designer validate` turns it into one line on stderr and exit 2, never a traceback."""

from __future__ import annotations

import json
import re
import time
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from designer import spec
from designer.cli import app
from designer.spec import units
from tiny_spec import TINY
from designer.errors import CatalogError, InputError, SpecError

ROOT = Path(__file__).resolve().parents[2]
RUNNER = CliRunner()

# A small valid spec (tests/tiny_spec.py) with facility overrides.
BASE = TINY + """\
facility: {electricity: 0.08 USD/kWh, pue: 1.3, rack_power: 40 kW}
"""

MARK = "⟦"  # in a case's text: where the error must point (removed before writing the file)


def unmark(text: str) -> tuple[str, int, int]:
    """The text without its marker, and the marker's 1-based line and column."""
    i = text.index(MARK)
    before = text[:i]
    return text.replace(MARK, "", 1), before.count("\n") + 1, i - (before.rfind("\n") + 1) + 1


def edit(old: str, new: str) -> str:
    assert BASE.count(old) == 1, old
    return BASE.replace(old, new)


def validate(*paths: Path):
    return RUNNER.invoke(app, ["validate", *map(str, paths)])


def assert_one_located_line(result, path: Path, line: int | None, col: int | None, pattern: str) -> str:
    """exit 2, nothing on stdout, exactly one stderr line ``error: FILE:LINE:COL: message``."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    where = f"{path}:{line}:{col}" if line is not None else f"{path}"
    assert lines[0].startswith(f"error: {where}: "), (lines[0], where)
    message = lines[0][len(f"error: {where}: "):]
    assert re.search(pattern, message), message
    return message


# --- each bad-input class: located at the right node, and one line from `designer validate` ---------

CASES = {
    "list where a mapping belongs": (edit("budget: {total: $2M}", "budget: ⟦[$1M, $2M]"),
                                     r"^budget: expected a mapping \(key: value pairs\), got a list$"),
    "top level is a list": ("⟦- version: 1\n- name: x\n", r"expected a mapping at the top level"),
    "top level is a scalar": ("⟦just text\n", r"expected a mapping at the top level.*got text"),
    "unknown key": (BASE + "⟦colour: red\n", r"^unknown key 'colour' in the spec; known keys: version, name"),
    "misspelt key": (edit("    deadline: 30 days", "    ⟦deadlin: 30 days"),
                     r"^unknown key 'deadlin' in workloads\[0\]; did you mean 'deadline'\?$"),
    "misspelt nested key": (edit("  min_utilization: 0.5", "  ⟦min_utilisation: 0.5"),
                            r"did you mean 'min_utilization'\?$"),
    "key named like a validator": (edit("    deadline: 30 days", "    deadline: 30 days\n    ⟦_x: 1"),
                                   r"^unknown key '_x' in workloads\[0\]"),
    "key named like a type": (BASE + "⟦int: 1\n", r"^unknown key 'int' in the spec"),
    "missing required key": (edit("  - name: small\n", "  - ⟦name: small\n").replace("    global_batch: 64\n", ""),
                             r"^workloads\[0\]\.global_batch: required key is missing$"),
    "negative count": (edit("global_batch: 64", "global_batch: ⟦-64"),
                       r"^workloads\[0\]\.global_batch: must be at least 1 \(got -64\)$"),
    "negative tokens": (edit("tokens: 20B", "tokens: ⟦-20B"), r"^workloads\[0\]\.tokens: a count cannot be negative"),
    "zero nodes": (BASE + "system: {nodes: ⟦0}\n", r"^system\.nodes: must be at least 1 \(got 0\)$"),
    "zero GPUs in a workload": (edit("    deadline: 30 days", "    deadline: 30 days\n    gpus: ⟦0"),
                                r"^workloads\[0\]\.gpus: must be at least 1 \(got 0\)$"),
    "fractional count": (edit("global_batch: 64", "global_batch: ⟦64.5"), r"^workloads\[0\]\.global_batch"),
    "unknown unit": (edit("deadline: 30 days", "deadline: ⟦30 fortnights"),
                     r"unknown time unit 'fortnights' in '30 fortnights'; use ns, us"),
    "bare number": (edit("deadline: 30 days", "deadline: ⟦30"), r'needs a unit; did you mean "30 days"\?$'),
    # A horizon is counted in years: a bare 3 is far likelier 3 years than 3 days.
    "bare horizon": (edit("horizon: 1 years", "horizon: ⟦3"), r'^horizon: a duration needs a unit; did you mean "3 years"\?$'),
    "money without currency": (edit("budget: {total: $2M}", "budget: {total: ⟦2000000}"),
                               r'needs a unit; did you mean "\$2000000"\?$'),
    "energy where a power belongs": (edit("rack_power: 40 kW", "rack_power: ⟦40 kWh"),
                                     r"^facility\.rack_power: '40 kWh' is an energy, not a power"),
    "duration where money belongs": (edit("budget: {total: $2M}", "budget: {total: ⟦3 years}"),
                                     r"^budget\.total: cannot read '3 years' as money"),
    "unknown preset": (edit("preset: llama3-8b", "preset: ⟦llama3-8bb"),
                       r"^unknown model preset 'llama3-8bb'; did you mean 'llama3-8b'\?$"),
    "unknown choice": (edit("fabrics: [infiniband]", "fabrics: [infiniband, ⟦ethernt]"),
                       r"^constraints\.fabrics\[1\]: 'ethernt' is not allowed: .*did you mean 'ethernet'\?$"),
    "utilization above 1": (edit("min_utilization: 0.5", "min_utilization: ⟦1.5"),
                            r"^constraints\.min_utilization: a fraction must lie between 0 and 1"),
    "utilization of 150%": (edit("min_utilization: 0.5", "min_utilization: ⟦150%"), r"between 0 and 1"),
    "utilization of exactly 1": (edit("min_utilization: 0.5", "min_utilization: ⟦1.0"), r"must be below 1"),
    "NaN": (edit("pue: 1.3", "pue: ⟦.nan"), r"^'.nan' is not a finite number$"),
    "infinity": (edit("pue: 1.3", "pue: ⟦-.inf"), r"not a finite number$"),
    "wrong type": (edit("name: tiny", "name: ⟦[a]"), r"^name: expected text, got a list$"),
    "name with a line break": (edit("name: tiny", 'name: ⟦"ti\\nny"'), r"^name: must be one line of text"),
    "version 2": (edit("version: 1", "version: ⟦2"), r"^version: 2 is not allowed: expected 1$"),
    "duplicate workload": (BASE.replace("constraints:", "  - name: ⟦small\n    model: {preset: llama3-8b}\n"
                                                      "    tokens: 1B\n    global_batch: 8\nconstraints:"),
                           r"^duplicate workload name 'small'; give each workload its own name$"),
    "duplicate YAML key": (BASE + "⟦name: again\n", r"^duplicate key 'name'$"),
    "malformed YAML": (edit("budget: {total: $2M}", "budget: {total: $2M\nworkloads_⟦: 1"),
                       r"^malformed YAML: "),
    "python object tag": (edit("name: tiny", "name: ⟦!!python/object/apply:os.system [ls]"),
                          r"^unsupported YAML tag 'tag:yaml.org,2002:python/object/apply:os.system'$"),
    "tokens below one sequence": (edit("tokens: 20B", "tokens: ⟦100"),
                                  r"tokens \(100\) is less than one sequence \(8192\)"),
    "tokens below one step": (edit("tokens: 20B", "tokens: ⟦300K"),
                              r"^tokens \(300,000\) is less than one step: global_batch 64 x 8,192 tokens per "
                              r"sequence = 524,288; lower global_batch or train more tokens$"),
    "heads not dividing": (edit("model: {preset: llama3-8b}",
                                "model: {layers: 2, hidden: 64, heads: 8, kv_heads: ⟦3, ffn: 128, "
                                "seq_len: 128, vocab: 1000}"), r"kv_heads \(3\) must divide heads \(8\)"),
    "10**9 nodes": (BASE + "system: {nodes: ⟦1000000000}\n",
                    r"^nodes=1,000,000,000 is beyond any buildable cluster \(limit 100,000\)$"),
    "10**9 GPUs in a workload": (edit("    deadline: 30 days", "    deadline: 30 days\n    gpus: ⟦1000000000"),
                                 r"^gpus=1,000,000,000 is beyond any buildable cluster \(limit 1,000,000\)$"),
    "10**9 max_nodes": (edit("max_nodes: 4", "max_nodes: ⟦1000000000"),
                        r"^max_nodes=1,000,000,000 is beyond any buildable cluster"),
    "10**9 tensor parallel": (edit("    deadline: 30 days", "    deadline: 30 days\n    parallelism: {tp: ⟦1000000000}"),
                              r"^tp=1,000,000,000 is beyond any buildable cluster"),
    "networks neither a mapping nor a boolean": (BASE + "networks: ⟦3\n",
                                                   r"^networks: expected true, false or a mapping of storage, "
                                                   r"inband, oob; got the number 3$"),
    "a boolean written 1": (BASE + "networks: {oob: ⟦1}\n",
                            r"^networks\.oob: expected true or false, got the number 1; write true \(a number is not"),
    "a boolean quoted 'no'": (BASE + "networks: {storage: ⟦'no'}\n",
                              r"^networks\.storage: expected true or false, got the text 'no'; write false, without quotes$"),
    "networks quoted 'no'": (BASE + "networks: ⟦'no'\n", r"^networks: expected true, false or a mapping of storage, "
                                                      r"inband, oob; got the text 'no'; write false, without quotes$"),
    "a software switch written 0": (edit("    deadline: 30 days", "    deadline: 30 days\n    software: {dropout: ⟦0}"),
                                    r"software\.dropout: expected true or false, got the number 0; write false"),
    "a constraint switch quoted": (edit("max_nodes: 4", "max_nodes: 4\n  allow_nic_downrate: ⟦'yes'"),
                                   r"allow_nic_downrate: expected true or false, got the text 'yes'; write true"),
    "storage enabled written on": (BASE + "storage: {enabled: ⟦'on'}\n", r"storage\.enabled: .*write true, without"),
    "an unknown network": (BASE + "networks: {⟦fabric: false}\n", r"fabric"),
    "long value quoted short": (edit("name: tiny", "objective: ⟦" + "x" * 5000 + "\nname: tiny"),
                                r"^objective: 'x{50,60}\.\.\. is not allowed"),
}


@pytest.mark.parametrize("text, pattern", CASES.values(), ids=CASES.keys())
def test_bad_spec_is_located_and_validate_exits_2(tmp_path, text, pattern):
    text, line, col = unmark(text)
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as info:
        spec.load_spec(path)
    loc = info.value.location
    assert (loc.file, loc.line, loc.col) == (str(path), line, col), info.value.located()
    assert re.search(pattern, info.value.message), info.value.message
    assert_one_located_line(validate(path), path, line, col, pattern)


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    with pytest.raises(SpecError, match="no such file") as info:
        spec.load_spec(path)
    assert info.value.located() == f"{path}: no such file"
    assert_one_located_line(validate(path), path, None, None, r"^no such file$")


@pytest.mark.parametrize("text", ["", "\n", "# nothing but a comment\n", "---\n"])
def test_empty_file(tmp_path, text):
    path = tmp_path / "empty.yaml"
    path.write_text(text)
    assert_one_located_line(validate(path), path, 1, 1, r"^the file is empty; expected a YAML mapping$")


def test_binary_file(tmp_path):
    path = tmp_path / "bin.yaml"
    path.write_bytes(bytes(range(256)) * 4)
    assert_one_located_line(validate(path), path, None, None, r"^not UTF-8 text \(byte 128\)$")


def test_a_folder_is_not_a_spec(tmp_path):
    assert_one_located_line(validate(tmp_path), tmp_path, None, None, r"^is a directory")


# --- names that need the catalogs (load_inputs), including a user catalog --------------------------

NIC_400_GB = """\
schema_version: 1
kind: nic
items:
  - name: my-nic
    description: a NIC whose rate was written as a size
    rate: ⟦400 GB
    ports: 1
    protocols: [ethernet]
    rdma: true
    price: $1,000
    power: 20 W
    source: test
    as_of: 2024
"""


def test_unknown_server_suggests_the_closest_name(tmp_path):
    text, line, col = unmark(BASE + "system: {server: ⟦dgx-h1000}\n")
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    message = assert_one_located_line(validate(path), path, line, col,
                                      r"^unknown server or cloud instance 'dgx-h1000'; did you mean 'dgx-h100'\?")
    assert "designer catalog list" in message


def test_bits_bytes_mix_up_in_a_user_catalog_is_located_in_that_file(tmp_path):
    # The spec has no bandwidth field: a rate lives in the catalogs, so the mix-up is tested there.
    nic_text, line, col = unmark(NIC_400_GB)
    nic = tmp_path / "my-nics.yaml"
    nic.write_text(nic_text)
    path = tmp_path / "spec.yaml"
    path.write_text(BASE + "catalogs: [my-nics.yaml]\n")
    message = assert_one_located_line(validate(path), nic, line, col, r"^rate: '400 GB' is a data size, not a bandwidth")
    assert '"400 GB/s" (bytes) or "400 Gb/s" (bits)' in message


# --- a valid spec: SI values, and how long the refusals take ----------------------------------------

def test_the_base_spec_loads_in_si_units(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(BASE)
    s = spec.load_spec(path)
    assert s.horizon_s == 365 * 86400.0
    assert s.budget.total_usd == 2e6 and s.budget.capex_usd is None
    (w,) = s.workloads
    assert (w.tokens, w.global_batch, w.deadline_s) == (20e9, 64, 30 * 86400.0)
    assert w.model.name == "llama3-8b" and w.parallelism.is_auto
    assert s.constraints.min_utilization == 0.5 and s.constraints.max_nodes == 4
    assert s.facility.electricity_usd_per_j == pytest.approx(units.parse_energy_price("0.08 USD/kWh"))
    assert s.facility.rack_power_w == 40e3
    assert s.digest == spec.spec_digest(BASE) and s.file == str(path)
    assert validate(path).stdout == f"{path}: ok\n"


@pytest.mark.parametrize("text, want", [("", (True, True, True)), ("networks: false\n", (False, False, False)),
                                        ("networks: true\n", (True, True, True)),
                                        ("networks: {oob: false}\n", (True, True, False)),
                                        ("networks: {storage: false, inband: false}\n", (False, False, True))])
def test_networks_as_a_mapping_or_one_boolean(tmp_path, text, want):
    path = tmp_path / "spec.yaml"
    path.write_text(BASE + text)
    n = spec.load_spec(path).networks
    assert (n.storage, n.inband, n.oob) == want


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.yaml")), ids=lambda p: p.name)
def test_examples_validate(path):
    result = validate(path)
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("text", [
    BASE + "system: {nodes: 1000000000}\n",
    edit("max_nodes: 4", "max_nodes: 1000000000"),
    edit("    deadline: 30 days", "    deadline: 30 days\n    gpus: 1000000000"),
], ids=["system.nodes", "constraints.max_nodes", "workloads[].gpus"])
def test_a_billion_gpu_ask_is_refused_fast_in_little_memory(tmp_path, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(SpecError, match="beyond any buildable cluster"):
            spec.load_spec(path)
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Memory is traced allocation (deterministic); the seconds are a figure in docs/reliability.md.
    assert peak < 20 * 2**20, elapsed
    result = RUNNER.invoke(app, ["solve", str(path)])
    assert result.exit_code == 2 and "beyond any buildable cluster" in result.stderr


def test_schema_lists_the_top_level_keys():
    schema = spec.spec_json_schema()
    json.dumps(schema)
    assert set(schema["properties"]) == {"version", "name", "objective", "horizon", "budget", "workloads",
                                         "constraints", "facility", "catalogs", "system", "software", "storage",
                                         "licences", "inventory", "price_book", "prefer", "networks"}
    assert set(schema["required"]) == {"version", "name", "workloads"}
    assert schema["additionalProperties"] is False


def test_spec_errors_are_input_errors_and_catalog_errors_too():
    # The CLI maps InputError to exit 2; both loaders' errors must be caught there.
    assert issubclass(SpecError, InputError) and issubclass(CatalogError, InputError)
