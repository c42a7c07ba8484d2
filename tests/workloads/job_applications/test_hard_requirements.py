"""The newer hard requirements: each rejects the posting that breaks it and only that one."""

from __future__ import annotations

import dataclasses

import pytest

from workloads.job_applications.boards import BoardConfig, Posting, parse_greenhouse
from workloads.job_applications.hard_requirements import unclear_authorization
from workloads.job_applications.profile import Profile, ProfileError, parse_profile
from workloads.job_applications.rank import filter_postings

from .fake_boards import POLARIS_PAY, polaris_jobs
from .test_profile import _example

EXPECTED = {
    "Senior Backend Engineer (US)": ("remote: restricted to US",),
    "Backend Engineer, Defence": ("security clearance: required",),
    "Research Engineer": ("degree: phd required",),
    "Backend Engineer, Marketplace": ("language: French required",),
    "Backend Engineer, Campus": ("student: enrollment required",),
    "Backend Engineer, Payments": ("sponsorship: not offered",
                                   "work authorization: United States"),
    "Senior Python Engineer": ("salary: below 70000 EUR",),
}


@pytest.fixture(scope="module")
def polaris() -> list[Posting]:
    """The polaris postings with the pay their one-job view states."""
    found = parse_greenhouse(polaris_jobs("http://t"), BoardConfig("greenhouse", "polaris"))
    return [dataclasses.replace(p, pay_min=POLARIS_PAY[int(p.external_id)][0],
                                pay_max=POLARIS_PAY[int(p.external_id)][1], pay_currency="EUR")
            if int(p.external_id) in POLARIS_PAY else p for p in found]


def _needing_sponsorship(profile: Profile) -> Profile:
    return dataclasses.replace(profile, answers=dataclasses.replace(
        profile.answers, sponsorship_required=True))


def test_each_requirement_rejects_the_posting_that_breaks_it(
    profile: Profile, polaris: list[Posting]
) -> None:
    kept, rejected = filter_postings(polaris, _needing_sponsorship(profile))
    assert {r.posting.title: r.reasons for r in rejected} == EXPECTED
    assert [p.title for p in kept] == ["Senior PostgreSQL Engineer", "Platform Engineer",
                                       "Senior Data Engineer", "Office Manager"]


def test_unset_requirements_reject_nothing_new(profile: Profile, polaris: list[Posting]) -> None:
    data = _example()
    for key in ("authorized_in", "security_clearance", "degree", "languages", "student",
                "remote_regions", "min_salary"):
        del data["requirements"][key]
    data["answers"]["sponsorship_required"] = False
    kept, rejected = filter_postings(polaris, parse_profile(data))
    assert rejected == [] and len(kept) == len(polaris)


def test_a_satisfied_requirement_keeps_the_posting(profile: Profile,
                                                   polaris: list[Posting]) -> None:
    req = profile.requirements
    widened = dataclasses.replace(profile, requirements=dataclasses.replace(
        req, remote_regions=("US", "Europe"), security_clearance=True, degree="phd",
        languages=(*req.languages, "French"), student=True, authorized_in=("United States",),
        min_salary=60000))
    kept, rejected = filter_postings(polaris, widened)
    assert rejected == [] and len(kept) == len(polaris)


def test_salary_compares_only_stated_pay_in_the_same_currency(
    profile: Profile, polaris: list[Posting]
) -> None:
    low = next(p for p in polaris if p.title == "Senior Python Engineer")
    for unknown in (dataclasses.replace(low, pay_max=None, pay_currency=""),
                    dataclasses.replace(low, pay_currency="USD")):
        assert filter_postings([unknown], profile)[1] == []


def test_remote_region_aliases_and_soft_language_wishes(
    profile: Profile, polaris: list[Posting]
) -> None:
    base = next(p for p in polaris if p.title == "Platform Engineer")
    eu = dataclasses.replace(base, location="Remote (EU)")
    uk = dataclasses.replace(base, location="Remote", text="Fully remote within the UK.")
    plus = dataclasses.replace(base, text="Fluent Japanese would be a plus.")
    assert filter_postings([eu, plus], profile)[1] == []
    assert filter_postings([uk], profile)[1][0].reasons == ("remote: restricted to UK",)


@pytest.mark.parametrize(("key", "value", "message"), [
    ("degree", "diploma", "requirements.degree: unknown degree 'diploma'"),
    ("min_salary", -5, "requirements.min_salary: expected a whole number above 0"),
    ("salary_currency", "euro", "requirements.salary_currency: expected a 3-letter"),
    ("student", "no", "requirements.student: expected a boolean"),
])
def test_bad_requirement_values_name_the_field(key: str, value: object, message: str) -> None:
    data = _example()
    data["requirements"][key] = value
    with pytest.raises(ProfileError, match=message):
        parse_profile(data)


