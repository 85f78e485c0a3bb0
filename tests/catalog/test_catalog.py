"""Built-in catalogs and the catalog loader: data checks, overrides, located errors, staleness."""

from __future__ import annotations

import hashlib
import re
from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from designer import catalog
from designer.catalog.types import KINDS, FabricKind, Protocol
from designer.errors import CatalogError

BUILTIN = catalog.load_builtin()

# Names the docs and the examples rely on.
REQUIRED_NAMES = {
    "gpu": {"a100-80g", "h100-sxm", "h200", "b200", "mi300x"},
    "server": {"dgx-a100-80g", "dgx-h100", "hgx-h200", "dgx-b200"},
    "cloud": {"aws-p4d.24xlarge", "aws-p5.48xlarge", "aws-p5e.48xlarge", "gcp-a2-ultragpu-8g",
              "gcp-a3-highgpu-8g", "gcp-a3-megagpu-8g", "azure-nd96asr-a100-v4", "azure-nd96isr-h100-v5"},
    "switch": {"nvidia-qm8700", "nvidia-qm9700", "nvidia-sn5600", "arista-7060dx5-64s", "arista-7060x6-64pe"},
    "facility": {"default"},
}


def write(tmp_path: Path, text: str, name: str = "user.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def all_entries(cat=BUILTIN):
    for kind in KINDS:
        for name, entry in cat.by_kind(kind).items():
            yield kind, name, entry


# --- the built-in data --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(REQUIRED_NAMES))
def test_required_names_exist(kind):
    assert REQUIRED_NAMES[kind] <= set(BUILTIN.by_kind(kind))


def test_every_kind_has_entries_and_names_are_unique_across_kinds():
    names = [name for _, name, _ in all_entries()]
    # Every kind but the buyer's own price books ships with entries.
    assert all(BUILTIN.by_kind(kind) for kind in KINDS if kind != "price_book")
    assert not BUILTIN.price_books
    assert len(names) == len(set(names)), "find() needs names unique across kinds"


def test_every_entry_has_provenance_and_estimates_say_how():
    for kind, name, entry in all_entries():
        prov = entry.provenance
        assert prov.source.strip(), f"{kind} {name} has no source"
        assert catalog.price_date(prov.as_of) <= date(2026, 12, 31), f"{kind} {name}: as_of {prov.as_of}"
        if prov.estimate:
            assert len(prov.note) > 10, f"{kind} {name} is an estimate without a note"
        assert "shared" not in prov.source and "facts" not in prov.source  # cite originals only
        # A price says what kind of price it is; an entry without one claims no basis.
        price = getattr(entry, "price_usd", False)
        if price is None:
            assert not prov.price_basis, f"{kind} {name} has no price but a price basis '{prov.price_basis}'"
        elif price is not False and kind not in ("cloud",):
            assert prov.price_basis, f"{kind} {name} has a price but no price basis"


def test_entry_names_match_their_key_and_the_name_rule():
    for kind, name, entry in all_entries():
        assert entry.name == name
        assert re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name), name


def test_references_resolve():
    for server in BUILTIN.servers.values():
        assert server.gpu in BUILTIN.gpus and server.nic in BUILTIN.nics
        assert server.storage_nic is None or server.storage_nic in BUILTIN.nics
    for cloud in BUILTIN.clouds.values():
        assert cloud.gpu in BUILTIN.gpus


def test_fabric_profiles_cover_every_fabric_kind():
    assert set(BUILTIN.fabrics) == {k.value for k in FabricKind}
    assert all(p.kind.value == name for name, p in BUILTIN.fabrics.items())


@pytest.mark.parametrize("gpu, mamf_tflops, peak_tflops", [
    # Measured MAMF / dense BF16 peak (stas00/ml-engineering mamf-finder table).
    ("a100-80g", 271.2, 312), ("h100-sxm", 794.5, 989), ("b200", 1745.0, 2250), ("mi300x", 668.4, 1307.4),
])
def test_matmul_efficiency_is_measured_mamf_over_peak(gpu, mamf_tflops, peak_tflops):
    entry = BUILTIN.gpus[gpu]
    assert entry.bf16_flops == pytest.approx(peak_tflops * 1e12)
    assert entry.matmul_efficiency == pytest.approx(mamf_tflops / peak_tflops, abs=1e-4)


