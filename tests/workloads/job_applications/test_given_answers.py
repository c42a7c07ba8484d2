"""Only answers the candidate gave: every filled value traces to the profile or a revise note."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser

from workloads.job_applications.applicant import ApplicantValues, FormFiles
from workloads.job_applications.browser import launch_browser
from workloads.job_applications.form_answers import normalize
from workloads.job_applications.forms import fill_form
from workloads.job_applications.profile import Profile

from .fake_form_pages import GREENHOUSE_OK, LEVER_OK
from .fake_site import FakeSite, running_site

pytestmark = [pytest.mark.asyncio(loop_scope="module")]

FORMS = (f"/greenhouse/nordwind/jobs/{GREENHOUSE_OK}", f"/lever/fjord/{LEVER_OK}/apply",
         "/careers/acme/apply")
LETTER = "Dear team,\nI would love to."


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Browser]:
    async with launch_browser() as shared:
        yield shared


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def forms() -> AsyncIterator[FakeSite]:
    async with running_site() as site:
        yield site


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> FormFiles:
    folder = tmp_path_factory.mktemp("pdfs")
    for name in ("cv.pdf", "letter.pdf"):
        (folder / name).write_bytes(b"%PDF-1.4\n%%EOF\n")
    return FormFiles(folder / "cv.pdf", folder / "letter.pdf")


def facts(profile: Profile, note: dict[str, str]) -> list[str]:
    """Everything the candidate stated: profile facts, explicit answers, revise-note answers."""
    c, a = profile.contact, profile.answers
    stated = [c.name, c.first_name, c.last_name, c.email, c.phone, c.location,
              c.preferred_name or "", profile.current_company or "", a.work_authorization,
              a.notice_period, a.salary_expectation, a.pronouns or "", LETTER,
              *(link.url for link in profile.links), *profile.all_skills,
              *a.extra.values(), *note.values()]
    if a.sponsorship_required is not None:
        stated.append("Yes" if a.sponsorship_required else "No")
    if a.demographics:
        stated.append("decline")
    return [s for s in stated if s]


def traces(value: str, stated: list[str]) -> bool:
    """`value` is a stated fact, its first word (a Yes/No option), a decline, or option words."""
    shown = normalize(value)
    for fact in map(normalize, stated):
        if shown == fact or fact.startswith(f"{shown} ") or f" {shown} " in f" {fact} ":
            return True
    declined = "decline" in stated and any(w in shown for w in ("decline", "don t wish"))
    return declined or (value == "checked" and "yes" in map(normalize, stated))


def _unset(profile: Profile) -> Profile:
    """The profile of someone with no preferred name, notice period or sponsorship answer."""
    answers = dataclasses.replace(profile.answers, notice_period="", sponsorship_required=None)
    return dataclasses.replace(profile, answers=answers)


@pytest.mark.slow
@pytest.mark.parametrize("path", FORMS)
async def test_every_filled_value_traces_to_what_the_candidate_stated(
    forms: FakeSite, browser: Browser, files: FormFiles, profile: Profile, path: str
) -> None:
    note = {"privacy": "yes"}
    for who in (profile, _unset(profile)):
        values = ApplicantValues.from_profile(who, LETTER, note)
        result = await fill_form(forms.url(path), values, files, browser=browser)
        stated = [*facts(who, note), files.resume.name, files.cover_letter.name]
        for key, value in result.filled.items():
            several = all(traces(part, stated) for part in value.split(", "))
            assert traces(value, stated) or several, (
                f"{path}: {key} = {value!r} traces to nothing the candidate stated")
        assert "job_application[preferred_name]" not in result.filled


@pytest.mark.slow
async def test_a_stated_preferred_name_is_used_and_a_missing_one_is_not_invented(
    forms: FakeSite, browser: Browser, files: FormFiles, profile: Profile
) -> None:
    url = forms.url(FORMS[0])
    named = dataclasses.replace(profile, contact=dataclasses.replace(
        profile.contact, preferred_name="Mia"))
    with_name = await fill_form(url, ApplicantValues.from_profile(named), files, browser=browser)
    assert with_name.filled["job_application[preferred_name]"] == "Mia"
    assert with_name.filled["job_application[first_name]"] == "Mara"
    unset = await fill_form(url, ApplicantValues.from_profile(_unset(profile)), files,
                            browser=browser)
    assert "job_application[preferred_name]" not in unset.filled  # optional: stays empty
    # A required question without a fact is listed as unanswered, not guessed.
    assert [u.label for u in unset.unfilled_required] == [
        "Will you now or in the future require sponsorship for employment visa status "
        "(e.g. H-1B)?", "What is your notice period?"]


@pytest.mark.slow
async def test_a_location_suggestion_is_picked_or_the_field_stays_unanswered(
    forms: FakeSite, browser: Browser, files: FormFiles, profile: Profile
) -> None:
    url = forms.url(FORMS[0])
    berlin = await fill_form(url, ApplicantValues.from_profile(profile), files, browser=browser)
    assert berlin.filled["job_application[location]"] == "Berlin, Germany"
    nowhere = dataclasses.replace(profile, contact=dataclasses.replace(
        profile.contact, location="Atlantis"))
    result = await fill_form(url, ApplicantValues.from_profile(nowhere), files, browser=browser)
    assert "job_application[location]" not in result.filled
    assert [u.label for u in result.unfilled_required] == ["Location (City)"]
    assert any("Location (City)" in note for note in result.notes)
