"""Loading a spec together with the catalogs it names, and checking the names it uses.

A spec can only be validated against a catalog: ``system.server: dgx-h100`` is a name that must
exist. This module does both loads and the cross-checks, locating every problem in the spec file.
"""

from __future__ import annotations

__all__ = ["load_inputs", "check_references"]

import difflib
from pathlib import Path

from designer.catalog.load import load_catalog
from designer.catalog.types import Catalog
from designer.errors import SpecError
from designer.spec.load import load_spec
from designer.spec.models import Spec


def _hint(name: str, names) -> str:
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.5)
    return f"; did you mean '{close[0]}'?" if close else ""


def check_references(spec: Spec, catalog: Catalog) -> None:
    """Check that every catalog name the spec uses exists and fits where it is used.

    Raises:
        SpecError: located at the spec key that names the unknown or misplaced entry.
    """
    pin = spec.system
    if pin.server is not None and pin.server not in catalog.servers and pin.server not in catalog.clouds:
        names = [*catalog.servers, *catalog.clouds]
        raise SpecError(f"unknown server or cloud instance '{pin.server}'{_hint(pin.server, names)}; "
                        "`designer catalog list --kind server` lists them", spec.locate(("system", "server")))
    if pin.switch is not None and pin.switch not in catalog.switches:
        raise SpecError(f"unknown switch '{pin.switch}'{_hint(pin.switch, catalog.switches)}",
                        spec.locate(("system", "switch")))
    if pin.server in catalog.clouds:
        if pin.deployment is not None and pin.deployment.value != "cloud":
            raise SpecError(f"'{pin.server}' is a cloud instance but system.deployment is {pin.deployment.value}",
                            spec.locate(("system", "deployment")))
        if pin.switch is not None:
            raise SpecError(f"'{pin.server}' is a cloud instance: it comes with its provider's network, "
                            "so system.switch cannot be set", spec.locate(("system", "switch")))
        network = catalog.clouds[pin.server].network.value
        if pin.fabric is not None and pin.fabric != network:
            raise SpecError(f"'{pin.server}' comes with a {network} network, not {pin.fabric}",
                            spec.locate(("system", "fabric")))
    if pin.server in catalog.servers and pin.deployment is not None and pin.deployment.value == "cloud":
        raise SpecError(f"'{pin.server}' is an on-prem server but system.deployment is cloud",
                        spec.locate(("system", "deployment")))
    known_gpus = set(catalog.gpus)
    for i, gpu in enumerate(spec.constraints.gpus):
        if gpu not in known_gpus:
            raise SpecError(f"unknown GPU '{gpu}'{_hint(gpu, known_gpus)}", spec.locate(("constraints", "gpus", i)))


def load_inputs(spec_path: str | Path) -> tuple[Spec, Catalog]:
    """Load a spec, the built-in catalogs and the spec's own catalog files, and cross-check them.

    Catalog paths in the spec resolve relative to the spec's folder. User catalogs override the
    built-ins in the order listed.

    Raises:
        SpecError: the spec is invalid or names something the catalogs lack.
        CatalogError: a catalog file is invalid (located in that file).
    """
    spec = load_spec(spec_path)
    catalog = load_catalog(spec.catalogs)
    check_references(spec, catalog)
    return spec, catalog
