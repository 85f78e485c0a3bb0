"""The integer program that chooses, sizes and prices the cluster, written out and built as a PuLP model.

With :mod:`designer.optimize.milp`, which solves it, the only modules importing PuLP.

Formulation (numbers match the ``# (k)`` comments in the code)
----------------------------------------------------------------
Sets: workloads W; on-prem candidate systems C (server x fabric x topology x switch x ratio);
cloud candidates K (instance types); options O(w, s) = the GPU counts at which workload w meets
its utilization target and deadline on system s (evaluated beforehand by the performance model).

Parameters per option o: GPUs g_o, time to train T_o. Per system: GPUs per node G_s, linear unit
costs and powers (:class:`~designer.optimize.problem.UnitCosts`), fabric shape (radix k, leaf
down/up ports d/u, rails R, scalable-unit size, admissible spine counts). Economics: horizon H,
PUE, electricity price e, installation share a, yearly maintenance share m.

Variables: y_c in {0,1} build system c; n_c in Z+ its nodes; t1_c, t2_c, t3_c in {0,1} its number
of switch tiers; L_c, S_c, X_c in Z+ leaf, spine, core switches; LS_c, SX_c in Z+ leaf-spine and
spine-core links; b_{c,s} in {0,1} the two-tier spine count s; U_c in Z+ scalable units; Q_c in
Z+ racks; x_{w,s,o} in {0,1} run workload w on system s with option o.

(1) at most one on-prem system:              sum_c y_c <= 1
(2) every workload runs exactly once:        sum_{s,o} x_{w,s,o} = 1
(3) only on a built system:                  x_{w,c,o} <= y_c
(4) the cluster holds each workload:         G_c n_c >= sum_o g_o x_{w,c,o}
(5) GPU-time by deadline (EDF feasibility of malleable jobs): for every deadline D,
    sum_{w: D_w <= D} sum_o g_o T_o x_{w,c,o} <= G_c D n_c
(6) size limits:                             n_c <= N_c^max y_c, and tiers sum to y_c
(7) ports: leaves hold every NIC port        d L_c >= R n_c   (rail-optimized: L_c = R U_c, d U_c >= n_c)
(8) two tiers: leaf uplinks spread evenly    E_c = R_su (u (U_c - 1) + W_c) <= k sum_s s b_{c,s},  S_c >= sum_s s b_{c,s};
     the last SU's leaves take W_c = sum_s s q_{c,s} uplinks (q_{c,s} <= (u/s) b_{c,s}) with
     r W_c >= their NICs (n_c - su (U_c - 1)) D / su: a partial SU needs fewer
(9) three tiers: spines k/2 down, cores k:   (k/2) S_c >= u L_c,  k X_c >= (k/2) S_c
(10) links:                                  LS_c >= fabrics E_c (two tiers), >= u L_c (three), SX_c >= (k/2) S_c (three)
(11) racks:                                  Q_c >= n_c / per_rack + (L+S+X) ru / rack_units
(12) budget, power, racks and node limits on the sums below.
(13) ownership (designer.optimize.ownership): bought units B >= count - owned; file-system units
     A_c >= y_c and >= each need (baseline bandwidth per node, each job's checkpoint writes, the
     workloads' capacity) over one unit's figure.
(14) a schedule of fixed sizes (designer.optimize.rigid): n_c >= N_c^sched y_c, where packing the
     chosen sizes needed N_c^sched nodes although (5) admitted fewer.
(15) an on-prem assignment A of system c whose fixed sizes pack only on N_A nodes or more
     (designer.optimize.rigid): z_A in {0,1}, sum_{a in A} x_a <= |A| - 1 + z_A, n_c >= N_A z_A;
     z_A = 0 (a plain no-good) when no allowed size packs A.
(16) energetic reasoning (designer.optimize.rigid): for an interval [t1, t2], a job of time T_o due
     by D_w runs inside it at least e_o = min overlap of its earliest and latest placements, so
     sum_{w,o} g_o e_o x_{w,c,o} <= G_c (t2 - t1) n_c. (5) is its case [0, D]; the intervals
     are added where a chosen assignment's jobs overfill one.
(17)-(20) the storage fabric, in-band and out-of-band networks (designer.optimize.networks): integer
     switch, link and optic counts at or above the closed forms of designer.topology.networks in
     n_c, the file-system units A_c (integer) and the compute switches L+S+X; their parts are
     in Capex and Opex like the fabric's.

Capex_c = per unit type, price x bought x (1 + a + spares)  [+ an owned build's share of space]
Opex_c  = support x years x price x units - residual x price x bought + space per rated W x H
          + e PUE H (idle draw x n + network and storage rating) + e PUE sum_o (busy - idle) u_o node-s_o x
          [+ licences per GPU x G n H]
Cloud   = sum_{w,k,o} billed_k(g_o/G_k, T_o) x_{w,k,o}  (on demand per instance-second, reserved per
          whole term, capacity blocks per whole block: designer.optimize.cloud)
Objective min_total_cost: Capex + Opex + Cloud - Credit. min_time: first the longest time to
train, then cost - Credit. min_cost_per_token: on-prem systems charged per GPU-second used at
their cost rate, less the Credit on that charge, then the cheapest system at it (cost - Credit).
Credit (soft preferences, designer.optimize.preferences): per matching system c with dollar
weight D_c and cost share f_c, f_c (Capex_c + Opex_c) on-prem, f_c billed x in the cloud, and
D_c / |W| per workload it runs; never part of the cost, the budget or any limit.

Ties are broken deterministically: HiGHS runs single-threaded with a fixed seed, and a tiny cost
proportional to each system's rank in the sorted candidate list prefers the earlier key.
"""

