"""``designer bom --check``: every transceiver and cable line of a design, hand-edited or not,
checked against the catalogs and against the lines it says it plugs into.

Rules (docs/topology.md, "Checking a bill of materials"), for each line that states what fits where:

* The SKU is a catalog transceiver or cable, and the line's ``connector``, ``lanes``,
  ``lane_gbps`` and ``media`` are that part's; its ``protocol`` is one the part speaks.
* A transceiver's ``plugs_into`` is a server, NIC or switch of the same design (a server's NIC
  is in it with the server) whose cage
  takes the optic's form (:func:`designer.topology.ports.fits`), speaks the protocol, and signals
  lanes at least as fast as the optic's.
* A cable has two ``ends``. A fiber cord joins two transceiver lines of the design (each end
  ``optic@device``: the optic SKU and the device its line plugs into) whose optical connector is
  the cord's and whose protocol is the cord's; a DAC, ACC, AOC or Cat6 joins two device lines
  whose cages take its two ends, speaking its protocol at its lane rate. A device's cages are its
  data cage, a switch's uplink cage, and the RJ45 management port every server, switch,
  appliance and storage block has (the out-of-band network's Cat6 ends there).
* A storage block (category ``storage``) and a server's storage adapter are devices too.

A line that states none of these fields is counted, not checked (a network whose parts list does
not say it).
"""

from __future__ import annotations

__all__ = ["Mismatch", "BomCheck", "check_bom"]

from dataclasses import dataclass

from designer.catalog.media import GBPS
from designer.catalog.ports import default_cage
from designer.catalog.types import Catalog, Connector, Protocol
from designer.design.bom import BomLine
from designer.topology.networks import ASSUMED_PORT_BPS
from designer.topology.ports import fits

