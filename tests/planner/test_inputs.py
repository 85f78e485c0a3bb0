"""load_inputs: the spec with its catalogs, the names it uses, the files it may read, and paths."""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

import pytest

from designer import catalog as catalog_mod
from designer.catalog import load as catalog_load
from designer.errors import CatalogError, SpecError
from designer.planner import compile as planner_compile
from designer.planner import inputs

BASE = """\
version: 1
name: tiny
horizon: 1 years
workloads:
  - name: small
    model: {preset: llama3-8b}
    tokens: 20B
    global_batch: 64
constraints:
  gpus: [h100-sxm]
facility: {pue: 1.4}
"""

MARK = "⟦"


def write(path: Path, text: str) -> tuple[Path, int | None, int | None]:
    """Write ``text`` without its marker; return the path and the marker's line and column."""
    if MARK not in text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path, None, None
    i = text.index(MARK)
    before = text[:i]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace(MARK, "", 1))
    return path, before.count("\n") + 1, i - (before.rfind("\n") + 1) + 1


# --- names the spec uses must exist in the catalogs and fit where they are used ---------------------

REFERENCE_CASES = {
    "unknown server": ("system: {server: ⟦dgx-h1000}", r"unknown server or cloud instance 'dgx-h1000'; "
                                                       r"did you mean 'dgx-h100'\?"),
    "unknown switch": ("system: {server: dgx-h100, switch: ⟦nvidia-qm970}",
                       r"unknown switch 'nvidia-qm970'; did you mean 'nvidia-qm9700'\?"),
    "cloud instance deployed on prem": ("system: {server: aws-p5.48xlarge, deployment: ⟦on_prem}",
                                        r"'aws-p5.48xlarge' is a cloud instance but system.deployment is on_prem"),
    "cloud instance with a switch": ("system: {server: aws-p5.48xlarge, switch: ⟦nvidia-qm9700}",
                                     r"comes with its provider's network, so system.switch cannot be set"),
    "cloud instance on another fabric": ("system: {server: aws-p5.48xlarge, fabric: ⟦infiniband}",
                                         r"'aws-p5.48xlarge' comes with a efa network, not infiniband"),
    "on-prem server in the cloud": ("system: {server: dgx-h100, deployment: ⟦cloud}",
                                    r"'dgx-h100' is an on-prem server but system.deployment is cloud"),
}


@pytest.mark.parametrize("system, pattern", REFERENCE_CASES.values(), ids=REFERENCE_CASES.keys())
def test_references_are_checked_and_located_in_the_spec(tmp_path, system, pattern):
    path, line, col = write(tmp_path / "spec.yaml", BASE + system + "\n")
    with pytest.raises(SpecError, match=pattern) as info:
        inputs.load_inputs(path)
    loc = info.value.location
    assert (loc.file, loc.line, loc.col) == (str(path), line, col)


def test_unknown_gpu_in_constraints_is_located_at_its_list_item(tmp_path):
    path, line, col = write(tmp_path / "spec.yaml", BASE.replace("gpus: [h100-sxm]", "gpus: [h100-sxm, ⟦h100-sxn]"))
    with pytest.raises(SpecError, match=r"unknown GPU 'h100-sxn'; did you mean 'h100-sxm'\?") as info:
        inputs.load_inputs(path)
    assert (info.value.location.line, info.value.location.col) == (line, col)


def test_valid_spec_loads_with_the_builtin_catalogs(tmp_path):
    path, _, _ = write(tmp_path / "spec.yaml", BASE + "system: {server: dgx-h100, switch: nvidia-qm9700}\n")
    spec, catalog = inputs.load_inputs(path)
    assert spec.system.server == "dgx-h100"
    assert "dgx-h100" in catalog.servers and catalog.digest == catalog_mod.load_builtin().digest


def test_facility_overrides_apply_over_the_catalog_default(tmp_path):
    path, _, _ = write(tmp_path / "spec.yaml", BASE)
    spec, catalog = inputs.load_inputs(path)
    facility = planner_compile.facility_for(spec, catalog)
    default = catalog.facilities["default"]
    assert facility.pue == 1.4
    assert facility.electricity_usd_per_j == default.electricity_usd_per_j
    assert facility.rack_power_w == default.rack_power_w


# --- user catalogs: located in their own file, resolved relative to the spec ---------------------------

NEW_SERVER = """\
schema_version: 1
kind: server
items:
  - name: my-box
    description: a DGX H100 under another name
    gpu: h100-sxm
    gpus: 8
    nic: connectx7-ndr-400g
    nics: 8
    nic_cages: 4
    power: 10.2 kW
    rack_units: 8
    price: $300k
    source: test fixture
    as_of: 2024
"""


def test_catalog_paths_resolve_relative_to_the_spec_not_the_working_folder(tmp_path, monkeypatch):
    spec_path, _, _ = write(tmp_path / "project" / "spec.yaml",
                            BASE + "catalogs: [prices/mine.yaml]\nsystem: {server: my-box}\n")
    write(tmp_path / "project" / "prices" / "mine.yaml", NEW_SERVER)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write(elsewhere / "prices" / "mine.yaml", "not: a catalog\n")  # a decoy the cwd would find
    monkeypatch.chdir(elsewhere)
    spec, catalog = inputs.load_inputs(Path("..") / "project" / "spec.yaml")
    assert spec.catalogs == ((tmp_path / "project" / "prices" / "mine.yaml").resolve(),)
    assert catalog.servers["my-box"].price_usd == 300e3