def test_published_figures_are_converted_to_si():
    h100 = BUILTIN.gpus["h100-sxm"]
    assert h100.hbm_Bps == pytest.approx(3.35e12) and h100.scaleup_Bps == pytest.approx(450e9)
    assert h100.hbm_bytes == 80 * 2**30 and h100.power_w == 700
    dgx = BUILTIN.servers["dgx-h100"]
    assert (dgx.gpus, dgx.nics, dgx.nic_cages, dgx.power_w) == (8, 8, 4, 10_200)
    assert BUILTIN.nics[dgx.nic].rate_Bps == 50e9  # NDR 400 Gb/s
    assert BUILTIN.nics["connectx7-ndr-400g"].protocols == {Protocol.INFINIBAND, Protocol.ETHERNET}
    qm9700 = BUILTIN.switches["nvidia-qm9700"]
    assert (qm9700.ports, qm9700.cages, qm9700.ports_at(50e9), qm9700.ports_at(25e9)) == (64, 32, 64, 128)
    assert qm9700.latency_s == pytest.approx(150e-9) and qm9700.in_network_reduction
    sn5600 = BUILTIN.switches["nvidia-sn5600"]
    assert (sn5600.ports_at(100e9), sn5600.ports_at(50e9), sn5600.ports_at(25e9)) == (64, 128, 256)
    assert BUILTIN.clouds["aws-p5.48xlarge"].price_on_demand_usd_per_s == pytest.approx(55.04 / 3600)
    assert BUILTIN.clouds["aws-p5.48xlarge"].network_Bps == pytest.approx(400e9)  # 3,200 Gb/s
    assert BUILTIN.transceivers["osfp-800g-2xsr4"].logical_ports == 2
    assert BUILTIN.cables["dac-800g-osfp"].reach_m == 3
    facility = BUILTIN.facilities["default"]
    # EIA industrial retail price, 2025 monthly values (Electric Power Monthly via ycharts): their mean.
    eia_2025 = [0.0834, 0.0824, 0.0826, 0.0821, 0.0829, 0.0890, 0.0933, 0.0908, 0.0902, 0.0865, 0.0844, 0.0853]
    assert facility.electricity_usd_per_j * 3.6e6 == pytest.approx(sum(eia_2025) / 12, abs=5e-5)
    assert facility.rack_power_w == 40_000
    # CBRE H2 2025: $194.95 per kW per month; Cushman & Wakefield 2025: $11.7M per MW of critical load.
    assert facility.colocation_usd_per_w_s * 1e3 * (365 * 86400 / 12) == pytest.approx(194.95)
    assert facility.build_usd_per_w * 1e6 == pytest.approx(11.7e6)
    # IEEE Access 2025: 8.4 kW maximum observed on a 10.2 kW-rated 8x H100 node.
    assert facility.training_power_fraction == pytest.approx(8.4 / 10.2, abs=0.005)


def test_derived_cloud_prices_add_up():
    # GCP bills the VM part and the GPUs separately (SkyPilot catalog rows quoted in the sources).
    assert BUILTIN.clouds["gcp-a3-highgpu-8g"].price_on_demand_usd_per_s * 3600 == pytest.approx(9.46006 + 78.37241)
    assert BUILTIN.clouds["gcp-a3-megagpu-8g"].price_on_demand_usd_per_s * 3600 == pytest.approx(9.46006 + 82.75421)
    assert BUILTIN.clouds["gcp-a2-ultragpu-8g"].price_on_demand_usd_per_s * 3600 == pytest.approx(8.79698 + 14.76958)


