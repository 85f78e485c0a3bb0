"""What changed between two designs: cost, system, per-workload predictions and BOM line items.

Values are compared as the design file writes them (money to the cent, other floats to
``bom.SIG_DIGITS`` significant digits), so a freshly solved design and the same design loaded from
its file never differ, and the diff agrees with a ``git diff`` of the two files.
"""

from __future__ import annotations

__all__ = [
    "BomChange",
    "ChangeKind",
    "DesignDiff",
    "FieldChange",
    "MoneyChange",
    "WorkloadChange",
    "IncreaseLimit",
    "SYMBOLS",
    "diff_designs",
    "parse_increase_limit",
]

from dataclasses import dataclass, fields
from enum import Enum
from typing import Any, Iterable

from designer.design import bom
from designer.design.io import as_written
from designer.design.model import Design, WorkloadResult

# Design fields that describe the inputs rather than the design. Their changes are reported (they
# tell an input change from a code change) but do not make two designs differ.
_INPUT_FIELDS = ("spec_name", "objective", "horizon_days", "spec_digest", "catalog_digest",
                 "catalog_dates", "catalog_files", "facility", "price_book", "tool_version")


class ChangeKind(str, Enum):
    """How a keyed item (workload, BOM line) changed."""

    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"

    @property
    def symbol(self) -> str:
        """``+`` added, ``~`` changed, ``-`` removed (Terraform's plan markers)."""
        return SYMBOLS[self]


SYMBOLS = {ChangeKind.ADDED: "+", ChangeKind.CHANGED: "~", ChangeKind.REMOVED: "-"}