def test_absolute_catalog_paths_work(tmp_path):
    cat, _, _ = write(tmp_path / "cats" / "mine.yaml", NEW_SERVER)
    spec_path, _, _ = write(tmp_path / "specs" / "spec.yaml",
                            BASE + f"catalogs: ['{cat}']\nsystem: {{server: my-box}}\n")
    _, catalog = inputs.load_inputs(spec_path)
    assert "my-box" in catalog.servers


@pytest.mark.parametrize("field, value, pattern", [
    ("rate", "400 GB", r"^rate: '400 GB' is a data size, not a bandwidth"),
    ("rate", "400", r'^rate: a bandwidth needs a unit: did you mean "400 Gbps"\?'),
    ("price", "1000", r"^price: an amount of money needs a unit"),
    ("ratee", "400 Gbps", r"^unknown key 'ratee' for a nic \(did you mean 'rate'\?\)"),
])
def test_a_bad_user_catalog_is_located_in_that_file(tmp_path, field, value, pattern):
    marked_key = field == "ratee"
    item = (f"    {MARK}{field}: {value}\n" if marked_key else f"    {field}: {MARK}{value}\n")
    nic = ("schema_version: 1\nkind: nic\nitems:\n  - name: my-nic\n    description: x\n"
           + (item if field in ("rate", "ratee") else item + "    rate: 400 Gbps\n")
           + "    ports: 1\n    protocols: [ethernet]\n    rdma: true\n"
           + ("" if field == "price" else "    price: $1,000\n")
           + "    power: 20 W\n    source: test\n    as_of: 2024\n")
    cat, line, col = write(tmp_path / "nics.yaml", nic)
    spec_path, _, _ = write(tmp_path / "spec.yaml", BASE + "catalogs: [nics.yaml]\n")
    with pytest.raises(CatalogError) as info:
        inputs.load_inputs(spec_path)
    assert re.search(pattern, info.value.message), info.value.message
    loc = info.value.location
    assert (loc.file, loc.line, loc.col) == (str(cat), line, col)


def test_a_catalog_that_is_not_yaml_is_refused_where_the_spec_names_it(tmp_path):
    cat = tmp_path / "cat.yaml"
    cat.write_bytes(b"\x00\xff" * 100)
    spec_path, _, _ = write(tmp_path / "spec.yaml", BASE + "catalogs: [cat.yaml]\n")
    with pytest.raises(CatalogError) as info:
        inputs.load_inputs(spec_path)
    assert info.value.message.startswith("catalog file 'cat.yaml' is not a readable catalog file")
    assert info.value.location.file == str(spec_path) and info.value.location.line == BASE.count("\n") + 1


# --- safety: only the named files are read, and nothing is written ----------------------------------

_opened: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _opened is not None and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # stays for the session; records only while _opened is a list


def files_opened(fn) -> set[Path]:
    """The data files ``fn`` opens (Python's own module files are left out)."""
    global _opened
    _opened = []
    try:
        fn()
    finally:
        seen, _opened = _opened, None
    return {Path(p).resolve() for p in seen
            if not p.endswith((".py", ".pyc", ".so")) and not p.startswith(("/proc/", "/dev/"))}


def test_only_the_spec_the_named_catalogs_and_the_builtins_are_read(tmp_path):
    secret = tmp_path / "secret.yaml"
    secret.write_text("password: hunter2\n")
    cat, _, _ = write(tmp_path / "mine.yaml", NEW_SERVER.replace("a DGX H100 under another name", str(secret)))
    spec_path, _, _ = write(tmp_path / "spec.yaml",
                            BASE.replace("name: tiny", f"name: '{secret}'")
                            + "catalogs: [mine.yaml]\nsystem: {server: my-box}\n")
    inputs.load_inputs(spec_path)  # warm: imports happen outside the recording
    builtin = {(catalog_load._builtin_root() / name) for name in catalog_mod.BUILTIN_FILES}
    opened = files_opened(lambda: inputs.load_inputs(spec_path))
    assert secret.resolve() not in opened
    assert opened <= {spec_path.resolve(), cat.resolve(), *(Path(str(p)).resolve() for p in builtin)}
    assert {spec_path.resolve(), cat.resolve()} <= opened


@pytest.mark.parametrize("payload", [
    "!!python/object/apply:builtins.open ['{secret}']",
    "!include {secret}",
    "!!python/name:os.system",
])
def test_yaml_cannot_make_the_loader_open_another_file(tmp_path, payload):
    secret = tmp_path / "secret.yaml"
    secret.write_text("password: hunter2\n")
    spec_path, _, _ = write(tmp_path / "spec.yaml",
                            BASE.replace("name: tiny", "name: " + payload.format(secret=secret)))
    def load():
        with pytest.raises(SpecError, match="unsupported YAML tag"):
            inputs.load_inputs(spec_path)

    opened = files_opened(load)
    assert secret.resolve() not in opened


def test_loading_leaves_the_input_files_unchanged(tmp_path):
    cat, _, _ = write(tmp_path / "mine.yaml", NEW_SERVER)
    spec_path, _, _ = write(tmp_path / "spec.yaml", BASE + "catalogs: [mine.yaml]\nsystem: {server: my-box}\n")
    before = {p: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in (cat, spec_path)}
    inputs.load_inputs(spec_path)
    after = {p: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in (cat, spec_path)}
    assert before == after
    assert sorted(os.listdir(tmp_path)) == ["mine.yaml", "spec.yaml"]
