"""A buyer's price book: per-vendor discounts off catalog prices and the currency amounts are shown in.

Checked: each discount reaches exactly the entries of its vendor (``other-vendors`` the parts of
vendors the book does not name, never a cloud provider); an unpriced entry stays unpriced; a
design priced with a book costs what the discounted prices say, records the book, and shows its
totals in the book's currency at its rate; a misspelt vendor or book name is a located error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from designer import planner
from designer.catalog import load_builtin, load_catalog
from designer.catalog.pricebook import apply_price_book
from designer.design import dump_design, parse_design
from designer.errors import CatalogError, SpecError
from designer.planner.inputs import load_inputs
from designer.report.summary import render_summary

BUILTIN = load_builtin()
BOOK = """\
schema_version: 1
kind: price_book
items:
  - name: acme-2026-11
    description: Acme Systems quote Q-2026-114
    currency: EUR
    exchange_rate: 0.86
    discounts: {discounts}
    source: Acme quote Q-2026-114; ECB reference rate 2026-11-30
    as_of: 2026-11
    price_basis: quote
"""


def _book(tmp_path: Path, discounts: str = "{nvidia: 20%, aws: 10%, other-vendors: 5%}") -> Path:
    path = tmp_path / "book.yaml"
    path.write_text(BOOK.format(discounts=discounts))
    return path


def test_discounts_reach_the_entries_of_their_vendor(tmp_path):
    cat = load_catalog([_book(tmp_path)])
    book = cat.price_books["acme-2026-11"]
    assert (book.currency, book.exchange_rate) == ("EUR", 0.86)
    off = apply_price_book(cat, "acme-2026-11")
    dgx, qm = cat.servers["dgx-h100"], cat.switches["nvidia-qm9700"]
    assert off.servers["dgx-h100"].price_usd == pytest.approx(0.8 * dgx.price_usd)
    assert off.switches["nvidia-qm9700"].price_usd == pytest.approx(0.8 * qm.price_usd)
    # An OEM server and the cables (no vendor) take the other-vendors share; arista is not named either.
    assert off.servers["oem-mi300x-8g"].price_usd == pytest.approx(0.95 * cat.servers["oem-mi300x-8g"].price_usd)
    some_cable = next(iter(cat.cables))
    assert off.cables[some_cable].price_usd == pytest.approx(0.95 * cat.cables[some_cable].price_usd)
    # Clouds: every pricing model of the named provider, and no blanket share for the others.
    p5, p5_off = cat.clouds["aws-p5.48xlarge"], off.clouds["aws-p5.48xlarge"]
    for model in p5.pricing_models():
        assert p5_off.price_usd_per_s(model) == pytest.approx(0.9 * p5.price_usd_per_s(model))
    assert off.clouds["nebius-8x-h100-sxm"] == cat.clouds["nebius-8x-h100-sxm"]
    # The discounted entry says so, on the book's basis.
    assert "20.0% off per price book acme-2026-11" in off.servers["dgx-h100"].provenance.note
    assert off.servers["dgx-h100"].provenance.price_basis == "quote"
    assert apply_price_book(cat, None) is cat


def test_an_unpriced_entry_stays_unpriced(tmp_path):
    cat = load_catalog([_book(tmp_path)])
    unpriced = [n for n, g in cat.gpus.items() if g.price_usd is None]
    off = apply_price_book(cat, "acme-2026-11")
    assert all(off.gpus[n].price_usd is None for n in unpriced)
    p5e = off.clouds["aws-p5e.48xlarge"]  # capacity blocks only: no on-demand price, never $0
    assert p5e.price_on_demand_usd_per_s is None


@pytest.mark.parametrize("discounts, message", [
    ("{nvidai: 20%}", "a vendor no catalog entry has (did you mean 'nvidia'?)"),
    ("{nvidia: 100%}", "leaves nothing to pay"),
    ("{}", "expected a mapping of vendor to discount"),
])
def test_bad_discounts_are_located(tmp_path, discounts, message):
    with pytest.raises(CatalogError) as err:
        load_catalog([_book(tmp_path, discounts)])
    assert message in str(err.value)
    assert err.value.location.file.endswith("book.yaml") and err.value.location.line == 8  # the discounts line


def test_a_currency_is_an_iso_code(tmp_path):
    path = tmp_path / "book.yaml"
    path.write_text(BOOK.format(discounts="{nvidia: 1%}").replace("currency: EUR", "currency: euro"))
    with pytest.raises(CatalogError, match="ISO 4217"):
        load_catalog([path])


PINNED = """\
version: 1
name: booked
horizon: 3 years
workloads:
  - name: llama3-8b
    model: {{preset: llama3-8b}}
    tokens: 100B
    global_batch: 512
    gpus: 64
    deadline: 60 days
constraints:
  deployments: [on_prem]
system: {{server: dgx-h100, switch: nvidia-qm9700, nodes: 8, fabric: infiniband, topology: rail_optimized}}
catalogs: [book.yaml]
{extra}"""


def _plan(tmp_path: Path, extra: str):
    _book(tmp_path, "{nvidia: 20%}")
    path = tmp_path / f"spec{len(extra)}.yaml"
    path.write_text(PINNED.format(extra=extra))
    return planner.plan(*load_inputs(path))


def test_a_design_priced_with_a_book(tmp_path):
    plain, booked = _plan(tmp_path, ""), _plan(tmp_path, "price_book: acme-2026-11\n")
    assert plain.price_book is None
    for category in ("server", "gpu", "nic", "switch"):  # NVIDIA parts: 20% off
        assert booked.cost.capex_by_category[category] == pytest.approx(0.8 * plain.cost.capex_by_category[category])
    # Storage capex: the DDN file system and the fabric's optics and cables at their price, the
    # storage fabric's NVIDIA switches 20% off.
    def storage_split(design):
        lines = [l for l in design.bom if l.role == "storage"]
        return (sum(l.total_usd for l in lines if l.category != "switch"),
                sum(l.total_usd for l in lines if l.category == "switch"))
    (plain_rest, plain_switches), (booked_rest, booked_switches) = storage_split(plain), storage_split(booked)
    assert booked_rest == pytest.approx(plain_rest) and plain_switches > 0
    assert booked_switches == pytest.approx(0.8 * plain_switches)
    # Support is a share of the price paid, so it follows the discount.
    assert booked.cost.opex_by_category["support"] < plain.cost.opex_by_category["support"]
    book = booked.price_book
    assert (book.name, book.currency, book.exchange_rate, dict(book.discounts)) == (
        "acme-2026-11", "EUR", 0.86, {"nvidia": 0.2})
    assert parse_design(dump_design(booked)).price_book == book  # the record round-trips
    text = render_summary(booked)
    assert f"total EUR {booked.cost.total_usd * 0.86:,.2f}" in text
    assert "at 0.86 EUR per USD; discounts nvidia 20.0%" in text


def test_an_unknown_book_is_located_in_the_spec(tmp_path):
    _book(tmp_path)
    path = tmp_path / "spec.yaml"
    path.write_text(PINNED.format(extra="price_book: acme-2026\n"))
    with pytest.raises(SpecError) as err:
        load_inputs(path)
    assert "unknown price book 'acme-2026'" in str(err.value)
    assert err.value.location.line == 15
