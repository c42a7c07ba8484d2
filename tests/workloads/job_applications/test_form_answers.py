"""Choosing answers for form fields, without a browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workloads.job_applications.applicant import ApplicantValues, FormFiles, parse_field_answers
from workloads.job_applications.autocomplete import best_suggestion
from workloads.job_applications.form_answers import answer_for, choose_options, plan_fill
from workloads.job_applications.form_fields import FieldOption, FormField, build_fields, fingerprint
from workloads.job_applications.profile import Contact, Profile

from .fake_form_pages import PLACES

FILES = FormFiles(Path("/tmp/cv.pdf"), Path("/tmp/letter.pdf"))


def _raw(index: int, **kwargs: Any) -> dict[str, Any]:
    base = {
        "index": index,
        "tag": "input",
        "type": "text",
        "name": "",
        "id": "",
        "own_label": "",
        "question_label": "",
        "placeholder": "",
        "required": False,
        "value": "",
        "checked": False,
        "has_value": False,
        "multiple": False,
        "options": [],
    }
    return {**base, **kwargs}


def _text_field(label: str, kind: str = "text", name: str = "q") -> FormField:
    return build_fields([_raw(0, type=kind, name=name, own_label=label)])[0]


def test_parse_field_answers_reads_one_answer_per_line() -> None:
    note = (
        "Why do you want to join Nordwind?: Your grid work matters.\n"
        "privacy notice: yes\n\nno separator here\nurl: https://example.org/a:b\n"
        "privacy notice: agreed"
    )
    assert parse_field_answers(note) == {
        "Why do you want to join Nordwind?": "Your grid work matters.",
        "privacy notice": "agreed",
        "url": "https://example.org/a:b",
    }


def test_values_from_profile_round_trip(profile: Profile) -> None:
    values = ApplicantValues.from_profile(profile, "Dear team", {"Why us?": "Because."})
    assert (
        values.full_name == "Mara Lindqvist" and values.current_company == "Kontor Logistics GmbH"
    )
    assert values.github == "https://github.com/mara-lindqvist-example"
    assert values.sponsorship == "No"
    assert values.extra["Why us?"] == "Because."
    assert values.extra["How did you hear about this job?"] == "Company careers page"
    assert ApplicantValues.from_dict(values.to_dict()) == values


def test_build_fields_groups_radios_and_strips_required_marks() -> None:
    fields = build_fields(
        [
            _raw(0, name="name", own_label="Full name✱", required=True),
            _raw(1, type="radio", name="eu", value="y", own_label="Yes", question_label="In EU? *"),
            _raw(2, type="radio", name="eu", value="n", own_label="No", question_label="In EU? *"),
            _raw(3, type="checkbox", name="ok", value="1", own_label="I agree *"),
            _raw(
                4,
                tag="select",
                type="select-one",
                name="s",
                own_label="Pick",
                options=[{"value": "", "label": "--"}, {"value": "a", "label": "A"}],
            ),
        ]
    )
    assert [(f.key, f.kind, f.label, f.required) for f in fields] == [
        ("name", "text", "Full name", True),
        ("eu", "radio", "In EU?", True),
        ("ok", "checkbox", "I agree", True),
        ("s", "select", "Pick", False),
    ]
    assert fields[1].options == (FieldOption("y", "Yes", 1), FieldOption("n", "No", 2))


def test_answers_come_from_labels(profile: Profile) -> None:
    values = ApplicantValues.from_profile(profile, "Dear team")
    cases = {
        "Given name": "Mara",
        "Surname": "Lindqvist",
        "Your name": "Mara Lindqvist",
        "E-mail address": values.email,
        "LinkedIn profile URL": values.linkedin,
        "Do you require visa sponsorship?": "No",
        "Are you authorised to work in Germany?": values.work_authorization,
        "When can you start?": "3 months",
        "Expected compensation": values.salary_expectation,
        "Pronouns": "she/her",
        "Current employer": "Kontor Logistics GmbH",
        "Cover letter": "Dear team",
        "Where are you based?": "Berlin, Germany",
        "Favourite colour": None,
    }
    for label, expected in cases.items():
        assert answer_for(_text_field(label), "generic", values, FILES) == expected, label
    assert answer_for(_text_field("Upload CV", "file"), "generic", values, FILES) == FILES.resume
    assert answer_for(_text_field("Cover letter", "file"), "generic", values, FILES) == (
        FILES.cover_letter
    )


def test_extra_answers_win_and_may_abbreviate(profile: Profile) -> None:
    values = ApplicantValues.from_profile(
        profile, extra_answers={"privacy": "yes", "q7": "by name", "Notice period": "1 month"}
    )
    assert answer_for(_text_field("I accept the privacy policy"), "generic", values, FILES) == "yes"
    assert answer_for(_text_field("Anything", name="q7"), "generic", values, FILES) == "by name"
    assert answer_for(_text_field("Notice period *"), "generic", values, FILES) == "1 month"


def test_choose_options() -> None:
    yes_no = (FieldOption("", "--", -1), FieldOption("1", "Yes", -1), FieldOption("0", "No", -1))
    assert choose_options(yes_no, "Yes, EU citizen")[0].value == "1"
    assert choose_options(yes_no, "no")[0].value == "0"
    assert choose_options(yes_no, "maybe") == ()
    notice = tuple(FieldOption(v, v, -1) for v in ("Immediately", "1 month", "3 months"))
    assert choose_options(notice, "3 months")[0].value == "3 months"
    assert choose_options(notice, "I could start in 1 month")[0].value == "1 month"
    pronouns = (FieldOption("He/him", "He/him", 1), FieldOption("She/her", "She/her", 2))
    assert choose_options(pronouns, "she/her") == (pronouns[1],)
    assert choose_options((FieldOption("x", "No", 1),), "I am not sure") == ()  # no "no" in "not"


def test_plan_leaves_unknown_and_prefilled_fields_alone(profile: Profile) -> None:
    values = ApplicantValues.from_profile(profile)
    fields = build_fields(
        [
            _raw(0, name="email", own_label="Email"),
            _raw(1, name="city", own_label="City", has_value=True),
            _raw(2, name="colour", own_label="Favourite colour", required=True),
            _raw(3, type="hidden", name="token"),
            _raw(4, type="checkbox", name="news", value="1", own_label="Email me job alerts"),
        ]
    )
    steps = plan_fill(fields, "generic", values, FILES)
    assert [(s.field.key, s.shown) for s in steps] == [("email", values.email)]


def test_cover_letter_is_uploaded_or_pasted_not_both(profile: Profile) -> None:
    values = ApplicantValues.from_profile(profile, cover_letter_text="Dear team")
    both = build_fields(
        [
            _raw(0, type="file", name="cl", own_label="Cover letter"),
            _raw(1, tag="textarea", type="textarea", name="cl_text", own_label="Cover letter"),
        ]
    )
    assert [s.field.key for s in plan_fill(both, "generic", values, FILES)] == ["cl"]
    no_file = FormFiles(FILES.resume)
    assert [s.field.key for s in plan_fill(both, "generic", values, no_file)] == ["cl_text"]


def test_fingerprint_changes_with_structure_and_values() -> None:
    fields = build_fields([_raw(0, name="a", own_label="A"), _raw(1, name="b", own_label="B")])
    stamp = fingerprint(fields, {"a": "1"})
    assert stamp == fingerprint(list(fields), {"a": "1"})
    assert stamp != fingerprint(fields, {"a": "2"})
    assert stamp != fingerprint(fields[:1], {"a": "1"})
    required = build_fields(
        [_raw(0, name="a", own_label="A", required=True), _raw(1, name="b", own_label="B")]
    )
    assert stamp != fingerprint(required, {"a": "1"})


def test_best_suggestion_needs_every_word_of_the_answer() -> None:
    assert best_suggestion("Berlin, Germany", PLACES) == 0
    assert best_suggestion("Stockholm", PLACES) == PLACES.index("Stockholm, Sweden")
    assert best_suggestion("Berlin, Canada", PLACES) is None  # not any Berlin
    assert best_suggestion("Hamburg", ()) is None


def _options(*labels: str) -> tuple[FieldOption, ...]:
    return tuple(FieldOption(str(i), label, -1) for i, label in enumerate(labels))


@pytest.mark.parametrize("wording", [
    "Decline to self-identify", "I don't wish to answer", "Prefer not to say",
    "I do not want to disclose", "Choose not to disclose"])
def test_every_decline_wording_picks_the_forms_decline_option(wording: str) -> None:
    options = _options("Male", "Female", wording, "No")
    assert [o.label for o in choose_options(options, "Decline to self-identify")] == [wording]
    assert [o.label for o in choose_options(options, "Female")] == ["Female"]
    assert choose_options(_options("Male", "Female"), "Decline to self-identify") == ()


def test_a_one_word_name_has_no_invented_last_name() -> None:
    assert Contact("Prince", "p@example.org", "1", "Berlin").last_name == ""
    assert Contact("Mara Lindqvist", "m@example.org", "1", "Berlin").last_name == "Lindqvist"
