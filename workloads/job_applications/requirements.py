"""The profile's hard requirements: which postings the candidate never wants to see."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workloads.job_applications._reader import Node, ProfileError
from workloads.job_applications.language_levels import parse_language

__all__ = ["DEGREE_LEVELS", "SENIORITY_LEVELS", "Requirements", "parse_requirements"]

# Lowest to highest; requirements.degree names the highest one the candidate holds.
DEGREE_LEVELS = ("none", "bachelor", "master", "phd")
SENIORITY_LEVELS = ("intern", "junior", "mid", "senior", "lead", "staff", "principal", "director")


@dataclass(frozen=True)
class Requirements:
    accepted_locations: tuple[str, ...]  # empty: any location
    remote_only: bool
    excluded_keywords: tuple[str, ...]
    excluded_companies: tuple[str, ...]
    seniority: tuple[str, ...]  # allowed levels from SENIORITY_LEVELS; empty: any
    # The rest: None or empty means "not checked" (see hard_requirements.py).
    authorized_in: tuple[str, ...] = ()  # countries/regions the candidate may work in
    security_clearance: bool | None = None  # False: reject roles that require one
    degree: str | None = None  # highest degree held, from DEGREE_LEVELS
    languages: tuple[str, ...] = ()  # languages spoken well enough to work in (names)
    # (name, level) for the languages listed with a level ("German B1"); see language_levels
    language_levels: tuple[tuple[str, int], ...] = ()
    student: bool | None = None  # False: reject enrollment-only (working student) roles
    remote_regions: tuple[str, ...] = ()  # where the candidate can work remotely from
    min_salary: int | None = None  # yearly, in salary_currency; checked where pay is stated
    salary_currency: str = "EUR"


def parse_requirements(node: Node) -> Requirements:
    node.check_keys(
        {
            "accepted_locations",
            "remote_only",
            "excluded_keywords",
            "excluded_companies",
            "seniority",
            *_NEW_REQUIREMENTS,
        }
    )
    seniority = tuple(level.lower() for level in node.texts("seniority"))
    for index, level in enumerate(seniority):
        if level not in SENIORITY_LEVELS:
            raise ProfileError(
                f"{node.source}: {node.where('seniority')}[{index}]: unknown level {level!r} "
                f"(known: {', '.join(SENIORITY_LEVELS)})"
            )
    return Requirements(
        accepted_locations=node.texts("accepted_locations"),
        remote_only=node.flag("remote_only", default=False),
        excluded_keywords=node.texts("excluded_keywords"),
        excluded_companies=node.texts("excluded_companies"),
        seniority=seniority,
        **_more_requirements(node),
    )


_NEW_REQUIREMENTS = ("authorized_in", "security_clearance", "degree", "languages", "student",
                     "remote_regions", "min_salary", "salary_currency")


def _optional_flag(node: Node, key: str) -> bool | None:
    return node.flag(key, default=False) if key in node.data else None


def _languages(node: Node) -> list[tuple[str, int | None]]:
    parsed = []
    for index, entry in enumerate(node.texts("languages")):
        try:
            parsed.append(parse_language(entry))
        except ValueError as exc:
            where = f"{node.where('languages')}[{index}]"
            raise ProfileError(f"{node.source}: {where}: {exc}") from None
    return parsed


def _more_requirements(node: Node) -> dict[str, Any]:
    degree = node.optional_text("degree")
    if degree is not None and degree.lower() not in DEGREE_LEVELS:
        node.fail("degree", f"unknown degree {degree!r} (known: {', '.join(DEGREE_LEVELS)})")
    salary = node.data.get("min_salary")
    if salary is not None and (type(salary) is not int or salary <= 0):
        node.fail("min_salary", f"expected a whole number above 0, got {salary!r}")
    currency = node.text("salary_currency", default="EUR").upper()
    if not re.fullmatch(r"[A-Z]{3}", currency):
        node.fail("salary_currency", f"expected a 3-letter currency code, got {currency!r}")
    languages = _languages(node)
    return {
        "authorized_in": node.texts("authorized_in"),
        "security_clearance": _optional_flag(node, "security_clearance"),
        "degree": degree.lower() if degree else None,
        "languages": tuple(name for name, _ in languages),
        "language_levels": tuple((name, lvl) for name, lvl in languages if lvl is not None),
        "student": _optional_flag(node, "student"),
        "remote_regions": node.texts("remote_regions"),
        "min_salary": salary,
        "salary_currency": currency,
    }