@dataclass(frozen=True, slots=True)
class MoneyChange:
    """An amount in US dollars, before and after."""

    old_usd: float
    new_usd: float

    @property
    def delta_usd(self) -> float:
        """New minus old, rounded to cents."""
        return bom.round_money(bom.round_money(self.new_usd) - bom.round_money(self.old_usd))

    @property
    def delta_pct(self) -> float | None:
        """Change relative to the old amount, in percent; ``None`` when the old amount is zero."""
        old = bom.round_money(self.old_usd)
        return None if old == 0 else 100.0 * self.delta_usd / abs(old)

    @property
    def changed(self) -> bool:
        """Whether the amounts differ to the cent."""
        return self.delta_usd != 0


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field whose written value changed. Values are as written (money as text, ``None`` absent)."""

    field: str
    old: Any
    new: Any


@dataclass(frozen=True, slots=True)
class WorkloadChange:
    """A workload added, removed or changed; ``fields`` lists every changed prediction or plan field."""

    name: str
    kind: ChangeKind
    old: WorkloadResult | None
    new: WorkloadResult | None
    fields: tuple[FieldChange, ...]

    @property
    def utilization_delta(self) -> float | None:
        """New minus old predicted utilization (``None`` for an added or removed workload)."""
        if self.old is None or self.new is None:
            return None
        return bom.round_sig(self.new.utilization) - bom.round_sig(self.old.utilization)

    @property
    def days_delta(self) -> float | None:
        """New minus old time to train, in days (``None`` for an added or removed workload)."""
        if self.old is None or self.new is None:
            return None
        return bom.round_sig(self.new.time_to_train_days) - bom.round_sig(self.old.time_to_train_days)


@dataclass(frozen=True, slots=True)
class BomChange:
    """A BOM line, keyed by ``(category, role, sku)``, added, removed or changed in quantity or price.

    An absent side has quantity and total 0 and unit price ``None``.
    """

    category: str
    role: str
    sku: str
    kind: ChangeKind
    old_quantity: float
    new_quantity: float
    old_unit_price_usd: float | None
    new_unit_price_usd: float | None
    old_total_usd: float
    new_total_usd: float

    @property
    def quantity_delta(self) -> float:
        """New minus old quantity."""
        return bom.round_quantity(self.new_quantity - self.old_quantity)

    @property
    def delta_usd(self) -> float:
        """New minus old line total, in dollars."""
        return bom.round_money(self.new_total_usd - self.old_total_usd)


@dataclass(frozen=True, slots=True)
class DesignDiff:
    """Everything a reviewer checks between two designs."""

    old_name: str
    new_name: str
    total: MoneyChange
    capex: MoneyChange
    opex: MoneyChange
    cloud: MoneyChange
    residual: MoneyChange  # minus the recovered value (a credit), so capex + opex + cloud + residual = total
    system: tuple[FieldChange, ...]
    workloads: tuple[WorkloadChange, ...]
    bom: tuple[BomChange, ...]
    inputs: tuple[FieldChange, ...]  # informational: does not count towards is_empty

    @property
    def is_empty(self) -> bool:
        """True when cost, system, workloads and BOM are equal as written (inputs may differ)."""
        return not (any(m.changed for m in (self.total, self.capex, self.opex, self.cloud, self.residual))
                    or self.system or self.workloads or self.bom)

    def money_rows(self) -> tuple[str, ...]:
        """The cost rows a reviewer sees, in order: capex, opex, the residual credit when either
        design has one, cloud and total; the rows above total add up to it (``Cost.total_usd`` =
        capex + opex + cloud - residual)."""
        credit = ("residual",) if self.residual.old_usd or self.residual.new_usd else ()
        return ("capex", "opex", *credit, "cloud", "total")

    @property
    def bom_delta_usd(self) -> float:
        """Sum of the BOM line total changes."""
        return bom.round_money(sum(c.delta_usd for c in self.bom))

    def counts(self) -> dict[str, int]:
        """How many BOM lines were added, changed and removed, and how many system fields and
        workloads changed (the diff's summary line)."""
        out = {k.value: sum(c.kind is k for c in self.bom) for k in (ChangeKind.ADDED, ChangeKind.CHANGED,
                                                                     ChangeKind.REMOVED)}
        out["system_fields"] = len(self.system)
        out["workloads"] = len(self.workloads)
        return out


@dataclass(frozen=True, slots=True)
class IncreaseLimit:
    """The most the total cost may rise: a fraction of the old total (``5%``) or dollars (``$50k``)."""

    text: str
    fraction: float | None = None
    usd: float | None = None

    def exceeded_by(self, diff: DesignDiff) -> bool:
        """Whether the new total is more than the limit above the old one."""
        rise = diff.total.delta_usd
        if self.usd is not None:
            return rise > bom.round_money(self.usd)
        old = bom.round_money(diff.total.old_usd)
        assert self.fraction is not None
        return rise > 0 and (old <= 0 or rise > self.fraction * abs(old) + 0.005)


def parse_increase_limit(text: str) -> IncreaseLimit:
    """``5%`` (of the old total) or ``$50k`` (dollars, as the spec writes money).

    Raises:
        ValueError: neither form; the message says how to write it.
    """
    from designer.spec import units

    written = text.strip()
    if written.endswith("%"):
        try:
            pct = float(written[:-1].strip())
        except ValueError:
            pct = -1.0
        if not 0 <= pct < 1e6:
            raise ValueError(f"--fail-on-increase: cannot read {written!r} as a percentage such as 5%")
        return IncreaseLimit(written, fraction=pct / 100.0)
    try:
        return IncreaseLimit(written, usd=units.parse_money(written))
    except units.UnitError:
        raise ValueError(f"--fail-on-increase: expected a percentage such as 5% or dollars such as $50k, "
                         f"got {written!r}") from None


def _field_changes(old: Any, new: Any, names: Iterable[str], prefix: str = "") -> list[FieldChange]:
    out: list[FieldChange] = []
    for name in names:
        a, b = getattr(old, name), getattr(new, name)
        if hasattr(a, "__dataclass_fields__") and hasattr(b, "__dataclass_fields__"):
            out += _field_changes(a, b, [f.name for f in fields(a)], f"{prefix}{name}.")
            continue
        wa, wb = as_written(a, name), as_written(b, name)
        if wa != wb:
            out.append(FieldChange(prefix + name, wa, wb))
    return out


def _workload_changes(old: Design, new: Design) -> tuple[WorkloadChange, ...]:
    before = {w.name: w for w in old.workloads}
    after = {w.name: w for w in new.workloads}
    names = [w.name for w in old.workloads] + [w.name for w in new.workloads if w.name not in before]
    out: list[WorkloadChange] = []
    for name in dict.fromkeys(names):
        a, b = before.get(name), after.get(name)
        if a is None:
            out.append(WorkloadChange(name, ChangeKind.ADDED, None, b, ()))
        elif b is None:
            out.append(WorkloadChange(name, ChangeKind.REMOVED, a, None, ()))
        else:
            changed = _field_changes(a, b, [f.name for f in fields(a) if f.name != "name"])
            if changed:
                out.append(WorkloadChange(name, ChangeKind.CHANGED, a, b, tuple(changed)))
    return tuple(out)


def _bom_index(lines: Iterable[bom.BomLine]) -> dict[tuple[str, str, str], tuple[float, float | None, float]]:
    """(category, role, sku) -> (quantity, unit price, total); repeated keys are summed."""
    index: dict[tuple[str, str, str], tuple[float, float | None, float]] = {}
    for line in bom.sort_lines(lines):
        key = (line.category, line.role, line.sku)
        qty, total = bom.round_quantity(line.quantity), bom.line_total_usd(line)
        price: float | None = None if line.unit_price_usd is None else bom.round_money(line.unit_price_usd)
        if key in index:
            q0, p0, t0 = index[key]
            qty, total = bom.round_quantity(q0 + qty), bom.round_money(t0 + total)
            price = price if p0 == price else (bom.round_money(total / qty) if qty else None)
        index[key] = (qty, price, total)
    return index


def _bom_changes(old: Design, new: Design) -> tuple[BomChange, ...]:
    before, after = _bom_index(old.bom), _bom_index(new.bom)
    rank = {k: i for i, k in enumerate(bom.CATEGORIES)}
    keys = sorted(set(before) | set(after), key=lambda k: (rank.get(k[0], len(rank)), *k))
    out: list[BomChange] = []
    for key in keys:
        a, b = before.get(key), after.get(key)
        if a == b:
            continue
        kind = ChangeKind.ADDED if a is None else ChangeKind.REMOVED if b is None else ChangeKind.CHANGED
        qa, pa, ta = a if a is not None else (0.0, None, 0.0)
        qb, pb, tb = b if b is not None else (0.0, None, 0.0)
        out.append(BomChange(*key, kind, qa, qb, pa, pb, ta, tb))
    return tuple(out)


def diff_designs(old: Design, new: Design) -> DesignDiff:
    """Compare two designs the way a reviewer does.

    Args:
        old: the design before the change.
        new: the design after it.

    Returns:
        Cost changes (total, capex, opex, cloud and the residual credit as a negative amount: absolute
        and relative), changed system fields
        (``fabric: infiniband -> roce``, ``nodes: 128 -> 144``), per-workload changes (added,
        removed, or changed plan and predictions such as utilization and time to train), BOM lines
        added, removed and changed keyed by ``(category, role, sku)`` with quantity and cost
        deltas, and changed input fields (spec and catalog digests, tool version) for information.
        ``is_empty`` is true when nothing but the inputs differs.
    """
    return DesignDiff(
        old_name=old.spec_name,
        new_name=new.spec_name,
        total=MoneyChange(old.cost.total_usd, new.cost.total_usd),
        capex=MoneyChange(old.cost.capex_usd, new.cost.capex_usd),
        opex=MoneyChange(old.cost.opex_usd, new.cost.opex_usd),
        cloud=MoneyChange(old.cost.cloud_usd, new.cost.cloud_usd),
        residual=MoneyChange(-old.cost.residual_usd, -new.cost.residual_usd),
        system=tuple(_field_changes(old.system, new.system, [f.name for f in fields(old.system)])),
        workloads=_workload_changes(old, new),
        bom=_bom_changes(old, new),
        inputs=tuple(_field_changes(old, new, _INPUT_FIELDS)),
    )
