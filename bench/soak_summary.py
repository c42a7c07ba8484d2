"""The soak's verdict: exactly once over the whole run, the steady state, the ratios of the
last round's table sizes and claim latency to the steady state's, and their trend."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from bench.tables import MEASURED

WINDOW = 5  # rounds whose medians are compared, so that one noisy round does not decide
MILESTONES = 10


def steady_from(rounds: Sequence[dict[str, Any]], autovacuum: bool = False) -> int | None:
    """Index of the first round by whose end the pruner had deleted tasks and a VACUUM had
    run after its first deletes: from then on deleted rows' space is reused, so the tables
    should stop growing. The VACUUM is the soak's own or the pruner's (a run past its
    vacuum_after vacuums right after its deletes, in the same round), or with
    `autovacuum`, an autovacuum of `tasks` that ended after the first prune."""
    pruned = next((i for i, r in enumerate(rounds) if r["pruned"] > 0), None)
    if pruned is None:
        return None
    before = _autovacuums(rounds[pruned])
    return next((i for i in range(pruned, len(rounds))
                 if _vacuumed(rounds[i])
                 or (autovacuum and i > pruned and _autovacuums(rounds[i]) > before)), None)


def _vacuumed(r: dict[str, Any]) -> bool:
    """The soak or the pruner ran VACUUM in the round, after its prune."""
    return r["vacuum_s"] is not None or r.get("prune_vacuum_ms") is not None


def _autovacuums(r: dict[str, Any], table: str = "tasks") -> int:
    return int(r["autovacuum"].get(table, {}).get("autovacuum_count") or 0)


def _ratio(last: float | None, first: float | None) -> float | None:
    return round(last / first, 3) if last is not None and first else None


def _median(rounds: Sequence[dict[str, Any]], value: Callable[[dict[str, Any]], float]
            ) -> float | None:
    values = [value(r) for r in rounds]
    return statistics.median(values) if values else None


def _windows(rounds: Sequence[dict[str, Any]], steady: int,
             value: Callable[[dict[str, Any]], float]) -> float | None:
    """The median of the last WINDOW rounds over that of the first WINDOW steady ones."""
    return _ratio(_median(rounds[-WINDOW:], value),
                  _median(rounds[steady:steady + WINDOW], value))


def ratios(rounds: Sequence[dict[str, Any]], steady: int) -> dict[str, Any]:
    """Last round over the first steady round: sizes, live rows, claim p99; and the median
    of the last WINDOW rounds over that of the first WINDOW steady ones, for the total size,
    the live rows and the claim p99 (the tables' size follows the live rows, which the
    retention's clock makes vary from round to round)."""
    first, last = rounds[steady], rounds[-1]
    out: dict[str, Any] = {f"size_{t}": _ratio(last["bytes"][t], first["bytes"][t])
                           for t in (*MEASURED, "total")}
    out[f"size_total_median_{WINDOW}"] = _windows(rounds, steady,
                                                  lambda r: r["bytes"]["total"])
    out["tasks_rows"] = _ratio(last["tasks_rows"], first["tasks_rows"])
    out[f"tasks_rows_median_{WINDOW}"] = _windows(rounds, steady, lambda r: r["tasks_rows"])
    for path in ("uncapped", "capped"):
        out[f"claim_p99_{path}"] = _ratio(last["claim"][path]["p99_ms"],
                                          first["claim"][path]["p99_ms"])
        out[f"claim_p99_{path}_median_{WINDOW}"] = _windows(rounds, steady, _p99(path))
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


def _p99(path: str) -> Callable[[dict[str, Any]], float]:
    return lambda r: float(r["claim"][path]["p99_ms"])


def _round(value: float | None, digits: int = 1) -> float | None:
    return round(value, digits) if value is not None else None


def milestone(r: dict[str, Any]) -> dict[str, Any]:
    """A round in one line: what a table of the run shows."""
    return {"round": r["round"], "done": r["done"], "total_mb": round(r["bytes"]["total"] / 1e6, 1),
            **{f"{t}_mb": round(r["bytes"][t] / 1e6, 1) for t in MEASURED},
            "tasks_rows": r["tasks_rows"], "tasks_autovacuums": _autovacuums(r),
            "tasks_dead_rows": r["autovacuum"].get("tasks", {}).get("n_dead_tup"),
            **{f"claim_{p}_p50_p99_ms": [r["claim"][p]["p50_ms"], r["claim"][p]["p99_ms"]]
               for p in ("uncapped", "capped")}}


def milestones(rounds: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """About MILESTONES rounds spread over the run, first and last included."""
    step = max(1, len(rounds) // MILESTONES)
    picked = sorted({*range(0, len(rounds), step), len(rounds) - 1})
    return [milestone(rounds[i]) for i in picked]


def autovacuum_report(rounds: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Each table's autovacuums over the run and the rounds after which `tasks`'s count
    had gone up."""
    last = rounds[-1]["autovacuum"] if rounds else {}
    counts = [_autovacuums(r) for r in rounds]
    return {"counts": {t: s["autovacuum_count"] for t, s in last.items()},
            "tasks_rounds": [r["round"] for r, n, m in zip(rounds, counts, [0, *counts],
                                                           strict=False) if n > m]}


def summary(rounds: Sequence[dict[str, Any]], tasks: int, autovacuum: bool = False
            ) -> dict[str, Any]:
    """Exactly once overall, what the upkeep (the soak's VACUUMs, the pruner's) and
    autovacuum did, the steady state (see steady_from) and the ratios."""
    completed = sum(r["completed"] for r in rounds)
    steady = steady_from(rounds, autovacuum)
    return {"exactly_once": completed == tasks and all(r["exactly_once"] for r in rounds),
            "tasks": tasks, "completed": completed,
            "pruned": sum(r["pruned"] for r in rounds),
            "vacuums": sum(r["vacuum_s"] is not None for r in rounds),
            "pruner_vacuums": sum(r.get("prune_vacuum_ms") is not None for r in rounds),
            "autovacuums": autovacuum_report(rounds),
            "steady_from_round": rounds[steady]["round"] if steady is not None else None,
            "ratios": ratios(rounds, steady) if steady is not None else None,
            "trend": trend(rounds, steady) if steady is not None else None,
            "milestones": milestones(rounds)}
