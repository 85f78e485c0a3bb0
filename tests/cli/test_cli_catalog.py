"""`designer catalog list|show` through a small Typer app that mounts the sub-app as the CLI does."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from designer import catalog
from designer.catalog import filters as catalog_filters, query
from designer.catalog.types import KINDS
from designer.cli.catalog import catalog_app
from designer.report.catalog import entry_price, entry_specs, render_entry, render_list, render_stale_warning

app = typer.Typer()
app.add_typer(catalog_app, name="catalog")


@app.command()
def version() -> None:
    """A second command so that `catalog` stays a group, as in the real CLI."""


BUILTIN = catalog.load_builtin()
OVERRIDE = """\
schema_version: 1
kind: switch
items:
  - name: nvidia-qm9700
    price: $31,500
    source: quote from our reseller
    as_of: 2026-10
"""


def run(*args: str):
    return CliRunner().invoke(app, ["catalog", *args])


def test_help_lists_both_commands():
    result = run("--help")
    assert result.exit_code == 0
    assert "list" in result.stdout and "show" in result.stdout
    for command in ("list", "show"):
        assert run(command, "--help").exit_code == 0


def test_list_shows_every_entry_with_price_source_and_date():
    result = run("list")
    assert result.exit_code == 0, result.stderr
    for kind in KINDS:
        for name in BUILTIN.by_kind(kind):
            assert name in result.stdout
    assert "$36,000.00" in result.stdout and "2024-08" in result.stdout and "$55.04/h" in result.stdout
    # Some built-in prices date from 2024: they are old today and stay old, so the warning is certain.
    assert result.stderr.startswith("warning: ") and "dgx-a100-80g (2020-05)" in result.stderr


@pytest.mark.parametrize("kind", ["switch", "switches"])
def test_list_one_kind(kind):
    result = run("list", "--kind", kind)
    assert result.exit_code == 0
    assert "nvidia-qm9700" in result.stdout and "dgx-h100" not in result.stdout


def test_list_json_is_complete_and_in_si_units():
    result = run("list", "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["digest"] == BUILTIN.digest
    assert len(doc["entries"]) == sum(len(BUILTIN.by_kind(k)) for k in KINDS)
    qm9700 = next(e for e in doc["entries"] if e["name"] == "nvidia-qm9700")
    assert (qm9700["kind"], qm9700["port_rate_Bps"], qm9700["price_usd"]) == ("switch", 50e9, 36000.0)
    assert qm9700["breakout"] == [{"rate_Bps": 25e9, "ports": 128}] and qm9700["protocol"] == "infiniband"
    assert qm9700["provenance"]["as_of"] == "2024-08" and qm9700["provenance"]["estimate"] is True


def test_show_renders_human_units_and_full_provenance():
    result = run("show", "nvidia-qm9700")
    assert result.exit_code == 0
    out = result.stdout
    for text in ("port_rate", "400 Gb/s", "128x 200 Gb/s", "150 ns", "$36,000.00", "1.1 kW",
                 "Freakonomics", "2024-08", "power is an unsourced estimate"):
        assert text in out
    assert "nvidia-qm9700 (2024-08)" in result.stderr


def test_show_json():
    result = run("show", "gcp-a3-megagpu-8g", "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["kind"] == "cloud" and doc["network"] == "gpudirect-tcpxo"
    assert doc["price_on_demand_usd_per_s"] * 3600 == pytest.approx(92.21427)
    assert doc["network_Bps"] == 200e9


@pytest.mark.parametrize("args, fragment", [
    (("show", "nvidia-qm970"), "did you mean 'nvidia-qm9700'?"),
    (("list", "--kind", "swtch"), "did you mean 'switch'?"),
])
def test_unknown_name_or_kind_exits_2_with_a_hint(args, fragment):
    result = run(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and fragment in result.stderr
    assert "Traceback" not in result.stderr


def test_user_catalog_overrides_what_is_shown(tmp_path: Path):
    path = tmp_path / "prices.yaml"
    path.write_text(OVERRIDE)
    result = run("show", "nvidia-qm9700", "--catalog", str(path))
    assert result.exit_code == 0
    assert "$31,500.00" in result.stdout and "quote from our reseller [price]" in result.stdout
    assert result.stderr == ""  # a price as of 2026-10 is recent


def test_bad_user_catalog_is_a_located_error(tmp_path: Path):
    path = tmp_path / "prices.yaml"
    path.write_text(OVERRIDE.replace("price:", "prise:"))
    result = run("list", "-c", str(path))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}:5:5: unknown key 'prise'")


def test_renderers_are_pure_functions_of_the_catalog():
    qm9700 = BUILTIN.switches["nvidia-qm9700"]
    assert entry_specs("switch", qm9700) == "64x 400 Gb/s (128x 200 Gb/s) infiniband, 150 ns, in-network reduction"
    assert entry_price("cloud", BUILTIN.clouds["aws-p5.48xlarge"]) == "$55.04/h"
    assert entry_price("fabric", BUILTIN.fabrics["efa"]) == "-"
    assert entry_price("gpu", BUILTIN.gpus["a100-40g"]) == "-"
    assert render_list(BUILTIN, "fabric").count("\n") == len(BUILTIN.fabrics) + 2
    assert render_list(BUILTIN) == render_list(BUILTIN)
    assert "matmul_efficiency" in render_entry("gpu", BUILTIN.gpus["h100-sxm"])
    assert "80.33%" in render_entry("gpu", BUILTIN.gpus["h100-sxm"])
    assert render_stale_warning(()) == ""
    one = (catalog.StaleEntry("switch", "x", "2020", 70),)
    assert render_stale_warning(one).startswith("warning: price is older than 18 months: x (2020)")


def _strict_json(text: str):
    def refuse(name: str):
        raise AssertionError(f"{name} in JSON output")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("kind, name", [(k, n) for k in KINDS for n in BUILTIN.by_kind(k)])
def test_show_works_for_every_built_in_entry(kind, name):
    """Every field of every kind renders (a NIC's tuple of lower speeds once raised a TypeError)."""
    text = run("show", name)
    assert text.exit_code == 0, text.output
    rows = [line.split(None, 1) for line in text.stdout.splitlines()[:2]]
    assert rows == [["kind", kind], ["name", name]]
    assert "Traceback" not in text.output and "internal error" not in text.output
    doc = _strict_json(run("show", name, "--json").stdout)
    assert doc["kind"] == kind and doc["name"] == name
    # A quantity is shown with its unit: every field whose name carries one (rate_Bps,
    # storage_read_Bps_per_node, power_w, rack_units ...) prints more than a bare number.
    shown = {line.split(None, 1)[0]: line.split(None, 1)[1] for line in text.stdout.splitlines()
             if line[:1].strip() and len(line.split(None, 1)) == 2}
    entry = BUILTIN.by_kind(kind)[name]
    for key, attr in query.field_keys(kind):
        value = getattr(entry, attr)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or key not in shown:
            continue
        if re.search(r"(_Bps|_bytes|_usd|_w|_s|_m|_flops|_j)(_per_[a-z_]+)?$|^rack_units$", attr):
            assert not re.fullmatch(r"[-+\d.,e]+", shown[key].strip()), (key, shown[key])


def test_a_nics_lower_speeds_are_shown_in_bits_per_second():
    out = run("show", "connectx7-ndr-400g").stdout
    assert "speeds       200 Gb/s, 100 Gb/s, 50 Gb/s, 25 Gb/s, 10 Gb/s\n" in out
    doc = _strict_json(run("show", "connectx7-ndr-400g", "--json").stdout)
    assert doc["speeds_Bps"] == [25e9, 12.5e9, 6.25e9, 3.125e9, 1.25e9]


def test_the_kinds_in_the_help_are_the_catalog_kinds():
    from designer.catalog.types import KINDS
    from designer.cli.catalog import KIND_NAMES

    assert KIND_NAMES == KINDS


def test_the_protocols_in_the_help_are_the_catalogs():
    from designer.catalog.types import FabricKind, Protocol
    from designer.cli.catalog import PROTOCOL_NAMES

    assert set(PROTOCOL_NAMES) == {p.value for p in Protocol} | {k.value for k in FabricKind}


def _names(*args: str) -> list[tuple[str, str]]:
    result = run("list", "--json", *args)
    assert result.exit_code == 0, result.output
    doc = _strict_json(result.stdout)
    return [(e["kind"], e["name"]) for e in doc["entries"]]


def test_list_filters_by_rate_protocol_vendor_price_gpu_and_name():
    # Every 400 Gb/s part: NICs at any of their speeds, switches native or broken out, cables, optics.
    at_400 = _names("--rate", "400G")
    assert {k for k, _ in at_400} == {"nic", "switch", "cable", "transceiver"}
    assert ("switch", "nvidia-sn5600") in at_400  # 64x 800G, broken out to 128x 400G
    assert ("switch", "nvidia-sn4600c") not in at_400  # 100G only
    assert _names("--rate", "400 Gb/s") == at_400 == _names("--rate", "50 GB/s")
    # Each entry kept has a 400 Gb/s port, and no part with one is left out.
    expected = [(k, n) for k in ("nic", "switch", "cable", "transceiver") for n, e in BUILTIN.by_kind(k).items()
                if any(abs(r - 50e9) < 1 for r in catalog_filters.entry_rates(k, e))]
    assert at_400 == expected
    ib_switches = _names("--kind", "switch", "--protocol", "infiniband")
    assert ib_switches and all(BUILTIN.switches[n].protocol.value == "infiniband" for _, n in ib_switches)
    # RoCE runs on Ethernet parts; a cloud network named roce is kept too.
    roce = _names("--protocol", "roce")
    assert ("switch", "nvidia-sn5600") in roce and ("switch", "nvidia-qm9700") not in roce
    assert ("cloud", "oci-bm.gpu.h100.8") in roce
    cheap_amd = _names("--vendor", "AMD", "--max-price", "$20k")
    # MI300X $12,500 and MI325X $15,000 (estimate); the MI355X and the AMD servers cost more
    assert cheap_amd == [("gpu", "mi300x"), ("gpu", "mi325x")]
    assert all(BUILTIN.by_kind(k)[n].price_usd <= 20_000 for k, n in _names("--max-price", "$20k"))
    with_h100 = _names("--gpu", "h100-sxm")
    assert ("gpu", "h100-sxm") in with_h100 and ("server", "dgx-h100") in with_h100
    assert all(k in ("gpu", "server", "cloud") for k, _ in with_h100)
    assert _names("--name", "QM97") == [("switch", "nvidia-qm9700")]


def test_list_filters_are_recorded_in_the_json_and_bad_ones_are_refused():
    doc = _strict_json(run("list", "--json", "--rate", "400G", "--vendor", "nvidia").stdout)
    assert doc["filters"] == {"rate_Bps": 50e9, "vendor": "nvidia"}
    assert _strict_json(run("list", "--json").stdout)["filters"] == {}
    none = run("list", "--name", "no-such-part")
    assert (none.exit_code, none.stdout) == (0, "no catalog entries match the filters\n")
    for args, where in ((("--rate", "400 apples"), "--rate"), (("--max-price", "cheap"), "--max-price"),
                        (("--protocol", "token-ring"), "--protocol")):
        bad = run("list", *args)
        assert bad.exit_code == 2 and bad.stderr.startswith(f"error: {where}: "), bad.stderr
