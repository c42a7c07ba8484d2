"""The soak's verdict: exactly once over the whole run, the steady state, the ratios of the
last round's table sizes and claim latency to the steady state's, and their trend."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from bench.tables import MEASURED

WINDOW = 5  # rounds whose median p99 is compared, so that one noisy round does not decide
MILESTONES = 10


def steady_from(rounds: Sequence[dict[str, Any]]) -> int | None:
    """Index of the first round after which the pruner had deleted tasks and a VACUUM had
    run: from then on deleted rows' space is reused, so the tables should stop growing."""
    pruned = vacuumed = False
    for index, r in enumerate(rounds):
        pruned = pruned or r["pruned"] > 0
        vacuumed = vacuumed or r["vacuum_s"] is not None
        if pruned and vacuumed:
            return index
    return None


def _ratio(last: float | None, first: float | None) -> float | None:
    return round(last / first, 3) if last is not None and first else None


def _p99(rounds: Sequence[dict[str, Any]], path: str) -> float | None:
    values = [r["claim"][path]["p99_ms"] for r in rounds]
    return statistics.median(values) if values else None


def ratios(rounds: Sequence[dict[str, Any]], steady: int) -> dict[str, Any]:
    """Last round over the first steady round: sizes, live rows, claim p99 (and the median
    p99 of the last WINDOW rounds over that of the first WINDOW steady ones)."""
    first, last = rounds[steady], rounds[-1]
    out: dict[str, Any] = {f"size_{t}": _ratio(last["bytes"][t], first["bytes"][t])
                           for t in (*MEASURED, "total")}
    out["tasks_rows"] = _ratio(last["tasks_rows"], first["tasks_rows"])
    for path in ("uncapped", "capped"):
        out[f"claim_p99_{path}"] = _ratio(last["claim"][path]["p99_ms"],
                                          first["claim"][path]["p99_ms"])
        out[f"claim_p99_{path}_median_{WINDOW}"] = _ratio(
            _p99(rounds[-WINDOW:], path), _p99(rounds[steady:steady + WINDOW], path))
    return out


def _slope(rounds: Sequence[dict[str, Any]], value: Callable[[dict[str, Any]], float]
           ) -> float | None:
    """Least-squares change of `value` per 100,000 tasks done, over `rounds`."""
    if len(rounds) < 2:
        return None
    done = [r["done"] for r in rounds]
    return statistics.linear_regression(done, [value(r) for r in rounds]).slope * 100_000


def trend(rounds: Sequence[dict[str, Any]], steady: int) -> dict[str, Any]:
    """Growth per 100,000 tasks in the steady state, beside the first round's (before any
    prune or VACUUM: what the tables grow by without retention), and the peak of the
    tables' sawtooth in the second half of the steady rounds over the first half's."""
    rest, first = rounds[steady:], rounds[0]
    half = len(rest) // 2
    total = [r["bytes"]["total"] for r in rest]
    steady_mb = _slope(rest, lambda r: r["bytes"]["total"] / 1e6)
    return {"total_mb_per_100k_tasks_steady": _round(steady_mb),
            "total_mb_per_100k_tasks_unpruned": round(
                first["bytes"]["total"] / 1e6 / first["done"] * 100_000, 1),
            "size_total_peak_second_half_over_first": _ratio(
                max(total[half:]), max(total[:half], default=None)),
            **{f"claim_p50_ms_per_100k_tasks_{p}": _round(_slope(rest, _p50(p)), 3)
               for p in ("uncapped", "capped")}}


def _p50(path: str) -> Callable[[dict[str, Any]], float]:
    return lambda r: float(r["claim"][path]["p50_ms"])


def _round(value: float | None, digits: int = 1) -> float | None:
    return round(value, digits) if value is not None else None


def milestone(r: dict[str, Any]) -> dict[str, Any]:
    """A round in one line: what a table of the run shows."""
    return {"round": r["round"], "done": r["done"], "total_mb": round(r["bytes"]["total"] / 1e6, 1),
            **{f"{t}_mb": round(r["bytes"][t] / 1e6, 1) for t in MEASURED},
            "tasks_rows": r["tasks_rows"],
            **{f"claim_{p}_p50_p99_ms": [r["claim"][p]["p50_ms"], r["claim"][p]["p99_ms"]]
               for p in ("uncapped", "capped")}}


def milestones(rounds: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """About MILESTONES rounds spread over the run, first and last included."""
    step = max(1, len(rounds) // MILESTONES)
    picked = sorted({*range(0, len(rounds), step), len(rounds) - 1})
    return [milestone(rounds[i]) for i in picked]


def summary(rounds: Sequence[dict[str, Any]], tasks: int) -> dict[str, Any]:
    """Exactly once overall, what the upkeep did, the steady state and the ratios."""
    completed = sum(r["completed"] for r in rounds)
    steady = steady_from(rounds)
    return {"exactly_once": completed == tasks and all(r["exactly_once"] for r in rounds),
            "tasks": tasks, "completed": completed,
            "pruned": sum(r["pruned"] for r in rounds),
            "vacuums": sum(r["vacuum_s"] is not None for r in rounds),
            "steady_from_round": rounds[steady]["round"] if steady is not None else None,
            "ratios": ratios(rounds, steady) if steady is not None else None,
            "trend": trend(rounds, steady) if steady is not None else None,
            "milestones": milestones(rounds)}