from __future__ import annotations

__all__ = ["Builder", "SCALE_USD", "TIE_USD", "var_name"]

import pulp

from designer.errors import InfeasibleError
from designer.optimize import networks as network_costs
from designer.optimize import ownership
from designer.optimize.problem import FabricShape, OnPremSystem, Option, Problem, min_overlap_s

SCALE_USD = 1e6  # the objective is in millions of dollars: keeps coefficients near 1
# Ties between designs of equal cost (two topologies that build the same single switch) go to the
# candidate earlier in sorted key order: each rank step costs $1, far below any real price
# difference yet above the solver's optimality tolerance (REL_GAP of a $1M design is $0.001).
TIE_USD = 1.0


def var_name(text: str) -> str:
    """``text`` as part of a PuLP variable or constraint name (letters, digits and ``_``)."""
    return "".join(ch if ch.isalnum() else "_" for ch in text)


class Builder:
    """The PuLP model of one :class:`~designer.optimize.problem.Problem`: variables, the numbered
    constraints of the module docstring, and the cost, power and rack totals."""

    def __init__(self, problem: Problem):
        self.p = problem
        self.m = pulp.LpProblem("designer", pulp.LpMinimize)
        self.x: dict[tuple[str, str, int], pulp.LpVariable] = {}
        self.sys: dict[str, dict[str, pulp.LpAffineExpression | pulp.LpVariable]] = {}
        self.capex: dict[str, pulp.LpAffineExpression] = {}
        self.opex: dict[str, pulp.LpAffineExpression] = {}
        self.power: dict[str, pulp.LpAffineExpression] = {}
        self.racks: dict[str, pulp.LpAffineExpression] = {}
        self.cloud_terms: list[pulp.LpAffineExpression] = []
        self.cloud_cost_of: dict[tuple[str, str, int], float] = {}
        self._tiers: dict[str, tuple] = {}
        self.option_of: dict[tuple[str, str, int], Option] = {}
        # (role, NetworkSize field) -> expression, per on-prem system with networks (17)-(20)
        self.network_counts: dict[str, dict[tuple[str, str], pulp.LpAffineExpression]] = {}

    # ---------------------------------------------------------------- variables

    def build(self) -> None:
        p = self.p
        for rank, system in enumerate(p.onprem):
            self._onprem(system, rank if p.ranks is None else p.ranks[system.key])
        for system in p.cloud:
            gpn = system.candidate.gpus_per_node
            for w in p.workloads:
                for o in p.options.get((w, system.key), ()):
                    cost = system.cost_usd(o.gpus / gpn, o.time_s)
                    if cost == float("inf"):
                        continue  # beyond what the offer sells (instances, block length)
                    var = self._xvar(w, system.key, o)
                    self.cloud_cost_of[(w, system.key, o.index)] = cost
                    self.cloud_terms.append(cost * var)
        # (1)
        if p.onprem:
            self.m += pulp.lpSum(s["y"] for s in self.sys.values()) <= 1, "one_onprem_system"
        if p.onprem_required:
            if not p.onprem:
                raise InfeasibleError("the design must build an on-prem system and none is among the candidates")
            # A ranking of designs asks for the best that builds one, the cloud alone being ranked already.
            self.m += pulp.lpSum(s["y"] for s in self.sys.values()) >= 1, "onprem_system_built"
        # (2)
        for w in p.workloads:
            terms = [v for (ww, _, _), v in self.x.items() if ww == w]
            if not terms:
                raise InfeasibleError(f"workload '{w}' has no way to run on any candidate system")
            self.m += pulp.lpSum(terms) == 1, f"run_once__{var_name(w)}"
        # (15) an assignment packs only on at least N_A nodes (N_A = 0: on none allowed)
        for i, (combo, need) in enumerate(p.exclude):
            if not all(k in self.x for k in combo):
                continue
            chosen = pulp.lpSum(self.x[k] for k in combo)
            if need > 0 and combo[0][1] in self.sys:
                z = self.m.add_variable(f"packs_{i}", cat="Binary")
                self.m += chosen <= len(combo) - 1 + z, f"no_schedule__{i}"
                self.m += self.sys[combo[0][1]]["n"] >= need * z, f"schedule_size__{i}"
            else:
                self.m += chosen <= len(combo) - 1, f"no_schedule__{i}"

    def _xvar(self, w: str, key: str, o: Option) -> pulp.LpVariable:
        var = self.m.add_variable(f"x__{var_name(w)}__{var_name(key)}__{o.index}", cat="Binary")
        self.x[(w, key, o.index)] = var
        self.option_of[(w, key, o.index)] = o
        return var

    def _onprem(self, system: OnPremSystem, rank: int) -> None:
        p, m = self.p, self.m
        sh, uc = system.shape, system.costs
        c = var_name(system.key)
        gpn = system.candidate.gpus_per_node
        nmax = sh.max_nodes
        if p.limits.nodes is not None:
            nmax = min(nmax, p.limits.nodes)
        y = self.m.add_variable(f"y__{c}", cat="Binary")
        n = self.m.add_variable(f"n__{c}", lowBound=0, upBound=nmax, cat="Integer")
        L = self.m.add_variable(f"leaf__{c}", lowBound=0, cat="Integer")
        S = self.m.add_variable(f"spine__{c}", lowBound=0, cat="Integer")
        X = self.m.add_variable(f"core__{c}", lowBound=0, cat="Integer")
        LS = self.m.add_variable(f"ls_links__{c}", lowBound=0, cat="Integer")
        SX = self.m.add_variable(f"sx_links__{c}", lowBound=0, cat="Integer")
        Q = self.m.add_variable(f"racks__{c}", lowBound=0, cat="Integer")
        k, R = sh.radix, sh.rails
        # (6)
        m += n <= nmax * y, f"size__{c}"
        m += n >= y, f"nonempty__{c}"
        if p.fixed_nodes is not None:
            m += n == p.fixed_nodes * y, f"pinned_nodes__{c}"
        if system.key in p.min_nodes:  # (14) a schedule of fixed sizes needs this many
            m += n >= p.min_nodes[system.key] * y, f"schedule_nodes__{c}"
        topo = sh.topology
        t1 = t2 = t3 = None
        if topo == "single_switch":
            # one switch holds every NIC port
            m += sh.node_ports * n <= k * y, f"ports_single__{c}"
            m += L == y, f"one_switch__{c}"
            for var, label in ((S, "spine"), (X, "core"), (LS, "ls"), (SX, "sx")):
                m += var == 0, f"no_{label}__{c}"
        else:
            self._clos(c, sh, nmax, y, n, L, S, X, LS, SX)
            t1, t2, t3 = self._tiers[c]
        # (11) racks: servers by rack power/space, switches and the fabric manager's appliances in
        # network racks
        m += (Q * uc.servers_per_rack * uc.rack_units >= n * uc.rack_units
              + ((L + S + X) * uc.switch_ru + uc.fixed_ru * y) * uc.servers_per_rack), f"racks__{c}"
        self.sys[system.key] = {"y": y, "n": n, "leaf": L, "spine": S, "core": X, "leaf_spine_links": LS,
                                "spine_core_links": SX, "racks": Q, "t1": t1, "t2": t2, "t3": t3, "rank": rank}
        self.racks[system.key] = Q
        # (3), (4), (5)
        deadlines = sorted({p.deadlines_s[w] for w in p.workloads})
        usage: dict[str, list] = {}
        for w in p.workloads:
            opts = p.options.get((w, system.key), ())
            if not opts:
                continue
            xs = [(o, self._xvar(w, system.key, o)) for o in opts]
            for o, var in xs:
                m += var <= y, f"built__{var_name(w)}__{c}__{o.index}"
            m += gpn * n >= pulp.lpSum(o.held_gpus * var for o, var in xs), f"holds__{var_name(w)}__{c}"
            usage[w] = xs
        for i, deadline in enumerate(deadlines):
            # In node-equivalents (GPU-seconds over G_c D), so coefficients stay near the node count.
            scale = 1.0 / (gpn * deadline)
            terms = [o.gpu_seconds * scale * var for w, xs in usage.items() if p.deadlines_s[w] <= deadline for o, var in xs]
            if terms:
                m += pulp.lpSum(terms) <= n, f"gpu_time__{c}__{i}"
        # (16) energetic reasoning on the intervals the schedule found overfull
        for i, (t1, t2) in enumerate(p.energy):
            scale = 1.0 / (gpn * (t2 - t1))
            terms = [o.held_gpus * e * scale * var for w, xs in usage.items() for o, var in xs
                     if (e := min_overlap_s(o.time_s, p.deadlines_s[w], t1, t2)) > 0]
            if terms:
                m += pulp.lpSum(terms) <= n, f"energy__{c}__{i}"
        # (13) cost of ownership: equipment, space, power at the expected draw, support, residual;
        # (17)-(20) the storage and management networks, sized on the file system's whole units
        net = None
        if uc.networks is not None:
            plan = uc.networks
            most_units = 0
            if uc.storage is not None:
                most_units = network_costs.whole_units(ownership.storage_units_needed(
                    uc, nmax, {w: nmax for w in p.workloads}))

            def net(units):
                counts = network_costs.add_network_counts(
                    m, c, plan, y=y, nodes=n, storage_units=units, compute_switches=L + S + X, max_nodes=nmax,
                    max_units=most_units, max_compute_switches=3 * sh.node_ports * nmax)
                self.network_counts[system.key] = counts
                return network_costs.network_terms(plan, p.economics, counts)
        costs, busy = ownership.add_onprem_costs(m, c, system, p.economics, y=y, nodes=n, switches=L + S + X,
                                                  ls_links=LS, sx_links=SX, racks=Q, usage=usage, networks=net)
        self.capex[system.key] = costs.capex_total
        self.opex[system.key] = costs.opex_total + busy
        self.power[system.key] = costs.rated_w

    def _clos(self, c: str, sh: FabricShape, nmax: int, y, n, L, S, X, LS, SX) -> None:
        """Constraints (7)-(10) for fat tree, rail-optimized and rail-only fabrics.

        Per fabric (the rails for rail-only, else one): U scalable units hold the nodes; a fabric
        has ``per_su`` leaves per unit (R for rail-optimized, else 1). One tier: a single switch
        per fabric. Two tiers: spines from the divisors of u (8). Three tiers: pods of P leaves
        with S_pod spines each; cores per plane c from the divisors of a full pod's spine links.
        """
        m = self.m
        k, u, R = sh.radix, sh.leaf_up, sh.rails
        fabrics = R if sh.topology == "rail_only" else 1
        per_su = R if sh.topology == "rail_optimized" else 1
        cap1, cap2, cap3 = sh.max_nodes_1tier, sh.max_nodes_2tier, sh.max_nodes
        # Big-M: the most leaves one fabric can have at the largest allowed size. Taken from the
        # size limit rather than the topology's reach (millions of nodes in three tiers), so the
        # program stays well scaled and its relaxation tight.
        big = per_su * -(-max(nmax, 1) // max(sh.su_nodes, 1)) + 1
        t1 = self.m.add_variable(f"t1__{c}", cat="Binary")
        t2 = self.m.add_variable(f"t2__{c}", cat="Binary")
        t3 = self.m.add_variable(f"t3__{c}", cat="Binary")
        self._tiers[c] = (t1, t2, t3)
        m += t1 + t2 + t3 == y, f"tiers__{c}"
        m += n <= cap1 * t1 + cap2 * t2 + cap3 * t3, f"tier_size__{c}"
        U = self.m.add_variable(f"units__{c}", lowBound=0, cat="Integer")
        Lf = self.m.add_variable(f"leaf_per_fabric__{c}", lowBound=0, cat="Integer")
        Sf = self.m.add_variable(f"spine_per_fabric__{c}", lowBound=0, cat="Integer")
        Xf = self.m.add_variable(f"core_per_fabric__{c}", lowBound=0, cat="Integer")
        m += sh.su_nodes * U >= n, f"units_hold__{c}"  # (7)
        m += Lf >= per_su * U - big * t1, f"leaves__{c}"
        m += Lf >= y, f"one_leaf__{c}"
        m += Lf <= 1 + big * (1 - t1), f"single_tier__{c}"
        m += L == fabrics * Lf, f"leaf_total__{c}"
        m += S == fabrics * Sf, f"spine_total__{c}"
        m += X == fabrics * Xf, f"core_total__{c}"
        # (8) two tiers: every leaf spreads its uplinks evenly over the spines; the last SU's
        # leaves take W uplinks, a multiple of the spines s with r W >= their NICs (a partial SU
        # needs fewer), the full SUs' u each: E uplinks per fabric, E <= k s.
        b = {s: self.m.add_variable(f"spines_{s}__{c}", cat="Binary") for s in sh.spine_choices}
        q = {s: self.m.add_variable(f"last_up_{s}__{c}", lowBound=0, cat="Integer") for s in sh.spine_choices}
        m += pulp.lpSum(b.values()) == t2, f"spine_choice__{c}"
        for s in sh.spine_choices:
            m += q[s] <= (u // s) * b[s], f"last_up_choice_{s}__{c}"
        W = pulp.lpSum(s * v for s, v in q.items())
        nics = (n - sh.su_nodes * (U - 1)) * (sh.leaf_down / sh.su_nodes)  # NICs on a last-SU leaf
        m += sh.oversubscription * W >= nics - sh.leaf_down * (1 - t2), f"last_up__{c}"
        E = per_su * u * (U - 1) + per_su * W
        m += E <= k * pulp.lpSum(s * v for s, v in b.items()) + big * u * (1 - t2), f"spread__{c}"
        m += Sf >= pulp.lpSum(s * v for s, v in b.items()), f"spines2__{c}"
        # (9) three tiers: pods of P leaves, S_pod spines per pod, c cores per spine plane
        pod = _pod_shape(sh, per_su)
        if pod is not None:
            leaves_per_pod, spines_per_pod, full = pod
            Pd = self.m.add_variable(f"pods__{c}", lowBound=0, cat="Integer")
            m += leaves_per_pod * Pd >= Lf - big * (1 - t3), f"pods__{c}"
            m += Sf >= spines_per_pod * Pd - big * (1 - t3), f"spines3__{c}"
            bc = {d: self.m.add_variable(f"cores_{d}__{c}", cat="Binary") for d in _divisors(full)}
            m += pulp.lpSum(bc.values()) == t3, f"core_choice__{c}"
            m += Pd * full <= k * pulp.lpSum(d * v for d, v in bc.items()) + big * full * (1 - t3), f"core_ports__{c}"
            m += Xf >= spines_per_pod * pulp.lpSum(d * v for d, v in bc.items()), f"cores__{c}"
        else:
            m += t3 == 0, f"no_three_tiers__{c}"
        m += Xf <= big * k * t3, f"core_only3__{c}"
        # (10) links: two tiers as (8) counts them, three tiers u per leaf
        m += LS >= fabrics * E - fabrics * big * u * (1 - t2), f"ls_links2__{c}"
        m += LS >= u * L - fabrics * big * u * (1 - t3), f"ls_links__{c}"
        m += SX >= u * L - fabrics * big * u * (1 - t3), f"sx_links__{c}"

    # ---------------------------------------------------------------- economics

    def totals(self) -> tuple[pulp.LpAffineExpression, pulp.LpAffineExpression, pulp.LpAffineExpression,
                              pulp.LpAffineExpression]:
        capex = pulp.lpSum(self.capex.values())
        opex = pulp.lpSum(self.opex.values())
        cloud = pulp.lpSum(self.cloud_terms)
        power = pulp.lpSum(self.power.values())
        return capex, opex, cloud, power

    def constrain_limits(self) -> None:
        lim = self.p.limits
        capex, opex, cloud, power = self.totals()
        # (12)
        if lim.capex_usd is not None:
            self.m += capex / SCALE_USD <= lim.capex_usd / SCALE_USD, "budget_capex"
        if lim.total_usd is not None:
            self.m += (capex + opex + cloud) / SCALE_USD <= lim.total_usd / SCALE_USD, "budget_total"
        if lim.power_w is not None:
            self.m += power / 1e6 <= lim.power_w / 1e6, "max_power"
        if lim.racks is not None:
            self.m += pulp.lpSum(self.racks.values()) <= lim.racks, "max_racks"

    def credit(self) -> pulp.LpAffineExpression:
        """The soft preferences' credit (:mod:`designer.optimize.preferences`): a matching system's
        cost share (capex and opex on-prem, each workload's bill in the cloud) and its dollar
        weights, ``usd / |W|`` per workload run on it. Subtracted from the cost objective only."""
        credits = self.p.credits
        if not credits:
            return pulp.LpAffineExpression()
        per_workload = 1.0 / len(self.p.workloads)
        terms = []
        for key, (_usd, share) in credits.items():
            if share and key in self.capex:
                terms.append(share * (self.capex[key] + self.opex[key]))
        for (w, key, idx), var in self.x.items():
            if key not in credits:
                continue
            usd, share = credits[key]
            coef = usd * per_workload + share * self.cloud_cost_of.get((w, key, idx), 0.0)
            if coef:
                terms.append(coef * var)
        return pulp.lpSum(terms)

    def tie_break(self) -> pulp.LpAffineExpression:
        return pulp.lpSum(TIE_USD * (1 + s["rank"]) * s["y"] for s in self.sys.values())


def _divisors(n: int) -> tuple[int, ...]:
    return tuple(d for d in range(1, n + 1) if n % d == 0)


def _pod_shape(sh: FabricShape, per_su: int) -> tuple[int, int, int] | None:
    """(leaves per pod P, spines per pod S_pod, links of a full pod's spine), or None.

    Mirrors the topology's three-tier rule: a spine keeps half its cages for uplinks, so a pod
    holds at most ``pod_max`` leaf links per spine; S_pod is the smallest divisor of u with
    P u / S_pod <= pod_max (network.md 5.2; :mod:`designer.topology.sizing`).
    """
    p = sh.ports_per_cage
    pod_max = (sh.radix // p // 2) * p
    leaves = (pod_max // per_su) * per_su
    if leaves == 0 or sh.leaf_up == 0 or sh.max_nodes <= sh.max_nodes_2tier:
        return None
    for s in _divisors(sh.leaf_up):
        if leaves * sh.leaf_up // s <= pod_max:
            return leaves, s, leaves * sh.leaf_up // s
    return None