@pytest.mark.parametrize(("text", "reasons"), [
    ("You must have the right to work in Sweden.", ()),  # an EU country, for an EU citizen
    ("You must be eligible to work in Canada.", ("work authorization: Canada",)),
    ("Visa sponsorship is not available for this role.", ("sponsorship: not offered",)),
    ("We sponsor visas and relocation.", ()),
])
def test_authorization_and_sponsorship_wordings(
    profile: Profile, polaris: list[Posting], text: str, reasons: tuple[str, ...]
) -> None:
    posting = dataclasses.replace(polaris[-1], text=text)
    rejected = filter_postings([posting], _needing_sponsorship(profile))[1]
    assert (rejected[0].reasons if rejected else ()) == reasons


def _requiring(profile: Profile, **changes: object) -> Profile:
    return dataclasses.replace(profile, requirements=dataclasses.replace(
        profile.requirements, **changes))


def _reasons(profile: Profile, posting: Posting, text: str) -> tuple[str, ...]:
    rejected = filter_postings([dataclasses.replace(posting, text=text)], profile)[1]
    return rejected[0].reasons if rejected else ()


@pytest.mark.parametrize(("text", "reason"), [
    ("A Ph.D. in ML or a related field is required. You will train models.", "phd"),
    ("PhD in Computer Science required.", "phd"),
    ("A doctorate in physics is mandatory.", "phd"),
    ("You must hold a Ph.D. (e.g. in statistics), i.e. a research degree.", "phd"),
    ("A bachelor's degree is required.", "bachelor"),
    ("B.S. in Computer Science required.", "bachelor"),
    ("BA in Economics required.", "bachelor"),
    ("A B.A. or BSc is required.", "bachelor"),
    ("A master’s degree in CS is required.", "master"),
    ("M.Sc. in Computer Science required.", "master"),
    ("An MSc or M.S. in Statistics is required.", "master"),
    ("An M.S. or Ph.D. is required.", "master"),  # the lowest level named is enough
])
def test_degree_spellings_are_recognised(profile: Profile, polaris: list[Posting],
                                         text: str, reason: str) -> None:
    without = _requiring(profile, degree="none")
    assert _reasons(without, polaris[-1], text) == (f"degree: {reason} required",)
    assert _reasons(_requiring(profile, degree="phd"), polaris[-1], text) == ()


@pytest.mark.parametrize("text", [
    "MS Office skills are required.",  # not a Master of Science
    "A Ph.D. is preferred but not required.",
    "A Ph.D. or equivalent experience is required.",
    "You must know Scrum. Our Scrum Master runs the ceremonies.",
])
def test_what_is_not_a_degree_requirement_keeps_the_posting(
    profile: Profile, polaris: list[Posting], text: str
) -> None:
    assert _reasons(_requiring(profile, degree="none"), polaris[-1], text) == ()


@pytest.mark.parametrize(("authorized", "text", "reasons"), [
    (("US",), "EU work authorization required; German at B2", ("work authorization: EU",)),
    (("EU",), "EU work authorization required; German at B2", ()),
    (("Germany",), "EU work authorization required.", ("work authorization: EU",)),
    (("EU",), "You must be authorized to work in the EU/EEA.", ()),
    (("EEA",), "Valid EU work permit required.", ()),
    (("EU",), "A valid UK work permit is required.", ("work authorization: UK",)),
    (("United Kingdom",), "You need the right to work in the UK.", ()),
    (("EU",), "U.S. citizens only.", ("work authorization: U.S.",)),
    (("USA",), "Must be a US citizen.", ()),
    (("EU",), "We sponsor US work visas and help with relocation.", ()),
    (("EU",), "You must have the right to work in Sweden.", ()),
    (("Germany",), "You must have the right to work in Sweden.", ("work authorization: Sweden",)),
])
def test_region_wide_work_authorization(
    profile: Profile, polaris: list[Posting], authorized: tuple[str, ...], text: str,
    reasons: tuple[str, ...]
) -> None:
    spoken = _requiring(profile, authorized_in=authorized, languages=("English", "German"))
    assert _reasons(spoken, polaris[-1], text) == reasons


