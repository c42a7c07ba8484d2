"""Places named in postings and profiles: regions (EU/EEA, UK, US), their members and aliases."""

from __future__ import annotations

import re

from workloads.job_applications.terms import mentions

__all__ = ["COUNTRIES", "authorized_for", "country_of", "place_names", "region_of",
           "same_place"]

_EU = ("Austria", "Belgium", "Bulgaria", "Croatia", "Cyprus", "Czechia", "Czech Republic",
       "Denmark", "Estonia", "Finland", "France", "Germany", "Greece", "Hungary", "Ireland",
       "Italy", "Latvia", "Lithuania", "Luxembourg", "Malta", "Netherlands", "Poland",
       "Portugal", "Romania", "Slovakia", "Slovenia", "Spain", "Sweden")
# Names of the same place; each side is searched for the other's spellings.
_PLACES = {"us": ("usa", "united states", "u.s."), "uk": ("united kingdom", "great britain"),
           "eu": ("europe", "european union", "emea", *_EU),
           "europe": ("eu", "emea", "european", *_EU)}
# Work-authorization regions: one right to work covers the whole region. EU citizens may work
# across the EEA (and the other way round), so EU and EEA are one region here.
_REGIONS = {
    "eu": ("eu", "eea", "eu/eea", "eea/eu", "european union", "european economic area",
           "europe", "schengen"),
    "uk": ("uk", "united kingdom", "great britain", "britain"),
    "us": ("us", "usa", "united states", "united states of america", "america"),
}
_MEMBERS = {"eu": (*_EU, "Norway", "Iceland", "Liechtenstein"),
            "uk": ("England", "Scotland", "Wales", "Northern Ireland"), "us": ()}


# Countries postings name in a work-authorization line, with the adjectives they use for them
# ("Brazilian work authorization"); a place the profile names is recognised too (place_names).
COUNTRIES: dict[str, tuple[str, ...]] = {
    "Argentina": ("Argentinian", "Argentine"), "Australia": ("Australian",),
    "Austria": ("Austrian",), "Belgium": ("Belgian",), "Brazil": ("Brazilian",),
    "Canada": ("Canadian",), "Chile": ("Chilean",), "China": ("Chinese",),
    "Colombia": ("Colombian",), "Czechia": ("Czech",), "Denmark": ("Danish",),
    "Estonia": ("Estonian",), "Finland": ("Finnish",), "France": ("French",),
    "Germany": ("German",), "Greece": ("Greek",), "Hong Kong": (), "Hungary": ("Hungarian",),
    "Iceland": ("Icelandic",), "India": ("Indian",), "Ireland": ("Irish",),
    "Israel": ("Israeli",), "Italy": ("Italian",), "Japan": ("Japanese",),
    "Luxembourg": (), "Mexico": ("Mexican",), "Netherlands": ("Dutch",),
    "New Zealand": (), "Nigeria": ("Nigerian",), "Norway": ("Norwegian",),
    "Philippines": ("Filipino", "Philippine"), "Poland": ("Polish",),
    "Portugal": ("Portuguese",), "Romania": ("Romanian",), "Singapore": ("Singaporean",),
    "South Africa": ("South African",), "South Korea": ("Korean",), "Spain": ("Spanish",),
    "Sweden": ("Swedish",), "Switzerland": ("Swiss",), "Turkey": ("Turkish",),
    "Ukraine": ("Ukrainian",), "United Arab Emirates": ("UAE", "Emirati"),
    "Vietnam": ("Vietnamese",),
}


def country_of(name: str) -> str:
    """The country an adjective names ("Brazilian" → "Brazil"); other names as they are."""
    bare = name.strip()
    for country, adjectives in COUNTRIES.items():
        if bare.casefold() in {a.casefold() for a in adjectives}:
            return country
    return bare


def place_names(extra: tuple[str, ...] = ()) -> list[str]:
    """Every place name and adjective recognised in a work-authorization line, longest
    first: the regions' spellings, COUNTRIES, and `extra` (the profile's own places)."""
    names = {*(n for ns in _REGIONS.values() for n in ns if len(n) > 3), "EU", "EEA", "UK",
             "U.K.", "US", "U.S.", "USA", *COUNTRIES, *(a for ads in COUNTRIES.values()
                                                          for a in ads), *extra}
    return sorted((n for n in names if n.strip()), key=lambda n: (-len(n), n))


def region_of(name: str) -> str | None:
    """"eu", "uk" or "us" when `name` is a whole region ("EU/EEA", "the U.S."), else None."""
    key = re.sub(r"^the\s+", "", name.casefold().replace(".", "").strip())
    key = re.sub(r"\s+", " ", key)
    return next((region for region, names in _REGIONS.items() if key in names), None)


def authorized_for(place: str, authorized: tuple[str, ...]) -> bool:
    """Whether work authorization in `authorized` covers `place`.

    A region covers its member countries; a country never covers its region ("Germany" is not
    a right to work across the EU)."""
    wanted = region_of(place)
    for have in authorized:
        held = region_of(have)
        if wanted is not None:
            if held == wanted:
                return True
        elif held is not None:
            if any(mentions(member, place) for member in _MEMBERS[held]):
                return True
        elif mentions(have, place) or mentions(place, have):
            return True
    return False


def same_place(place: str, accepted: tuple[str, ...]) -> bool:
    """Whether `place` names one of `accepted` (or the other way round), aliases included."""
    def spellings(name: str) -> tuple[str, ...]:
        return (name, *_PLACES.get(name.casefold().strip(), ()))

    return any(mentions(a, p) or mentions(p, a)
               for want in accepted for a in spellings(want) for p in spellings(place))