def test_fabric_efficiencies_match_their_measurements():
    assert BUILTIN.fabrics["infiniband"].efficiency == pytest.approx(47 / 50)  # nccl-tests #290
    # ring bus bandwidth per NIC: 377-382 GB/s over 8 x 50 GB/s (ml-engineering, p6-b200 4 nodes)
    assert BUILTIN.fabrics["efa"].efficiency == pytest.approx(0.95)
    assert BUILTIN.fabrics["gpudirect-tcpxo"].efficiency == pytest.approx(180.71 / 8 / 25, abs=0.005)
    assert BUILTIN.fabrics["infiniband"].in_network_reduction and BUILTIN.fabrics["infiniband"].lossless
    assert BUILTIN.fabrics["ethernet"].host_latency_s > BUILTIN.fabrics["roce"].host_latency_s


def test_digest_is_sha256_of_the_builtin_files_in_load_order():
    root = Path(catalog.__file__).resolve().parents[2] / "catalogs"
    expected = hashlib.sha256(b"".join((root / name).read_bytes() for name in catalog.BUILTIN_FILES))
    assert BUILTIN.digest == expected.hexdigest()
    assert catalog.load_builtin().digest == BUILTIN.digest
    assert set(BUILTIN.dates) == {f"builtin:{name}" for name in catalog.BUILTIN_FILES}
    assert BUILTIN.dates["builtin:clouds.yaml"] == "2025-10"  # the Nebius presets


# --- user catalogs: precedence ----------------------------------------------------------------

OVERRIDE_QM9700 = """\
schema_version: 1
kind: switch
items:
  - name: nvidia-qm9700
    price: $31,500
    source: quote from our reseller
    as_of: 2026-10
"""

NEW_SWITCH = """\
schema_version: 1
kind: switch
items:
  - name: edge-tor-100g
    description: lab top-of-rack
    protocol: ethernet
    ports: 32
    port_rate: 100 Gbps
    cages: 32
    breakout: {25 Gbps: 128}
    latency: 600 ns
    price: $9,000
    power: 350 W
    rack_units: 1
    source: vendor datasheet
    as_of: 2026-09
"""


def test_override_changes_only_the_given_fields(tmp_path):
    cat = catalog.load_catalog([write(tmp_path, OVERRIDE_QM9700)])
    old, new = BUILTIN.switches["nvidia-qm9700"], cat.switches["nvidia-qm9700"]
    assert new.price_usd == 31_500
    assert (new.ports, new.cages, new.latency_s, new.breakout) == (old.ports, old.cages, old.latency_s, old.breakout)
    assert new.provenance.as_of == "2026-10"
    assert new.provenance.source.startswith("quote from our reseller [price]; otherwise: ")
    assert old.provenance.source in new.provenance.source
    assert cat.gpus == BUILTIN.gpus and len(cat.switches) == len(BUILTIN.switches)


def test_new_name_adds_an_entry(tmp_path):
    cat = catalog.load_catalog([write(tmp_path, NEW_SWITCH)])
    tor = cat.switches["edge-tor-100g"]
    assert (tor.ports, tor.port_rate_Bps, tor.ports_at(3.125e9), tor.power_w) == (32, 12.5e9, 128, 350)
    assert tor.in_network_reduction is False  # default
    assert not tor.provenance.estimate and tor.provenance.note == ""
    assert len(cat.switches) == len(BUILTIN.switches) + 1


def test_later_files_override_earlier_ones(tmp_path):
    first = write(tmp_path, OVERRIDE_QM9700, "first.yaml")
    second = write(tmp_path, OVERRIDE_QM9700.replace("$31,500", "$29,000").replace("2026-10", "2026-11"),
                   "second.yaml")
    assert catalog.load_catalog([first, second]).switches["nvidia-qm9700"].price_usd == 29_000
    assert catalog.load_catalog([second, first]).switches["nvidia-qm9700"].price_usd == 31_500


