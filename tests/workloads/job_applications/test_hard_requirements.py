"""The newer hard requirements: each rejects the posting that breaks it and only that one."""

from __future__ import annotations

import dataclasses

import pytest

from workloads.job_applications.boards import BoardConfig, Posting, parse_greenhouse
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
