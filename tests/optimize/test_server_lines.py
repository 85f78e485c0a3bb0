"""A server's BOM lines (designer.optimize.pricing.server_lines): the GPU and compute NIC lines at
their catalog prices and the server line carrying the rest add up to the quoted price, and a GPU
without a price of its own is marked as in the server's price, never a bare $0."""

from __future__ import annotations

import pytest

from designer.catalog.load import load_catalog
from designer.optimize.pricing import server_lines

CATALOG = load_catalog(())


@pytest.mark.parametrize("name", sorted(CATALOG.servers))
def test_the_lines_add_up_to_the_quoted_price(name):
    server = CATALOG.servers[name]
    if server.price_usd is None:
        pytest.skip("an unpriced server is not a candidate")
    lines = server_lines(CATALOG, name, 3)
    assert sum(l.quantity * l.unit_price_usd for l in lines) == pytest.approx(3 * server.price_usd)


def test_a_gpu_sold_only_inside_the_rack_is_marked_in_the_server_price():
    assert CATALOG.gpus["b200-gb200"].price_usd is None  # sold inside the GB200 NVL72 rack
    rack, gpu, nic = server_lines(CATALOG, "gb200-nvl72", 2)
    assert (gpu.quantity, gpu.unit_price_usd) == (144, 0.0)
    assert gpu.description.endswith(" (in the server price)")
    assert rack.description.endswith(" (GPUs in the server price; compute NICs listed separately)")
    assert nic.unit_price_usd == CATALOG.nics[CATALOG.servers["gb200-nvl72"].nic].price_usd > 0


def test_a_priced_gpu_has_its_own_line_at_its_price():
    server = CATALOG.servers["dgx-h100"]
    rack, gpu, _ = server_lines(CATALOG, "dgx-h100", 1)
    assert gpu.unit_price_usd == CATALOG.gpus[server.gpu].price_usd > 0
    assert "in the server price" not in gpu.description
    assert rack.description.endswith(" (GPUs and compute NICs listed separately)")
