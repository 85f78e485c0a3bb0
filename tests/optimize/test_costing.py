"""Price marks put on BOM lines from the catalog (designer.optimize.costing.annotate)."""
from designer.catalog import load_builtin
from designer.design import bom
from designer.optimize import costing

CAT = load_builtin()
FACILITY = CAT.facilities["default"]


def test_unpriced_line_reads_unpriced_not_the_entrys_basis() -> None:
    priced = bom.BomLine("server", "dgx-b300", "", "compute", 2.0, 1.0, 0.0, "")
    unpriced = bom.BomLine("server", "dgx-b300", "", "compute", 2.0, None, 0.0, "")
    out = costing.annotate((priced, unpriced), CAT, FACILITY)
    assert out[0].price_basis != "unpriced"
    assert out[0].price_basis == CAT.servers["dgx-b300"].provenance.price_basis
    assert out[1].price_basis == "unpriced"
