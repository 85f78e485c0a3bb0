"""The design file: deterministic dump, validated load, JSON shape, and atomic writing."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.cli import atomic
from designer.design import bom
from designer.design import Design, design_to_json_dict, dump_design, load_design, parse_design
from designer.errors import DesignFileError, InputError


def _line_of(text: str, needle: str) -> int:
    """1-based number of the first line containing ``needle``."""
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in text")


# ---------------------------------------------------------------- dump


def test_dump_starts_with_schema_version_and_has_no_timestamps(design: Design) -> None:
    text = dump_design(design)
    assert text.startswith("schema_version: 1\n")
    assert not re.search(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", text)
    assert text.endswith("\n") and text.count("\n") == len(text.splitlines())


def test_dump_writes_money_as_two_decimal_strings(design: Design) -> None:
    text = dump_design(design)
    # 128 x $310,000 + 48 x $36,000 + 2,048 x $1,000 + 2,048 x $100 + 46 x $5,000 = $43,890,800
    assert "  capex_usd: '43890800.00'\n" in text
    # 1,389.12 kW x PUE 1.3 x 26,280 h x $0.08/kWh = $3,796,631.65 (to the cent)
    assert "  opex_usd: '3796631.65'\n" in text
    assert "  total_usd: '47687431.65'\n" in text
    assert "  limit: '90000000.00'\n" in text  # a budget constraint is money too


def test_dump_rounds_other_floats_to_six_significant_digits(design: Design) -> None:
    text = dump_design(design)
    # 6 x 70.6e9 x 1024 x 8192 / (0.43 x 989e12 x 1024) = 8.159834... s
    assert "  step_time_s: 8.15983\n" in text
    assert "  power_kw: 1389.12\n" in text
    assert "  nodes: 128\n" in text and "  oversubscription: 1\n" in text


def test_dump_has_one_bom_item_per_line_in_stable_order(design: Design) -> None:
    text = dump_design(design)
    items = [l for l in text.splitlines() if l.startswith("- {category:")]
    assert len(items) == len(design.bom) == 9
    assert [re.search(r"role: ([\w-]+)", l).group(1) for l in items] == [
        "compute", "leaf", "spine", "node", "switch", "leaf-node", "spine-leaf", "compute", "network"]
    assert "quantity: 128, unit_price_usd: '310000.00', total_usd: '39680000.00'" in items[0]
    # Input order does not matter.
    shuffled = dataclasses.replace(design, bom=tuple(reversed(design.bom)))
    assert dump_design(shuffled) == text


def test_multiline_and_odd_strings_stay_on_one_bom_line(design: Design) -> None:
    odd = dataclasses.replace(design.bom[0], description="line one\nline two | {x}: 'q' \"d\"", source="#1, [a]")
    d = dataclasses.replace(design, bom=(odd,) + design.bom[1:])
    text = dump_design(d)
    items = [l for l in text.splitlines() if l.startswith("- {")]
    assert len(items) == 9
    assert parse_design(text).bom[0].description == odd.description


def test_dump_refuses_nan(design: Design) -> None:
    bad = dataclasses.replace(design, horizon_days=float("nan"))
    with pytest.raises(ValueError, match="horizon_days"):
        dump_design(bad)


# ---------------------------------------------------------------- round trip


def test_round_trip_is_byte_identical(design: Design, roce_design: Design) -> None:
    for d in (design, roce_design):
        text = dump_design(d)
        again = parse_design(text, "design.yaml")
        assert dump_design(again) == text


def test_loaded_values_are_the_written_values(design: Design) -> None:
    loaded = parse_design(dump_design(design))
    assert loaded.cost.total_usd == 47687431.65
    assert loaded.workloads[0].step_time_s == 8.15983
    assert loaded.bom[0].quantity == 128.0 and isinstance(loaded.bom[0].quantity, float)
    assert loaded.system.switch == "nvidia-qm9700" and loaded.system.pricing is None
    assert dict(loaded.catalog_dates) == {"servers.yaml": "2024-08", "switches.yaml": "2025"}
    assert loaded.alternatives[2].total_usd is None and loaded.alternatives[2].feasible is False


money = st.floats(min_value=0, max_value=1e12, allow_nan=False)
positive = st.floats(min_value=0, max_value=1e9, allow_nan=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(price=positive, qty=st.floats(min_value=0, max_value=1e6, allow_nan=False), util=st.floats(0, 1), step=st.floats(1e-9, 1e6), extra=money,
       text=st.text(max_size=30))
def test_round_trip_property(design: Design, price: float, qty: float, util: float, step: float, extra: float,
                             text: str) -> None:
    line = dataclasses.replace(design.bom[0], quantity=qty, unit_price_usd=price, description=text, source=text)
    workload = dataclasses.replace(design.workloads[0], utilization=util, step_time_s=step)
    cost = dataclasses.replace(design.cost, opex_usd=extra, total_usd=design.cost.capex_usd + extra)
    d = dataclasses.replace(design, bom=(line,), workloads=(workload,), cost=cost, warnings=(text,))
    first = dump_design(d)
    # The generated BOM no longer adds up to the capex by category: read it as --trust does.
    assert dump_design(parse_design(first, trust=True)) == first


# ---------------------------------------------------------------- validation with located errors


def _error(text: str) -> DesignFileError:
    with pytest.raises(DesignFileError) as info:
        parse_design(text, "d.yaml")
    return info.value


def test_truncated_file_gives_located_yaml_error(design: Design) -> None:
    text = dump_design(design)
    cut = text[: text.index("unit_price_usd: '36000.00'")]  # inside a flow mapping
    err = _error(cut)
    assert err.location.file == "d.yaml" and err.location.line is not None
    assert str(err).startswith(f"d.yaml:{err.location.line}:") and "malformed YAML" in str(err)


def test_wrong_type_is_located_at_the_value(design: Design) -> None:
    text = dump_design(design).replace("  nodes: 128\n", "  nodes: many\n")
    err = _error(text)
    assert err.location.line == _line_of(text, "nodes: many") and err.location.col == 10
    assert "system.nodes: expected a whole number; got text 'many'" in str(err)


def test_unknown_key_suggests_the_right_one(design: Design) -> None:
    text = dump_design(design).replace("  fabric: infiniband\n", "  fabrik: infiniband\n", 1)
    err = _error(text)
    assert err.location.line == _line_of(text, "fabrik:") and err.location.col == 3
    assert "unknown key 'fabrik'; did you mean 'fabric'?" in str(err)


def test_missing_key_is_located_at_its_mapping(design: Design) -> None:
    text = dump_design(design).replace("  gpus: 1024\n", "", 1)
    err = _error(text)
    assert "system: missing required key 'gpus'" in str(err)
    assert err.location.line == _line_of(text, "deployment: on_prem")


def test_bad_values_in_bom_items(design: Design) -> None:
    text = dump_design(design)
    err = _error(text.replace("quantity: 32,", "quantity: -32,", 1))
    assert "bom[1].quantity: must not be negative" in str(err) and err.location.line == _line_of(text, "role: leaf,")
    err = _error(text.replace("unit_price_usd: '36000.00'", "unit_price_usd: '36,000'", 1))
    assert "bom[1].unit_price_usd: expected dollars as a decimal string" in str(err)
    err = _error(text.replace("total_usd: '1152000.00'", "total_usd: '1152000.01'", 1))
    assert "bom[1].total_usd: 1152000.01 is not quantity x unit_price_usd = 1152000.00" in str(err)


def test_inconsistent_cost_total(design: Design) -> None:
    err = _error(dump_design(design).replace("  capex_usd: '43890800.00'", "  capex_usd: '43890900.00'"))
    assert "cost.total_usd: 47687431.65 is not capex_usd + opex_usd + cloud_usd - residual_usd = 47687531.65" in str(err)


def test_schema_version_is_checked_first(design: Design) -> None:
    err = _error(dump_design(design).replace("schema_version: 1", "schema_version: 2", 1))
    assert "unsupported schema_version 2" in str(err) and str(err).startswith("d.yaml:1:17:")
    err = _error("version: 1\nname: x\nworkloads: []\n")
    assert "no 'schema_version' key; this looks like a spec" in str(err)
    err = _error("- 1\n- 2\n")
    assert "expected a design file" in str(err)


def test_load_design_from_files(tmp_path: Path, design: Design) -> None:
    path = tmp_path / "design.yaml"
    path.write_text(dump_design(design), encoding="utf-8")
    assert dump_design(load_design(path)) == path.read_text(encoding="utf-8")
    with pytest.raises(DesignFileError, match="no such file"):
        load_design(tmp_path / "missing.yaml")
    with pytest.raises(DesignFileError, match="is a directory"):
        load_design(tmp_path)


# ---------------------------------------------------------------- JSON


def test_json_dict_has_the_solve_contract_keys(design: Design) -> None:
    doc = json.loads(json.dumps(design_to_json_dict(design)))
    assert list(doc)[:6] == ["schema_version", "system", "cost", "workloads", "bom", "alternatives"]
    system = {"deployment", "server", "gpu", "nodes", "gpus", "fabric", "topology", "oversubscription"}
    assert system <= set(doc["system"])
    assert {"capex_usd", "opex_usd", "cloud_usd", "total_usd"} <= set(doc["cost"])
    w = doc["workloads"][0]
    assert {"name", "gpus", "tp", "pp", "dp", "step_time_s", "utilization", "mfu", "tflops_per_gpu",
            "tokens_per_s", "time_to_train_days", "breakdown"} <= set(w)
    assert {"compute_s", "tp_comm_s", "pp_comm_s", "dp_comm_s", "ep_comm_s", "bubble_s",
            "exposed_comm_s"} <= set(w["breakdown"])
    assert {"category", "sku", "role", "quantity", "unit_price_usd", "total_usd", "source"} <= set(doc["bom"][0])
    assert doc["cost"]["total_usd"] == 47687431.65 and doc["system"]["nodes"] == 128
    assert doc["bom"][0]["total_usd"] == 39680000 and doc["alternatives"][0]["label"] == "fabric=infiniband"


# ---------------------------------------------------------------- atomic writing


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_write_atomic_creates_and_replaces(tmp_path: Path) -> None:
    path = tmp_path / "design.yaml"
    atomic.write_atomic(path, "one\n")
    assert path.read_bytes() == b"one\n"
    os.chmod(path, 0o640)
    atomic.write_atomic(path, "two: \u00e9\r\n")
    assert path.read_bytes() == "two: \u00e9\r\n".encode()  # bytes as given, no newline translation
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert _leftovers(tmp_path) == []


def test_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "design.yaml"
    path.write_text("old\n")

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", broken_fsync)
    with pytest.raises(InputError, match="no space left on device; the previous file is unchanged"):
        atomic.write_atomic(path, "new\n")
    assert path.read_text() == "old\n" and _leftovers(tmp_path) == []


def test_interrupted_write_cleans_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "design.yaml"
    path.write_text("old\n")

    def interrupted(src: str, dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic.write_atomic(path, "new\n")
    assert path.read_text() == "old\n" and _leftovers(tmp_path) == []


def test_unwritable_targets_raise_input_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match="folder .* does not exist"):
        atomic.write_atomic(tmp_path / "nope" / "design.yaml", "x")
    with pytest.raises(InputError, match="is a folder"):
        atomic.write_atomic(tmp_path, "x")
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="is not a folder"):
        atomic.write_atomic(tmp_path / "file" / "design.yaml", "x")

    def denied(**kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(atomic.tempfile, "mkstemp", denied)
    with pytest.raises(InputError, match="permission denied") as info:
        atomic.write_atomic(tmp_path / "design.yaml", "x")
    assert info.value.location.file == str(tmp_path / "design.yaml")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root ignores folder permissions")
def test_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "design.yaml").write_text("old\n")
    folder.chmod(0o500)
    try:
        with pytest.raises(InputError, match="permission denied"):
            atomic.write_atomic(folder / "design.yaml", "new\n")
        assert (folder / "design.yaml").read_text() == "old\n"
    finally:
        folder.chmod(0o700)


def test_write_atomic_follows_symlinks(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text("old\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    atomic.write_atomic(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"


def test_money_helpers_are_idempotent() -> None:
    assert bom.money_text(0.005) == "0.01" and bom.money_text(-0.004) == "0.00"
    assert bom.round_sig(bom.round_sig(2 / 3)) == bom.round_sig(2 / 3) == 0.666667


def test_the_whole_plan_is_recorded_and_older_files_read_its_defaults(design: Design) -> None:
    w = design.workloads[0]
    interleaved = dataclasses.replace(design, workloads=(dataclasses.replace(
        w, virtual_stages=4, schedule="dualpipe", first_stage_layers=3, last_stage_layers=5),) + design.workloads[1:])
    text = dump_design(interleaved)
    assert "  virtual_stages: 4\n  schedule: dualpipe\n  first_stage_layers: 3\n  last_stage_layers: 5\n" in text
    loaded = parse_design(text)
    assert dump_design(loaded) == text
    assert (loaded.workloads[0].virtual_stages, loaded.workloads[0].schedule) == (4, "dualpipe")
    # A file written before these keys existed: each reads as its default, the plan such a file ran.
    older = re.sub(r"  (virtual_stages|schedule|first_stage_layers|last_stage_layers): .*\n", "", dump_design(design))
    assert "virtual_stages" not in older
    read = parse_design(older).workloads[0]
    assert (read.virtual_stages, read.schedule, read.first_stage_layers, read.last_stage_layers) == (1, "1f1b", None,
                                                                                                      None)
