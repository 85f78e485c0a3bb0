"""Shared test machinery: the ``--update-golden`` option, the golden-file helper, and design factories.

The factory designs are internally consistent (counts, prices, power and cost add up) and use
published figures where there are any; the sources are cited next to each constant.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable

import hypothesis_profiles  # ci (fixed seed), dev, long: chosen by HYPOTHESIS_PROFILE
import pytest

from designer.cli import atomic
from designer.design import bom
from designer.design import (
    Alternative,
    Breakdown,
    ConstraintStatus,
    CostBreakdown,
    Design,
    SolverInfo,
    SoftwareUsed,
    SystemChoice,
    WorkloadResult,
)

GOLDEN_DIR = Path(__file__).parent / "golden"


# ---------------------------------------------------------------- golden files



hypothesis_profiles.load()

def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the golden files under tests/golden/ with the current output")


class Golden:
    """Compares text with a golden file byte for byte, or rewrites the file in update mode."""

    def __init__(self, update: bool):
        self.update = update

    def check(self, path: Path, actual: str) -> None:
        """Fail with a unified diff when ``actual`` differs from the file at ``path``."""
        data = actual.encode("utf-8")
        if self.update:
            if not path.exists() or path.read_bytes() != data:
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic.write_atomic(path, actual)
            return
        root = GOLDEN_DIR.parent.parent
        name = path.relative_to(root) if path.is_relative_to(root) else path
        if not path.exists():
            pytest.fail(f"golden file {name} is missing; run `pytest --update-golden` and review it", pytrace=False)
        expected = path.read_bytes()
        if expected != data:
            diff = "".join(difflib.unified_diff(
                expected.decode("utf-8", "replace").splitlines(keepends=True), actual.splitlines(keepends=True),
                fromfile=f"{name} (golden)", tofile=f"{name} (actual)"))
            pytest.fail(f"output differs from golden file {name}:\n{diff}\n"
                        "If the change is intended, run `pytest --update-golden` and review the diff.",
                        pytrace=False)


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    """The golden-file helper; rewrites files when pytest runs with ``--update-golden``."""
    return Golden(bool(request.config.getoption("--update-golden")))


# ---------------------------------------------------------------- factory constants (with sources)

# H100 SXM dense BF16 peak, 989 TFLOP/s: NVIDIA H100 datasheet; the peak behind the MFU figures of
# the Llama 3 paper and the Megatron-Core tables.
H100_BF16_PEAK_FLOPS = 989e12
# Llama 3 70B: 70.6e9 parameters, 8,192-token sequences (Meta, The Llama 3 Herd of Models, 2024).
LLAMA3_70B_PARAMS = 70.6e9
SEQ_LEN = 8192
GLOBAL_BATCH = 1024  # sequences per step
TOKENS = 15e12  # Llama 3 pre-training corpus size, 15T tokens (same paper)
# BF16 MFU 43% on 8,192 H100s, 41% on 16,384 (Llama 3 paper, Table 4 and Section 3.3).
MFU_IB, MFU_ROCE = 0.43, 0.41

# DGX H100: $310k street price ('H100 Freakonomics' spreadsheet, Aug 2024); 10.2 kW maximum draw
# (DGX H100 power guide, 6x 3.3 kW PSUs).
DGX_H100_USD, DGX_H100_W = 310_000.0, 10_200.0
# Quantum-2 QM9700, 64x NDR 400G: $36k street (same spreadsheet); 1.1 kW is an estimate.
QM9700_USD, QM9700_W = 36_000.0, 1_100.0
# Spectrum-4 SN5600, 64x 800GbE (128x 400G with breakouts): $60k and 1.1 kW are both estimates.
SN5600_USD, SN5600_W = 60_000.0, 1_100.0
# 800G twin-port OSFP SR8 transceiver: ~$1,000 (infra-economics.com), 15 W (NVIDIA MMA4Z00-NS doc).
OSFP_800G_USD, OSFP_800G_W = 1_000.0, 15.0
# NDR 400G MPO fibre: ~$100, an estimate (part 980-9I570-00N030 in the DGX SuperPOD H100 RA).
FIBER_400G_USD = 100.0
# 42U rack with PDUs: $5,000 is an estimate without a source; it only makes the rack line non-zero.
RACK_USD = 5_000.0
RACK_SOURCE = "estimate (no source)"
# p5.48xlarge on demand, us-east-1: $55.04/h (SkyPilot catalog v8, after the June 2025 price cut).
P5_USD_PER_H = 55.04

SERVERS_PER_RACK = 3  # 3 x 10.2 kW = 30.6 kW fits a 40 kW rack; 4 would not
ELECTRICITY_USD_PER_KWH = 0.08  # the README's spec example
PUE = 1.3  # the README's spec example
HORIZON_DAYS = 3 * 365.0  # units.py: a year is 365 days
DEADLINE_DAYS = 170.0
MIN_UTILIZATION = 0.80
BUDGET_TOTAL_USD = 90e6
MAX_POWER_W = 5e6


def make_workload(gpus: int, *, tp: int = 8, pp: int = 4, mfu: float = MFU_IB, utilization: float = 0.86,
                  name: str = "llama3-70b", deadline_days: float | None = DEADLINE_DAYS) -> WorkloadResult:
    """A workload result from the 6·N·D training-FLOP model (Kaplan et al., 2020).

    Step time = 6 · params · tokens per step / (MFU · peak · GPUs). The pipeline bubble is the 1F1B
    fraction (pp - 1) / microbatches of the compute time (Narayanan et al., SC21); the rest of the
    non-compute time is exposed communication, split 40/10/50 over TP/PP/DP (illustrative).
    """
    dp = gpus // (tp * pp)
    tokens_per_step = GLOBAL_BATCH * SEQ_LEN
    step = 6 * LLAMA3_70B_PARAMS * tokens_per_step / (mfu * H100_BF16_PEAK_FLOPS * gpus)
    compute = utilization * step
    microbatches = GLOBAL_BATCH // dp
    bubble = compute * (pp - 1) / microbatches
    exposed = step - compute - bubble
    tokens_per_s = tokens_per_step / step
    return WorkloadResult(
        name=name, deployment="on_prem", server="dgx-h100", gpus=gpus, tp=tp, pp=pp, dp=dp, ep=1, cp=1,
        microbatch=1, zero=1, step_time_s=step, utilization=utilization, mfu=mfu,
        tflops_per_gpu=mfu * H100_BF16_PEAK_FLOPS / 1e12, tokens_per_s=tokens_per_s,
        time_to_train_days=TOKENS / tokens_per_s / 86400.0, deadline_days=deadline_days,
        memory_gb_per_gpu=62.5,
        breakdown=Breakdown(compute_s=compute, tp_comm_s=0.4 * exposed, pp_comm_s=0.1 * exposed,
                            dp_comm_s=0.5 * exposed, ep_comm_s=0.0, bubble_s=bubble, exposed_comm_s=exposed),
        software=SoftwareUsed(preset="megatron-core", attention="flash", sequence_parallel=True,
                              tp_comm_overlap=False, dp_overlap=True),
        recompute="selective",
    )


def _line(category: str, sku: str, description: str, role: str, quantity: float, price: float, watts: float,
          source: str) -> bom.BomLine:
    return bom.BomLine(category, sku, description, role, quantity, price, watts, source)


def make_bom(nodes: int, fabric: str = "infiniband") -> tuple[bom.BomLine, ...]:
    """BOM of a two-tier, non-blocking fabric of 64-port 400G switches (32 down, 32 up per leaf).

    Leaves = NIC ports / 32, spines = leaf uplinks / 64; an SN5600 runs its 64x 800G ports as
    128x 400G, so it serves twice the ports. Every switch OSFP cage and every DGX cage (4 per node)
    takes a twin-port 800G transceiver; one 400G fibre per link.
    """
    ports = nodes * 8
    if fabric == "infiniband":
        sku, desc, down = "nvidia-qm9700", "NVIDIA Quantum-2 QM9700 64x NDR 400G", 32
        price, watts = QM9700_USD, QM9700_W
        src = "H100 Freakonomics spreadsheet (Aug 2024) street price; power estimated"
    else:
        sku, desc, down = "nvidia-sn5600", "NVIDIA Spectrum-4 SN5600 64x 800GbE", 64
        price, watts = SN5600_USD, SN5600_W
        src = "estimate (no published price or power)"
    leaves = ports // down
    spines = leaves // 2  # leaf uplinks (leaves x down) over the 2 x down ports of a spine
    # OSFP cages per switch: QM9700 has 32 twin-port 800G cages, SN5600 64 single 800G cages.
    switch_cages = (leaves + spines) * (32 if fabric == "infiniband" else 64)
    server_racks = -(-nodes // SERVERS_PER_RACK)
    network_racks = -(-(leaves + spines) // bom.SWITCHES_PER_NETWORK_RACK)
    osfp_src = "infra-economics.com price range; 15 W per NVIDIA MMA4Z00-NS documentation"
    return (
        _line("server", "dgx-h100", "NVIDIA DGX H100 (8x H100 SXM, 8x ConnectX-7 400G)", "compute", nodes,
              DGX_H100_USD, DGX_H100_W, "H100 Freakonomics spreadsheet (Aug 2024); DGX H100 power guide"),
        _line("switch", sku, desc, "leaf", leaves, price, watts, src),
        _line("switch", sku, desc, "spine", spines, price, watts, src),
        _line("transceiver", "osfp-800g-2xsr4", "800G twin-port OSFP 2x400G multimode (SR8)", "node", nodes * 4,
              OSFP_800G_USD, OSFP_800G_W, osfp_src),
        _line("transceiver", "osfp-800g-2xsr4", "800G twin-port OSFP 2x400G multimode (SR8)", "switch",
              switch_cages, OSFP_800G_USD, OSFP_800G_W, osfp_src),
        _line("cable", "mpo-fiber-400g", "400G MPO multimode fibre", "leaf-node", ports, FIBER_400G_USD, 0.0,
              "estimate; part 980-9I570-00N030 per DGX SuperPOD H100 RA"),
        _line("cable", "mpo-fiber-400g", "400G MPO multimode fibre", "spine-leaf", leaves * down, FIBER_400G_USD, 0.0,
              "estimate; part 980-9I570-00N030 per DGX SuperPOD H100 RA"),
        _line("rack", "rack-42u", "42U rack with PDUs", "compute", server_racks, RACK_USD, 0.0, RACK_SOURCE),
        _line("rack", "rack-42u", "42U rack with PDUs", "network", network_racks, RACK_USD, 0.0, RACK_SOURCE),
    )


def _costs(lines: tuple[bom.BomLine, ...]) -> CostBreakdown:
    capex = bom.total_capex(lines)
    power = bom.total_power_w(lines) / 1e3 * PUE * HORIZON_DAYS * 24 * ELECTRICITY_USD_PER_KWH
    by_category: dict[str, float] = {}
    for line in lines:
        by_category[line.category] = by_category.get(line.category, 0.0) + line.total_usd
    return CostBreakdown(capex_usd=capex, opex_usd=power, cloud_usd=0.0, total_usd=capex + power,
                         capex_by_category=MappingProxyType(by_category), installation_usd=0.0,
                         power_usd=power, maintenance_usd=0.0)


def make_system_design(nodes: int = 128, fabric: str = "infiniband", **overrides: Any) -> Design:
    """A consistent on-prem DGX H100 design of ``nodes`` nodes on an InfiniBand or RoCE fabric."""
    ib = fabric == "infiniband"
    lines = make_bom(nodes, fabric)
    cost = _costs(lines)
    workload = make_workload(nodes * 8, mfu=MFU_IB if ib else MFU_ROCE, utilization=0.86 if ib else 0.82)
    it_power_w = bom.total_power_w(lines)
    ib_total = _costs(make_bom(128, "infiniband")).total_usd
    roce_total = _costs(make_bom(144, "roce")).total_usd
    cloud_total = 128 * P5_USD_PER_H * HORIZON_DAYS * 24
    chosen = cost.total_usd
    alternatives = (
        Alternative("fabric=infiniband", "on_prem", "infiniband", "rail_optimized", "dgx-h100", 128, ib_total,
                    ib_total - chosen, True, "chosen" if ib else "costs more"),
        Alternative("fabric=roce", "on_prem", "roce", "fat_tree", "dgx-h100", 144, roce_total, roce_total - chosen,
                    True, "utilization 0.78 < 0.80 at 128 nodes; the 144 nodes that reach it cost more"
                    if ib else "chosen"),
        Alternative("fabric=ethernet", "on_prem", "ethernet", "fat_tree", "dgx-h100", 128, None, None, False,
                    "utilization 0.52 < 0.80 at every size up to max_nodes"),
        Alternative("deployment=cloud", "cloud", "efa", "cloud", "aws-p5.48xlarge", 128, cloud_total,
                    cloud_total - chosen, True, "128 instances rented over the whole horizon cost more"),
    )
    constraints = (
        ConstraintStatus("budget.total", BUDGET_TOTAL_USD, chosen, False, BUDGET_TOTAL_USD - chosen, "USD"),
        ConstraintStatus("deadline[llama3-70b]", DEADLINE_DAYS, workload.time_to_train_days, True,
                         DEADLINE_DAYS - workload.time_to_train_days, "days"),
        ConstraintStatus("max_power", MAX_POWER_W, it_power_w * PUE, False, MAX_POWER_W - it_power_w * PUE, "W"),
        ConstraintStatus("min_utilization[llama3-70b]", MIN_UTILIZATION, workload.utilization, False,
                         workload.utilization - MIN_UTILIZATION, "fraction"),
    )
    leaves = next(l.quantity for l in lines if l.role == "leaf")
    design = Design(
        tool_version="0.1.0",
        spec_name="llama3-70b-pretrain",
        spec_digest=hashlib.sha256(b"llama3-70b-pretrain spec").hexdigest(),
        catalog_digest=hashlib.sha256(b"built-in catalogs").hexdigest(),
        catalog_dates=MappingProxyType({"servers.yaml": "2024-08", "switches.yaml": "2025"}),
        objective="min_total_cost",
        horizon_days=HORIZON_DAYS,
        system=SystemChoice(
            deployment="on_prem", server="dgx-h100", gpu="h100-sxm", nodes=nodes, gpus=nodes * 8, fabric=fabric,
            topology="rail_optimized" if ib else "fat_tree", oversubscription=1.0,
            switch=lines[1].sku, tiers=2, racks=int(sum(l.quantity for l in lines if l.category == "rack")),
            power_kw=it_power_w / 1e3),
        cost=cost,
        workloads=(workload,),
        bom=lines,
        alternatives=alternatives,
        constraints=constraints,
        solver=SolverInfo(name="highs", status="optimal", gap=0.0, candidates=96, variables=412, constraints=37),
        warnings=(f"unit power of {lines[1].sku} is an estimate (no datasheet figure); {int(leaves)} leaves",),
    )
    return dataclasses.replace(design, **overrides) if overrides else design


@pytest.fixture
def make_design() -> Callable[..., Design]:
    """Factory: ``make_design(**overrides)`` gives the 128-node InfiniBand design with fields replaced.

    ``make_design(nodes=144, fabric="roce")`` gives the RoCE variant; any other keyword replaces a
    top-level :class:`Design` field.
    """
    return make_system_design


@pytest.fixture
def design() -> Design:
    """The 128-node DGX H100 InfiniBand design."""
    return make_system_design()


@pytest.fixture
def roce_design() -> Design:
    """The 144-node DGX H100 RoCE design (the other side of the diff cases)."""
    return make_system_design(144, "roce")
