"""What the candidate reads: the review message (Telegram's rendering and `signoff show`), with
labels instead of field names, unapplied revise lines with why, consents per company, page
counts in words and unclear work-authorization lines named."""

from __future__ import annotations

import html
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser

from bot.telegram.render import render_approval
from taskqueue import TaskQueue
from taskqueue.cli.output import print_detail
from workloads.job_applications.boards import Posting
from workloads.job_applications.codec import payload_for
from workloads.job_applications.form_answers import unapplied_answers
from workloads.job_applications.form_fields import FieldOption, FormField
from workloads.job_applications.handler import make_handler
from workloads.job_applications.profile import load_profile
from workloads.job_applications.rank import Ranked, dedupe_key
from workloads.job_applications.review import summary
from workloads.job_applications.settings import JobSettings

from .conftest import EXAMPLE_PROFILE
from .fake_form_pages import CARD, GREENHOUSE_EXTRA_QUESTION, GREENHOUSE_OK, LEVER_OK
from .fake_site import FakeSite
from .pipeline import CAP, drain

# A live Lever posting, filled on the form of LEVER_OK.
STAFF_DATA = "7c2d4e6f-1a3b-4c5d-9e8f-0a1b2c3d4e5f"
CONSENT = '\n[answers.companies."Nordwind Energie GmbH"]\n"privacy notice" = "yes"\n'


def _field(key: str, label: str, kind: str = "text", options: tuple[str, ...] = ()) -> FormField:
    return FormField(key, key, "", kind, label, False,
                     tuple(FieldOption(o, o, -1) for o in options), False, 0, False)


def test_revise_lines_that_fill_nothing_are_named_with_why() -> None:
    fields = [_field(f"cards[{CARD}][field1]", "What is your notice period?", "select",
                     ("Immediately", "1 month", "3 months")),
              _field("privacy", "I have read the privacy notice", "checkbox", ("agreed",)),
              _field("email", "Email")]
    answers = {"Favourite colour": "blue", "notice period": "5 years", "privacy": "maybe",
               "Email": "me@example.org", "What is your notice period?": "3 months"}
    assert unapplied_answers(fields, answers) == [
        ("Favourite colour: blue", "no such field on this form"),
        ("notice period: 5 years", "'5 years' is not among the options of 'What is your "
                                   "notice period?' (Immediately, 1 month, 3 months)"),
        ("privacy: maybe", "'I have read the privacy notice' is a checkbox: answer yes or no"),
    ]
    assert unapplied_answers(fields, {"privacy": "yes", "notice": "1 month"}) == []


def _state(pages: int, dropped: int = 0, filled: int = 3) -> dict[str, Any]:
    return {"fill": {"filled": {str(n): "x" for n in range(filled)}, "unanswered": []},
            "cv": {"pages": pages, "dropped_bullets": dropped}, "drafter": "deterministic"}


def test_the_summary_counts_in_words() -> None:
    assert "1 field filled; CV 1 page; drafted" in summary(_state(1, filled=1))
    assert "3 fields filled; CV 2 pages, 1 bullet left out;" in summary(_state(2, 1))
    assert "CV 2 pages, 3 bullets left out" in summary(_state(2, 3))
    assert "1 pages" not in summary(_state(1)) and "1 bullets" not in summary(_state(2, 1))


def test_a_consent_given_for_a_company_is_read_from_the_profile(tmp_path: Path) -> None:
    path = tmp_path / "profile.toml"
    path.write_text(EXAMPLE_PROFILE.read_text("utf-8") + CONSENT, "utf-8")
    answers = load_profile(path).answers
    assert answers.for_company("nordwind energie gmbh", "nordwind") == {"privacy notice": "yes"}
    assert answers.for_company("Fjord Analytics", "fjord") == {}
    path.write_text(EXAMPLE_PROFILE.read_text("utf-8")
                    + '\n[answers.companies."Nordwind"]\n"privacy" = 1\n', "utf-8")
    with pytest.raises(ValueError, match=r'answers.companies.Nordwind.privacy: expected a '
                                         r'string, got an integer'):
        load_profile(path)


