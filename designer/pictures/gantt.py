"""The schedule of a design as a Gantt chart (PNG or SVG): one bar per workload, and the on-prem GPUs in use.

Each workload is a bar from its ``start_day`` to its ``end_day`` labelled with its GPUs and where it
runs, its deadline a red tick on its row. Below, the on-prem GPUs in use over time as a step line
against the cluster's size (``system.gpus``): it never rises above it in a design's schedule.
"""

from __future__ import annotations

__all__ = ["render_schedule", "usage_steps"]

from designer.design.model import Design
from designer.errors import InputError
from designer.pictures.plot import matplotlib_figure, save_figure

_ON_PREM, _CLOUD = "#0072B2", "#E69F00"  # Okabe-Ito blue and orange: distinct for colour-blind readers


def usage_steps(design: Design) -> list[tuple[float, int]]:
    """(day, on-prem GPUs in use from that day on) at every start and end, ends first at a tie."""
    events = []
    for w in design.workloads:
        if w.deployment == "on_prem" and w.start_day is not None and w.end_day is not None:
            events += [(w.start_day, 1, w.gpus), (w.end_day, 0, -w.gpus)]
    out, used = [(0.0, 0)], 0
    for day, _, delta in sorted(events):
        used += delta
        if out and out[-1][0] == day:
            out[-1] = (day, used)
        else:
            out.append((day, used))
    return out


def render_schedule(design: Design, fmt: str) -> bytes:
    """The design's schedule as ``fmt`` (png or svg) bytes.

    Raises:
        InputError: the design records no schedule (written before schedules were), or matplotlib
            is missing, or ``fmt`` is not png or svg.
    """
    rows = [w for w in design.workloads if w.start_day is not None and w.end_day is not None]
    if len(rows) != len(design.workloads):
        raise InputError("the design file records no schedule (start_day, end_day): solve the spec again "
                         "with this version to draw it")
    onprem = any(w.deployment == "on_prem" for w in rows)
    with matplotlib_figure() as Figure:
        height = 1.2 + 0.32 * len(rows) + (2.0 if onprem else 0.0)
        fig = Figure(figsize=(10.0, height))
        if onprem:
            grid = fig.add_gridspec(2, 1, height_ratios=[0.32 * len(rows) + 0.6, 2.0], hspace=0.35)
            ax, use = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
        else:
            ax, use = fig.add_subplot(), None
        end = max([w.end_day for w in rows] + [w.deadline_days or 0.0 for w in rows] + [1.0])
        for i, w in enumerate(rows):
            color = _ON_PREM if w.deployment == "on_prem" else _CLOUD
            ax.barh(i, w.end_day - w.start_day, left=w.start_day, height=0.6, color=color, edgecolor="none")
            ax.text(w.end_day + end * 0.005, i, f"{w.gpus:,} GPUs", va="center", fontsize=7)
            if w.deadline_days is not None:
                ax.plot([w.deadline_days] * 2, [i - 0.4, i + 0.4], color="#D55E00", linewidth=2)
        ax.set_yticks(range(len(rows)), [w.name for w in rows], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, end * 1.12)
        ax.set_xlabel("day")
        ax.grid(True, axis="x", alpha=0.3)
        s = design.system
        ax.set_title(f"{design.spec_name}: schedule on {s.gpus:,} GPUs ({s.deployment}); blue on-prem, orange "
                     f"cloud, red tick = deadline", fontsize=10, loc="left")
        if use is not None:
            steps = usage_steps(design)
            days = [d for d, _ in steps] + [end * 1.12]
            used = [g for _, g in steps] + [steps[-1][1]]
            use.step(days, used, where="post", color=_ON_PREM, linewidth=1.5, label="on-prem GPUs in use")
            use.axhline(s.gpus, color="black", linestyle="--", linewidth=1.0, label=f"cluster: {s.gpus:,} GPUs")
            use.set_xlim(0, end * 1.12)
            use.set_ylim(0, s.gpus * 1.15)
            use.set_xlabel("day")
            use.set_ylabel("GPUs")
            use.grid(True, alpha=0.3)
            use.legend(loc="upper right", fontsize=8, frameon=False)
        return save_figure(fig, fmt)