def test_user_file_may_override_its_own_new_entry_and_reference_it(tmp_path):
    text = """\
schema_version: 1
kind: server
items:
  - name: lab-node
    description: two-GPU lab box
    gpu: h100-sxm
    gpus: 2
    nic: connectx7-ndr-400g
    nics: 2
    nic_cages: 2
    power: 2.5 kW
    rack_units: 2
    price: $80,000
    source: our order
    as_of: 2026-06
"""
    later = "schema_version: 1\nkind: server\nitems:\n  - {name: lab-node, gpus: 4, source: re-quote, as_of: 2026-07}\n"
    cat = catalog.load_catalog([write(tmp_path, text, "a.yaml"), write(tmp_path, later, "b.yaml")])
    assert (cat.servers["lab-node"].gpus, cat.servers["lab-node"].price_usd) == (4, 80_000)
    assert cat.dates[str(tmp_path / "b.yaml")] == "2026-07"


def test_base_catalog_and_digest(tmp_path):
    path = write(tmp_path, OVERRIDE_QM9700)
    with_base = catalog.load_catalog([path], base=BUILTIN)
    direct = catalog.load_catalog([path])
    assert with_base.switches == direct.switches
    assert with_base.digest == hashlib.sha256(BUILTIN.digest.encode() + path.read_bytes()).hexdigest()
    assert direct.digest != BUILTIN.digest and direct.digest == catalog.load_catalog([path]).digest
    path.write_text(OVERRIDE_QM9700.replace("31,500", "31,501"))
    assert catalog.load_catalog([path]).digest != direct.digest
    assert catalog.load_catalog([], base=BUILTIN).switches == BUILTIN.switches


# --- malformed user catalogs: one located error each ----------------------------------------------