@pytest.mark.parametrize(("languages", "text", "reasons"), [
    (["English", "German B1"], "German at B2 is required.", ("language: German B2 required",)),
    (["English", "German B2"], "German at B2 is required.", ()),
    (["English", "German (C2)"], "Fluent German.", ()),
    (["English", "German: conversational"], "Business fluent German.",
     ("language: German C1 required",)),
    (["English C1", "German"], "Native English speaker wanted.",
     ("language: English native required",)),
    (["English native", "Dutch B1"], "Working proficiency in Dutch and English (C2).",
     ("language: Dutch B2 required",)),
    (["English", "German B1"], "German at C1 would be a plus.", ()),
    (["English"], "Fluent English and German at B2.", ("language: German required",)),
    (["English"], "EU work authorization required; German at B2", ("language: German required",)),
    (["English", "German"], "German at C2 is required.", ()),  # no level: any level
])
def test_language_levels_against_the_profile(
    polaris: list[Posting], languages: list[str], text: str, reasons: tuple[str, ...]
) -> None:
    data = _example()
    data["requirements"]["languages"] = languages
    assert _reasons(parse_profile(data), polaris[-1], text) == reasons


@pytest.mark.parametrize("entry", ["German B7", "German level 3", "Ger3man", "(C1)"])
def test_a_bad_language_entry_names_the_field(entry: str) -> None:
    data = _example()
    data["requirements"]["languages"] = ["English", entry]
    with pytest.raises(ProfileError, match=r"requirements\.languages\[1\]: expected a language"):
        parse_profile(data)


@pytest.mark.parametrize(("authorized", "text", "reasons"), [
    # A country outside the EU, UK and US, in the words postings use for it.
    (("EU",), "Brazilian work authorization is required.", ("work authorization: Brazil",)),
    (("EU", "Brazil"), "Brazilian work authorization is required.", ()),
    (("EU",), "A valid Canadian work permit is required.", ("work authorization: Canada",)),
    (("EU", "Canada"), "A valid Canadian work permit is required.", ()),
    (("EU", "Brazil"), "Must hold Swiss citizenship.", ("work authorization: Switzerland",)),
    # A place only the profile names is recognised as well.
    (("EU",), "Valid Ruritania work permit required.", ()),
    (("EU", "Ruritania"), "Valid Ruritania work permit required.", ()),
    # Every place that applies is listed, not only the first.
    (("EU",), "You must be authorized to work in the United States. Brazilian work permit "
     "required.", ("work authorization: United States", "work authorization: Brazil")),
])
def test_work_authorization_for_any_country(
    profile: Profile, polaris: list[Posting], authorized: tuple[str, ...], text: str,
    reasons: tuple[str, ...]
) -> None:
    assert _reasons(_requiring(profile, authorized_in=authorized), polaris[-1], text) == reasons


@pytest.mark.parametrize(("text", "unclear"), [
    ("Local work authorization is required.", ["Local work authorization is required."]),
    ("You must be authorized to work in the country of hire.",
     ["You must be authorized to work in the country of hire."]),
    ("Brazilian work authorization is required.", []),  # recognised: a reason, not a question
    ("We help with work permits.", []),  # offered, not demanded
    ("Python and Go.", []),
])
def test_an_unrecognised_authorization_line_is_kept_and_named(
    profile: Profile, polaris: list[Posting], text: str, unclear: list[str]
) -> None:
    posting = dataclasses.replace(polaris[-1], text=text)
    assert unclear_authorization(posting, profile.requirements) == unclear
    if unclear:
        assert _reasons(profile, polaris[-1], text) == ()  # kept for the person to judge
    assert unclear_authorization(posting, dataclasses.replace(
        profile.requirements, authorized_in=())) == []  # nothing asked, nothing to check


def test_every_reason_that_applies_is_listed(profile: Profile, polaris: list[Posting]) -> None:
    """The issue's posting: a degree in a requirements list, filtered on other grounds too."""
    text = ("About us\nWe build grids.\nRequirements\n- Bachelor's degree in Computer Science\n"
            "- US work authorization\n- Fluent French")
    posting = dataclasses.replace(polaris[-1], text=text, location="Paris, France")
    assert filter_postings([posting], _requiring(profile, degree="none"))[1][0].reasons == (
        "location: Paris, France not accepted", "work authorization: US",
        "degree: bachelor required", "language: French required")
    # Not listed as required: a mention, a plus, or "a high degree of" is no reason.
    loose = ("About us\nOur founders hold degrees in physics.\nNice to have\n- A degree in CS\n"
             "You will have a high degree of ownership.")
    assert _reasons(_requiring(profile, degree="none"), polaris[-1], loose) == ()
