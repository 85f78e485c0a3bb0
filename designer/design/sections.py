"""BOM sections: the storage, in-band and out-of-band networks listed apart from the compute
fabric's lines, and the capex line each BOM line counts under."""

from __future__ import annotations

__all__ = ["NETWORK_SECTIONS", "capex_category", "section_of", "section_label", "sections_in_order",
           "group_by_section"]

from typing import Iterable

from designer.design import bom

# Roles of the management networks' lines; their capex is one line, ``management``.
_MANAGEMENT_ROLES = ("inband", "oob")


def capex_category(line: bom.BomLine) -> str:
    """The capex line a BOM line counts under: its category, ``storage`` for the file system and
    the storage fabric (role ``storage``), ``management`` for the in-band and out-of-band
    networks (roles ``inband``, ``oob``), a service's SKU."""
    if line.category == "service":
        return line.sku
    if line.role in _MANAGEMENT_ROLES:
        return "management"
    if line.role == "storage" or line.category == "storage":
        return "storage"
    return line.category


# The storage, in-band and out-of-band networks' lines (their roles) form sections of their own,
# listed after the file system; label of each section.
NETWORK_SECTIONS = {"storage": "storage system and fabric", "inband": "in-band management", "oob": "out-of-band management"}
_NETWORK_CATEGORIES = ("switch", "transceiver", "cable")


def section_of(line: bom.BomLine | None = None, *, category: str = "", role: str = "") -> str:
    """The BOM section a line (or a ``category`` and ``role``) is listed in: its network's role
    (``storage``, ``inband``, ``oob``) for a switch, optic or cable of those networks, the file
    system in ``storage`` with its fabric, else its category."""
    if line is not None:
        category, role = line.category, line.role
    if role in NETWORK_SECTIONS and category in _NETWORK_CATEGORIES:
        return role
    return category


def section_label(section: str) -> str:
    """A section's heading: the network's name, else the category."""
    return NETWORK_SECTIONS.get(section, section)


def sections_in_order(sections: Iterable[str]) -> tuple[str, ...]:
    """Section names in the order :func:`group_by_section` lists them, each once."""
    return tuple(sorted(set(sections), key=lambda n: (_section_rank(n), n)))


def _section_rank(section: str) -> tuple[int, int]:
    if section in NETWORK_SECTIONS:
        return bom.CATEGORIES.index("storage"), 1 + list(NETWORK_SECTIONS).index(section)
    return bom.category_rank(section)[0], 0


def group_by_section(lines: Iterable[bom.BomLine]) -> tuple[tuple[str, tuple[bom.BomLine, ...]], ...]:
    """Lines grouped by :func:`section_of`: the categories in :data:`CATEGORIES` order with the
    network sections after ``storage``, lines in :func:`sort_lines` order within each."""
    groups: dict[str, list[bom.BomLine]] = {}
    for line in bom.sort_lines(lines):
        groups.setdefault(section_of(line), []).append(line)
    return tuple((name, tuple(groups[name])) for name in sections_in_order(groups))