_FIT_CATEGORIES = ("transceiver", "cable")
_DEVICE_CATEGORIES = ("server", "nic", "switch", "appliance", "storage")
_LANE_TOLERANCE_GBPS = 1e-6


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One problem: the BOM line (index in the design's ``bom``), its key and what is wrong."""

    index: int
    key: str
    message: str


@dataclass(frozen=True, slots=True)
class BomCheck:
    """What :func:`check_bom` found: the lines checked, those stating no fit, and the mismatches."""

    checked: int
    unstated: int
    mismatches: tuple[Mismatch, ...]


@dataclass(frozen=True, slots=True)
class _Cage:
    form: Connector
    protocols: frozenset[Protocol]
    lane_gbps: float


# Every server, switch, appliance and storage block has a 1000BASE-T RJ45 management port (its
# BMC or management interface) besides its data cages: the out-of-band network's cables end there.
_MANAGEMENT = _Cage(Connector.RJ45, frozenset({Protocol.ETHERNET}), 1.0)


def _cages(catalog: Catalog, line: BomLine) -> list[_Cage]:
    """The cages a device line offers a link: its data cage (the compute cage for a server), a
    switch's uplink cage where it has one, and the management port."""
    data = _cage(catalog, line)
    out = [data] if data is not None else []
    sw = catalog.switches.get(line.sku) if line.category == "switch" else None
    if sw is not None and sw.uplinks and sw.uplink_cage is not None and sw.uplink_lane_Bps:
        out.append(_Cage(sw.uplink_cage, frozenset({sw.protocol}), sw.uplink_lane_Bps / GBPS))
    server = catalog.servers.get(line.sku) if line.category == "server" else None
    if server is not None and not (server.storage_nic and server.storage_nics):
        # No storage adapter listed: the storage and in-band networks take one 100 GbE port each
        # of the server (designer.topology.networks, assumed).
        cage, _lanes, lane = default_cage(ASSUMED_PORT_BPS)
        out.append(_Cage(cage, frozenset({Protocol.ETHERNET}), lane / GBPS))
    if line.category in ("server", "switch", "appliance", "storage"):
        out.append(_MANAGEMENT)
    return out


def _cage(catalog: Catalog, line: BomLine) -> _Cage | None:
    """The data cage a device line offers a link (its compute cage for a server)."""
    if line.category == "switch" and line.sku in catalog.switches:
        sw = catalog.switches[line.sku]
        return None if sw.cage is None else _Cage(sw.cage, frozenset({sw.protocol}), sw.lane_Bps / GBPS)
    if line.category == "storage" and line.sku in catalog.storage:
        st = catalog.storage[line.sku]
        found = (st.cage, st.lanes, st.lane_Bps) if st.cage is not None else default_cage(st.port_rate_Bps)
        if not found or found[0] is None:
            return None
        return _Cage(found[0], frozenset(Protocol), found[2] / GBPS)
    nic = None
    if line.category == "nic":
        nic = catalog.nics.get(line.sku)
    elif line.category == "server" and line.sku in catalog.servers:
        nic = catalog.nics.get(catalog.servers[line.sku].nic)
    elif line.category == "appliance" and line.sku in catalog.appliances:
        nic = catalog.nics.get(catalog.appliances[line.sku].nic)
    if nic is None or nic.cage is None:
        return None
    return _Cage(nic.cage, frozenset(nic.protocols), nic.lane_Bps / GBPS)


def _own_fields(catalog: Catalog, i: int, line: BomLine) -> list[Mismatch]:
    part = (catalog.transceivers if line.category == "transceiver" else catalog.cables).get(line.sku)
    if part is None:
        return [Mismatch(i, "sku", f"{line.sku} is not a {line.category} in the catalogs")]
    out = []
    stated = {"connector": line.connector, "lanes": line.lanes, "lane_gbps": line.lane_gbps, "media": line.media}
    actual = {"connector": part.connector.value, "lanes": part.lanes, "lane_gbps": part.lane_Bps / GBPS,
              "media": part.media.value}
    for key, value in stated.items():
        want = actual[key]
        same = abs(value - want) < _LANE_TOLERANCE_GBPS if key == "lane_gbps" else value == want
        if not same:
            out.append(Mismatch(i, key, f"{line.sku} has {key} {want}, the line says {value}"))
    if line.protocol not in {p.value for p in part.protocols}:
        speaks = " and ".join(sorted(p.value for p in part.protocols))
        out.append(Mismatch(i, "protocol", f"{line.sku} speaks {speaks}, not {line.protocol or 'nothing'}"))
    return out


def _into_device(catalog: Catalog, i: int, key: str, line: BomLine, form: str, device: BomLine | None,
                 name: str) -> list[Mismatch]:
    """Whether a part end of form ``form`` (the line's) goes into the cage of ``device``."""
    if device is None:
        return [Mismatch(i, key, f"{name} is not a server, NIC, switch or appliance line of this design")]
    cages = _cages(catalog, device)
    if not cages:
        return [Mismatch(i, key, f"{name} states no cage in the catalogs")]
    # The end goes into whichever of the device's cages its form fits (else: why not, data cage).
    found = [c for c in cages if fits(Connector(form), c.form)]
    cage = found[0] if found else cages[0]
    out = []
    if not fits(Connector(form), cage.form):
        out.append(Mismatch(i, key, f"a {form.upper()} end does not go into {name}'s {cage.form.value.upper()} cage"))
    if line.protocol not in {p.value for p in cage.protocols}:
        out.append(Mismatch(i, key, f"{name} does not speak {line.protocol}"))
    if line.lane_gbps > cage.lane_gbps + _LANE_TOLERANCE_GBPS:
        out.append(Mismatch(i, key, f"{name}'s cage signals {cage.lane_gbps:g}G lanes, slower than the "
                                    f"{line.lane_gbps:g}G of {line.sku}"))
    return out


def _cable_ends(catalog: Catalog, i: int, line: BomLine, devices: dict[str, BomLine],
                optics: dict[str, list[BomLine]]) -> list[Mismatch]:
    if len(line.ends) != 2:
        return [Mismatch(i, "ends", f"a cable has two ends; the line names {len(line.ends)}")]
    cable = catalog.cables[line.sku]
    if cable.media.is_fiber:
        out = []
        for end, form in zip(line.ends, (cable.connector, cable.far)):
            sku, _, device = end.partition("@")
            optic = next((o for o in optics.get(sku, ()) if not device or o.plugs_into == device), None)
            if optic is None:
                what = f"{sku} in {device}" if device else end
                out.append(Mismatch(i, "ends", f"{what} is not a transceiver line of this design (a fiber "
                                               "cord joins two optics)"))
                continue
            part = catalog.transceivers.get(sku)
            if part is not None and part.fiber is not form:
                out.append(Mismatch(i, "ends", f"{sku} takes a {part.fiber.value} cord, not {form.value}"))
            if optic.protocol and optic.protocol != line.protocol:
                out.append(Mismatch(i, "ends", f"{sku} runs {optic.protocol}, the cord {line.protocol}"))
        return out
    a, b = line.ends
    forward = (_into_device(catalog, i, "ends", line, cable.connector.value, devices.get(a), a)
               + _into_device(catalog, i, "ends", line, cable.far.value, devices.get(b), b))
    if not forward:
        return []
    backward = (_into_device(catalog, i, "ends", line, cable.far.value, devices.get(a), a)
                + _into_device(catalog, i, "ends", line, cable.connector.value, devices.get(b), b))
    return [] if not backward else forward


def check_bom(lines: tuple[BomLine, ...], catalog: Catalog) -> BomCheck:
    """Check every transceiver and cable line of a bill of materials (rules in the module docstring).

    Args:
        lines: The design's ``bom``, in file order (mismatches name the index).
        catalog: The catalogs the design was made with.

    Returns:
        How many lines were checked, how many state no fit, and every mismatch in line order.
    """
    devices = {l.sku: l for l in lines if l.category in _DEVICE_CATEGORIES}
    for line in [l for l in lines if l.category == "server" and l.sku in catalog.servers]:
        # A server's NICs are in the design with it, listed apart or not.
        server = catalog.servers[line.sku]
        for nic in (server.nic, server.storage_nic):
            if nic:
                devices.setdefault(nic, BomLine("nic", nic, "", line.role, line.quantity, None, 0.0, ""))
    optics: dict[str, list[BomLine]] = {}
    for l in lines:
        if l.category == "transceiver":
            optics.setdefault(l.sku, []).append(l)
    out: list[Mismatch] = []
    checked = unstated = 0
    for i, line in enumerate(lines):
        if line.category not in _FIT_CATEGORIES:
            continue
        if not (line.connector or line.protocol or line.plugs_into or line.ends):
            unstated += 1
            continue
        checked += 1
        own = _own_fields(catalog, i, line)
        out.extend(own)
        if any(m.key == "sku" for m in own):
            continue
        if line.category == "transceiver":
            form = catalog.transceivers[line.sku].connector.value
            out.extend(_into_device(catalog, i, "plugs_into", line, form, devices.get(line.plugs_into),
                                    line.plugs_into or "(none)"))
        else:
            out.extend(_cable_ends(catalog, i, line, devices, optics))
    return BomCheck(checked, unstated, tuple(out))
