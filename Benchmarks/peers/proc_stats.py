"""What the benchmark drivers read from /proc: CPU seconds of process trees and of the whole
machine, and percentiles. Shared by notify_driver.py, storage_floor.py and
dispatch/offer_round.py (import with this folder on sys.path)."""

from __future__ import annotations

import os

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_of_trees(roots: dict[str, int]) -> dict[str, float]:
    parent: dict[int, int] = {}
    ticks: dict[int, float] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                text = f.read().decode(errors="replace")
        except OSError:
            continue
        fields = text[text.rfind(")") + 2:].split()
        pid = int(name)
        parent[pid] = int(fields[1])
        ticks[pid] = sum(float(fields[i]) for i in (11, 12, 13, 14))
    totals: dict[str, float] = {}
    for label, root in roots.items():
        if root not in ticks:
            continue
        total = 0.0
        for pid, value in ticks.items():
            current, depth = pid, 0
            while current > 1 and depth < 64:
                if current == root:
                    total += value
                    break
                current = parent.get(current, 0)
                depth += 1
        totals[label] = total / CLK_TCK
    return totals


def system_busy_seconds() -> float:
    """CPU seconds all cores spent not idle (/proc/stat: everything but idle and iowait)."""
    with open("/proc/stat") as f:
        fields = [float(x) for x in f.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / CLK_TCK


def percentile(sorted_values: list[float], q: float) -> float | None:
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[index]