HEAD = "schema_version: 1\nkind: switch\nitems:\n"
BAD = {
    # name: (text, line, col, fragment of the message)
    "bad yaml": (HEAD + "  - {name: x, price: [\n", 5, 1, "malformed YAML"),
    "duplicate key": (HEAD + "  - name: nvidia-qm9700\n    price: $1\n    price: $2\n", 6, 5, "duplicate key"),
    "unknown key": (HEAD + "  - name: nvidia-qm9700\n    prise: $30,000\n    source: s\n    as_of: 2026\n",
                    5, 5, "did you mean 'price'?"),
    "bad unit": (HEAD + "  - name: nvidia-qm9700\n    port_rate: 400 GB\n    source: s\n    as_of: 2026\n",
                 5, 16, "data size, not a bandwidth"),
    "money without currency": (HEAD + "  - name: nvidia-qm9700\n    price: 30000\n    source: s\n    as_of: 2026\n",
                               5, 12, "price"),
    "negative count": (HEAD + "  - name: nvidia-qm9700\n    ports: -4\n    source: s\n    as_of: 2026\n",
                       5, 12, "at least 1"),
    "missing field for new item": (HEAD + "  - name: my-switch\n    price: $1,000\n    source: s\n    as_of: 2026\n",
                                   4, 5, "missing description, protocol, ports"),
    "near-miss of an existing name": (HEAD + "  - name: nvidia-qm970\n    price: $1\n    source: s\n    as_of: 2026\n",
                                      4, 5, "did you mean 'nvidia-qm9700'?"),
    "no source": (HEAD + "  - name: nvidia-qm9700\n    price: $1\n    as_of: 2026\n", 4, 5, "no 'source'"),
    "estimate without note": (HEAD + "  - {name: nvidia-qm9700, price: $1, source: s, as_of: 2026, estimate: true}\n",
                              4, 72, "add a 'note'"),
    "bad date": (HEAD + "  - {name: nvidia-qm9700, price: $1, source: s, as_of: 2026-13}\n", 4, 56, "not a date"),
    "unknown kind": ("schema_version: 1\nkind: switches\nitems: []\n", 2, 7, "did you mean 'switch'?"),
    "wrong schema version": ("schema_version: 2\nkind: switch\nitems: []\n", 1, 17, "schema_version must be 1"),
    "unknown top-level key": ("schema_version: 1\nkind: switch\nitem: []\n", 3, 1, "did you mean 'items'?"),
    "duplicate name": (HEAD + "  - {name: nvidia-qm9700, price: $1, source: s, as_of: 2026}\n"
                       "  - {name: nvidia-qm9700, price: $2, source: s, as_of: 2026}\n", 5, 12, "appears twice"),
    "breakout above native rate": (
        HEAD + "  - {name: nvidia-qm9700, breakout: {800 Gbps: 32}, source: s, as_of: 2026}\n",
        4, 37, "below the native port rate"),
    "bad enum": (HEAD + "  - {name: nvidia-qm9700, protocol: infinband, source: s, as_of: 2026}\n",
                 4, 37, "did you mean 'infiniband'?"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_user_catalog_gives_a_located_error(tmp_path, case):
    text, line, col, fragment = BAD[case]
    path = write(tmp_path, text)
    with pytest.raises(CatalogError) as info:
        catalog.load_catalog([path])
    message = str(info.value)
    assert message.startswith(f"{path}:{line}:{col}: "), message
    assert fragment in message
    assert "\n" not in message


def test_unknown_reference_is_located_at_the_field(tmp_path):
    text = """\
schema_version: 1
kind: server
items:
  - name: dgx-h100
    gpu: h100-sx
    source: typo test
    as_of: 2026
"""
    path = write(tmp_path, text)
    with pytest.raises(CatalogError, match=re.escape(f"{path}:5:10: server 'dgx-h100' names unknown gpu 'h100-sx'"
                                                     " (did you mean 'h100-sxm'?)")):
        catalog.load_catalog([path])


def test_unknown_cloud_gpu_reference_in_a_new_entry(tmp_path):
    text = """\
schema_version: 1
kind: cloud
items:
  - {name: my-cloud-8x, description: d, provider: p, gpu: b300, gpus: 8, network: efa,
     network_bandwidth: 3200 Gbps, price_on_demand: $100/h, region: r, source: s, as_of: 2026}
"""
    with pytest.raises(CatalogError, match=r":4:\d+: cloud 'my-cloud-8x' names unknown gpu 'b300'"):
        catalog.load_catalog([write(tmp_path, text)])


def test_fabric_profile_names_must_be_fabric_kinds(tmp_path):
    text = ("schema_version: 1\nkind: fabric\nitems:\n  - {name: infiniband-xdr, host_latency: 1 us, "
            "efficiency: 0.9, lossless: true, source: s, as_of: 2026}\n")
    with pytest.raises(CatalogError, match="did you mean 'infiniband'"):
        catalog.load_catalog([write(tmp_path, text)])


def test_missing_file_is_a_catalog_error(tmp_path):
    with pytest.raises(CatalogError, match="is not a readable catalog file") as info:
        catalog.load_catalog([tmp_path / "nope.yaml"])
    assert info.value.location.file == str(tmp_path / "nope.yaml")


# --- lookups and staleness --------------------------------------------------------------------

def test_find_by_name_with_did_you_mean():
    assert catalog.find(BUILTIN, "nvidia-qm9700") == ("switch", BUILTIN.switches["nvidia-qm9700"])
    assert catalog.find(BUILTIN, "default")[0] == "facility"
    assert catalog.find(BUILTIN, "h100-sxm", kind="gpus")[0] == "gpu"
    with pytest.raises(CatalogError, match="did you mean 'dgx-h100'"):
        catalog.find(BUILTIN, "dgx-h10")
    with pytest.raises(CatalogError, match="unknown switch name 'h100-sxm'"):
        catalog.find(BUILTIN, "h100-sxm", kind="switch")
    with pytest.raises(CatalogError, match="did you mean 'cable'"):
        catalog.normalize_kind("cabel")


def test_price_date_is_the_start_of_the_period():
    assert catalog.price_date("2024") == date(2024, 1, 1)
    assert catalog.price_date("2024-08") == date(2024, 8, 1)
    assert catalog.price_date("2024-08-15") == date(2024, 8, 15)
    with pytest.raises(ValueError):
        catalog.price_date("2024-02-30")


def test_stale_entries_at_the_18_month_boundary(tmp_path):
    text = OVERRIDE_QM9700.replace("2026-10", "2025-05")
    cat = catalog.load_catalog([write(tmp_path, text)])
    stale = lambda today: {s.name for s in catalog.stale_entries(cat, today)}  # noqa: E731
    assert "nvidia-qm9700" not in stale(date(2026, 11, 1))  # exactly 18 months
    assert "nvidia-qm9700" in stale(date(2026, 11, 2))
    entry = next(s for s in catalog.stale_entries(cat, date(2027, 2, 1)) if s.name == "nvidia-qm9700")
    assert (entry.kind, entry.as_of, entry.months) == ("switch", "2025-05", 21)


def test_unpriced_entries_are_never_stale():
    names = {s.name for s in catalog.stale_entries(BUILTIN, date(2100, 1, 1))}
    assert "a100-40g" not in names and not names & set(BUILTIN.fabrics)
    assert "dgx-a100-80g" in names and "default" in names


@settings(max_examples=50, deadline=None)
@given(days=st.integers(0, 4000), later=st.integers(0, 2000), months=st.integers(1, 36))
def test_staleness_grows_with_time_and_respects_the_limit(days, later, months):
    today = date(2024, 1, 1) + timedelta(days=days)
    now = {s.name for s in catalog.stale_entries(BUILTIN, today, months)}
    after = {s.name for s in catalog.stale_entries(BUILTIN, today + timedelta(days=later), months)}
    assert now <= after
    assert all(s.months >= months for s in catalog.stale_entries(BUILTIN, today, months))


def test_docs_describe_every_key_and_kind():
    doc = (Path(catalog.__file__).resolve().parents[2] / "docs" / "catalogs.md").read_text()
    for kind in KINDS:
        assert f"**{kind}**" in doc
        for key, _attr in catalog.field_keys(kind):
            assert f"`{key}`" in doc, f"docs/catalogs.md does not describe {kind}.{key}"
    counts = ", ".join(str(len(BUILTIN.by_kind(k))) for k in KINDS)
    assert f"{sum(len(BUILTIN.by_kind(k)) for k in KINDS)} entries" in doc, counts


_FIELD_KEYS = sorted({key for kind in KINDS for key, _ in catalog.field_keys(kind)} | {"name", "source", "as_of"})
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(-1e3, 1e3, allow_nan=False),
                     st.sampled_from(["400 Gbps", "$1,000", "2026", "10 us", "h100-sxm", "nvidia-qm9700", "", "3 m",
                                      "0.5", "ethernet", "80 GB", "x" * 70]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.sampled_from(_FIELD_KEYS + ["200 Gbps"]), inner, max_size=3), max_leaves=6)
_ITEMS = st.dictionaries(st.sampled_from(_FIELD_KEYS), _VALUES, max_size=6)
_FILES = st.fixed_dictionaries({"schema_version": st.sampled_from([1, 1, 2, True, "1"]),
                                "kind": st.one_of(st.sampled_from(KINDS), _VALUES),
                                "items": st.one_of(st.lists(_ITEMS, max_size=3), _VALUES)})


@settings(max_examples=150, deadline=None)
@given(doc=_FILES)
def test_any_user_file_loads_or_gives_one_located_catalog_error(doc):
    import tempfile

    import yaml

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.yaml"
        path.write_text(yaml.safe_dump(doc), encoding="utf-8")
        try:
            catalog.load_catalog([path], base=BUILTIN)
        except CatalogError as exc:
            assert str(exc).startswith(f"{path}:") and "\n" not in str(exc)


def test_did_you_mean_prefers_a_name_the_word_begins():
    with pytest.raises(CatalogError, match="did you mean 'h100-sxm'"):
        catalog.find(BUILTIN, "h100")