def _payload(site: FakeSite, board: str, external_id: str, company: str, apply: str,
             text: str = "Python and PostgreSQL.") -> dict[str, Any]:
    source = "lever" if board == "fjord" else "greenhouse"
    posting = Posting(source, board, external_id, company, "Backend Engineer",  # type: ignore[arg-type]
                      "Berlin, Germany", False, site.url(apply), site.url(apply), text)
    return payload_for(Ranked(posting, 70, ("Python",), dedupe_key(posting)))


def _shown(approval: Any) -> str:
    """The chat message as the person reads it: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", render_approval(approval, CAP).text))


@pytest.mark.slow
async def test_the_review_reads_as_the_candidate_needs_it(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, browser: Browser, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    profile = tmp_path / "profile.toml"
    profile.write_text(EXAMPLE_PROFILE.read_text("utf-8") + CONSENT, "utf-8")
    handler = make_handler(replace(settings, profile=profile), browser=browser)
    # Two postings of one company on a form with a required privacy consent, one of another
    # company on the same form, and a Lever form whose questions are named cards[…][fieldN].
    nordwind = [(await queue.task_enqueue(CAP, _payload(
        site, "nordwind", job, "Nordwind Energie GmbH", "/careers/acme/apply"))).id
        for job in (GREENHOUSE_OK, GREENHOUSE_EXTRA_QUESTION)]
    fjord = (await queue.task_enqueue(CAP, _payload(
        site, "fjord", LEVER_OK, "Fjord Analytics", "/careers/acme/apply"))).id
    lever = (await queue.task_enqueue(CAP, _payload(
        site, "fjord", STAFF_DATA, "Fjord Analytics", f"/lever/fjord/{LEVER_OK}/apply",
        "Kubernetes and Python. Local work authorization is required."))).id
    await drain(queue, handler)

    for task_id in nordwind:  # the company's consent, given once, counts for each posting
        approval = (await queue.task_get(task_id)).approval
        assert approval is not None and approval.request["unanswered"] == []
        fields = {f["field"]: f["value"] for f in approval.request["fields"]}
        assert fields["I have read the privacy notice"] == "checked"
    other = (await queue.task_get(fjord)).approval
    assert other is not None
    assert [u["label"] for u in other.request["unanswered"]] == ["I have read the privacy notice"]

    task = await queue.task_get(lever)
    assert task.approval is not None
    fields = {f["field"]: f["value"] for f in task.approval.request["fields"]}
    assert fields["Are you authorized to work in the EU?"] == "Yes"
    assert not any(f.startswith(("cards[", "urls[", "name")) for f in fields)
    text = _shown(task.approval)
    assert ('check the work authorization yourself, no place in it is recognised: '
            '"Local work authorization is required."') in text
    assert "CV 1 page;" in text or "CV 2 pages" in text

    await queue.approval_decide_for_task(
        lever, "revised", "mara", "Favourite colour: blue\nWhat is your notice period?: 5 years")
    await drain(queue, handler)
    task = await queue.task_get(lever)
    assert task.approval is not None and task.approval.decision is None
    text = _shown(task.approval)
    assert "not applied: Favourite colour: blue (no such field on this form)" in text
    assert ("not applied: What is your notice period?: 5 years ('5 years' is not among the "
            "options of 'What is your notice period?' (Immediately, 1 month, "
            "2 months, 3 months, More than 3 months))") in text
    assert task.approval.request["not_applied"][0] == {
        "line": "Favourite colour: blue", "why": "no such field on this form"}

    print_detail(await queue.task_detail(lever))  # what `signoff show ID` prints
    shown = capsys.readouterr().out
    # Key: value lines, nested ones indented, not one long JSON line.
    assert re.search(r"\npayload:\n(?:  .*\n)+state:\n(?:  .*\n)+result: +null\n", shown)
    assert "\n    company: Fjord Analytics\n" in shown and "\n  stage: await\n" in shown
    assert not re.search(r"^(payload|state): *\{", shown, re.M)
