"""Filling and submitting application forms in real Chromium against the replica forms."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser

from workloads.job_applications.browser import launch_browser
from workloads.job_applications.forms import (
    ApplicantValues,
    FormError,
    FormFiles,
    fill_form,
    parse_field_answers,
    submit_form,
)
from workloads.job_applications.profile import Profile

from .fake_form_pages import (
    CARD,
    GREENHOUSE_EXTRA_QUESTION,
    GREENHOUSE_GONE,
    GREENHOUSE_OK,
    GREENHOUSE_SERVER_ERROR,
    LEVER_INVALID,
    LEVER_OK,
)
from .fake_site import FakeSite, running_site

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

GREENHOUSE = f"/greenhouse/nordwind/jobs/{GREENHOUSE_OK}"
LEVER = f"/lever/fjord/{LEVER_OK}/apply"
GENERIC = "/careers/acme/apply"
PNG = b"\x89PNG\r\n\x1a\n"
ANSWER = "job_application[answers_attributes]"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Browser]:
    async with launch_browser() as shared:
        yield shared


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_site() -> AsyncIterator[FakeSite]:
    async with running_site() as site:
        yield site


@pytest.fixture
def forms(shared_site: FakeSite) -> FakeSite:
    shared_site.forms.submissions.clear()
    shared_site.forms.changed.clear()
    return shared_site


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> FormFiles:
    folder = tmp_path_factory.mktemp("pdfs")
    (folder / "cv.pdf").write_bytes(b"%PDF-1.4\n% CV of Mara Lindqvist\n%%EOF\n")
    (folder / "cover_letter.pdf").write_bytes(b"%PDF-1.4\n% Cover letter\n%%EOF\n")
    return FormFiles(folder / "cv.pdf", folder / "cover_letter.pdf")


@pytest.fixture(scope="module")
def values(profile: Profile) -> ApplicantValues:
    return ApplicantValues.from_profile(profile, cover_letter_text="Dear team,\nI would love to.")


async def test_fill_greenhouse_form_from_profile_never_submits(
    forms: FakeSite, browser: Browser, values: ApplicantValues, files: FormFiles
) -> None:
    result = await fill_form(forms.url(GREENHOUSE), values, files, browser=browser)
    assert result.layout == "greenhouse"
    assert result.filled["job_application[first_name]"] == "Mara"
    assert result.filled["job_application[location]"] == "Berlin, Germany"
    assert result.filled["job_application[resume]"] == "cv.pdf"
    assert result.filled["job_application[cover_letter]"] == "cover_letter.pdf"
    assert result.filled[f"{ANSWER}[0][text_value]"] == values.linkedin
    assert result.filled[f"{ANSWER}[1][boolean_value]"] == "Yes"  # authorized to work
    assert result.filled[f"{ANSWER}[2][boolean_value]"] == "No"  # sponsorship
    assert result.filled[f"{ANSWER}[3][text_value]"] == "3 months"
    assert result.filled[f"{ANSWER}[6][text_value]"] == "Company careers page"  # extra answer
    assert result.filled[f"{ANSWER}[7][text_value]"] == "She/her"  # radio
    # An optional multi-choice question ticks the options the profile lists as skills.
    assert result.filled[f"{ANSWER}[5][answer_selected_options_attributes][][question_option_id]"
                         ] == "Kafka, Kubernetes"
    # The profile declines self-identification: each form's own wording of it is picked.
    assert result.filled["job_application[demographic_answers][0]"] == "I don't wish to answer"
    assert result.filled["job_application[demographic_answers][1]"] == "Decline To Self Identify"
    assert "job_application[preferred_name]" not in result.filled  # the profile has none
    assert result.unfilled_required == () and result.notes == ()
    assert result.screenshot.startswith(PNG) and len(result.fingerprint) == 64
    assert forms.forms.submissions == []


async def test_fill_lever_form_from_profile_never_submits(
    forms: FakeSite, browser: Browser, values: ApplicantValues, files: FormFiles
) -> None:
    result = await fill_form(forms.url(LEVER), values, files, browser=browser)
    assert result.layout == "lever"
    assert {k: result.filled[k] for k in ("name", "org", "urls[GitHub]", "resume", "pronouns")} == {
        "name": "Mara Lindqvist",
        "org": "Kontor Logistics GmbH",
        "urls[GitHub]": values.github,
        "resume": "cv.pdf",
        "pronouns": "She/her",
    }
    assert result.filled[f"cards[{CARD}][field0]"] == "Yes"
    assert result.filled[f"cards[{CARD}][field1]"] == "3 months"
    assert result.filled["comments"] == "Dear team,\nI would love to."  # the pasted letter
    assert result.unfilled_required == ()
    assert forms.forms.submissions == []


async def test_label_fallback_fills_an_unknown_form(
    forms: FakeSite, browser: Browser, values: ApplicantValues, files: FormFiles
) -> None:
    result = await fill_form(forms.url(GENERIC), values, files, browser=browser)
    assert result.layout == "generic"
    assert result.filled == {
        "applicant": "Mara Lindqvist",
        "contact": values.email,
        "tel": values.phone,
        "town": "Berlin, Germany",
        "doc1": "cv.pdf",
        "motivation": "Dear team,\nI would love to.",
        "visa": "No",
        "eu": "Yes",
        "notice": "3 months",
    }
    # A consent box is never ticked on the candidate's behalf: the human must say so.
    assert [(f.label, f.name) for f in result.unfilled_required] == [
        ("I have read the privacy notice", "privacy")
    ]
    assert forms.forms.submissions == []


async def test_unanswerable_required_question_is_listed_then_answered_by_a_note(
    forms: FakeSite, browser: Browser, values: ApplicantValues, files: FormFiles
) -> None:
    url = forms.url(f"/greenhouse/nordwind/jobs/{GREENHOUSE_EXTRA_QUESTION}")
    first = await fill_form(url, values, files, browser=browser)
    assert [(f.label, f.name) for f in first.unfilled_required] == [
        ("Why do you want to join Nordwind?", f"{ANSWER}[8][text_value]")
    ]
    refused = await submit_form(url, values, files, first.fingerprint, browser=browser)
    assert refused.status == "incomplete" and not refused.clicked
    assert "Why do you want to join Nordwind?" in refused.message
    note = "Why do you want to join Nordwind?: Your grid-balancing work matters to me."
    answered = replace(values, extra={**values.extra, **parse_field_answers(note)})
    second = await fill_form(url, answered, files, browser=browser)
    assert second.unfilled_required == ()
    assert second.filled[f"{ANSWER}[8][text_value]"] == "Your grid-balancing work matters to me."
    assert second.fingerprint != first.fingerprint
    assert forms.forms.submissions == []


async def test_submit_with_matching_fingerprint_posts_exactly_once(
    forms: FakeSite, browser: Browser, values: ApplicantValues, files: FormFiles
) -> None:
    filled = await fill_form(forms.url(GREENHOUSE), values, files, browser=browser)
    result = await submit_form(
        forms.url(GREENHOUSE), values, files, filled.fingerprint, browser=browser
    )
    assert result.status == "submitted" and result.ok and result.clicked
    assert "Thank you for applying to Nordwind Energie GmbH!" in result.confirmation_text
    assert result.url.endswith("/confirmation") and result.screenshot.startswith(PNG)
    assert len(forms.forms.submissions) == 1
    posted = forms.forms.submissions[0].fields
    assert posted["job_application[email]"] == values.email
    assert posted[f"{ANSWER}[1][boolean_value]"] == "1"
    # The location's suggestion was picked, not only typed: the site's place field is set.
    assert posted["job_application[location_place]"] == "place:Berlin, Germany"
    assert posted[f"{ANSWER}[5][answer_selected_options_attributes][][question_option_id]"] == [
        "71", "73"]
    assert posted["job_application[resume]"]["filename"] == "cv.pdf"
    assert posted["job_application[resume]"]["size"] == files.resume.stat().st_size


async def test_submit_lever_form(
    forms: FakeSite, browser: Browser, values: ApplicantValues, files: FormFiles
) -> None:
    filled = await fill_form(forms.url(LEVER), values, files, browser=browser)
    result = await submit_form(forms.url(LEVER), values, files, filled.fingerprint, browser=browser)
    assert result.status == "submitted"
    assert result.confirmation_text.startswith("Application submitted!")
    [submission] = forms.forms.submissions
    assert submission.fields["pronouns"] == "She/her"
    assert submission.fields["comments"] == "Dear team,\r\nI would love to."
    assert submission.fields["resume"]["content_type"] == "application/pdf"


async def test_changed_form_is_not_submitted(
    forms: FakeSite, browser: Browser, values: ApplicantValues, files: FormFiles
) -> None:
    filled = await fill_form(forms.url(LEVER), values, files, browser=browser)
    forms.forms.change_form(LEVER)
    result = await submit_form(forms.url(LEVER), values, files, filled.fingerprint, browser=browser)
    assert result.status == "form_changed" and "not submitted" in result.message
    assert not result.clicked
    assert result.fingerprint != filled.fingerprint and result.screenshot.startswith(PNG)
    assert forms.forms.submissions == []


async def test_changed_values_or_files_are_not_submitted(
    forms: FakeSite, browser: Browser, values: ApplicantValues, files: FormFiles, tmp_path: Path
) -> None:
    filled = await fill_form(forms.url(GENERIC), values, files, browser=browser)
    other_phone = replace(values, phone="+49 170 0000000")
    result = await submit_form(
        forms.url(GENERIC), other_phone, files, filled.fingerprint, browser=browser
    )
    assert result.status == "form_changed"
    (tmp_path / "cv.pdf").write_bytes(b"%PDF-1.4\n% a different CV\n%%EOF\n")
    other_cv = replace(files, resume=tmp_path / "cv.pdf")  # same name, other content
    result = await submit_form(
        forms.url(GENERIC), values, other_cv, filled.fingerprint, browser=browser
    )
    assert result.status == "form_changed"
    assert forms.forms.submissions == []


async def test_generic_form_submits_once_consent_is_given(
    forms: FakeSite, browser: Browser, values: ApplicantValues, files: FormFiles
) -> None:
    consented = replace(values, extra={**values.extra, **parse_field_answers("privacy: yes")})
    filled = await fill_form(forms.url(GENERIC), consented, files, browser=browser)
    assert filled.filled["privacy"] == "checked" and filled.unfilled_required == ()
    result = await submit_form(
        forms.url(GENERIC), consented, files, filled.fingerprint, browser=browser
    )
    assert result.status == "submitted"
    assert "Application received" in result.confirmation_text
    assert forms.forms.submissions[0].fields["privacy"] == "agreed"


async def test_server_error_after_submit_is_an_error(
    forms: FakeSite, browser: Browser, values: ApplicantValues, files: FormFiles
) -> None:
    url = forms.url(f"/greenhouse/nordwind/jobs/{GREENHOUSE_SERVER_ERROR}")
    filled = await fill_form(url, values, files, browser=browser)
    result = await submit_form(url, values, files, filled.fingerprint, browser=browser)
    assert result.status == "error" and result.message.startswith("HTTP 500 after submit")
    assert result.clicked  # it may have gone through: the caller must not retry blindly
    assert len(forms.forms.submissions) == 1


async def test_validation_error_left_on_the_form_is_an_error(
    forms: FakeSite, browser: Browser, values: ApplicantValues, files: FormFiles
) -> None:
    url = forms.url(f"/lever/fjord/{LEVER_INVALID}/apply")
    filled = await fill_form(url, values, files, browser=browser)
    result = await submit_form(url, values, files, filled.fingerprint, browser=browser)
    assert result.status == "error" and result.clicked
    assert "the resume could not be read" in result.message
    assert len(forms.forms.submissions) == 1


async def test_missing_posting_is_a_form_error(
    forms: FakeSite, browser: Browser, values: ApplicantValues, files: FormFiles
) -> None:
    with pytest.raises(FormError, match="HTTP 404"):
        await fill_form(
            forms.url(f"/greenhouse/nordwind/jobs/{GREENHOUSE_GONE}"),
            values,
            files,
            browser=browser,
        )
    with pytest.raises(FormError, match="cannot open"):
        await fill_form("http://127.0.0.1:9/apply", values, files, browser=browser)
