"""Loading and validating the candidate profile."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workloads.job_applications.profile import Profile, ProfileError, load_profile, parse_profile

from .conftest import EXAMPLE_PROFILE


def _example() -> dict[str, Any]:
    return tomllib.loads(EXAMPLE_PROFILE.read_text(encoding="utf-8"))


def test_example_profile_loads_every_section(profile: Profile) -> None:
    assert profile.contact.name == "Mara Lindqvist"
    assert profile.contact.first_name == "Mara" and profile.contact.last_name == "Lindqvist"
    assert profile.link("linkedin") == "https://www.linkedin.com/in/mara-lindqvist-example"
    assert profile.experience[0].end == "present"
    assert profile.current_company == "Kontor Logistics GmbH"
    assert profile.experience[1].bullets[0].skills == ("Go", "PostgreSQL", "payments")
    assert [g.name for g in profile.skills] == ["Languages", "Data", "Infrastructure", "Practices"]
    assert "Kafka" in profile.all_skills
    assert profile.answers.sponsorship_required is False
    assert profile.answers.pronouns == "she/her"
    assert profile.answers.extra["How did you hear about this job?"] == "Company careers page"
    assert profile.requirements.seniority == ("mid", "senior", "lead", "staff")
    assert profile.education[0].degree == "M.Sc. Computer Science"


def test_profile_is_immutable(profile: Profile) -> None:
    with pytest.raises(AttributeError):
        profile.summary = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        profile.answers.extra["new"] = "x"  # type: ignore[index]


def test_plain_skill_list_is_one_unnamed_group() -> None:
    data = _example()
    data["skills"] = ["Python", "SQL"]
    assert parse_profile(data).skills[0].name == ""
    assert parse_profile(data).all_skills == ("Python", "SQL")


def test_requirements_are_optional() -> None:
    data = _example()
    del data["requirements"]
    requirements = parse_profile(data).requirements
    assert requirements.accepted_locations == () and requirements.remote_only is False


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["experience"][1]["bullets"][0].update(text=42),
            "profile.toml: experience[1].bullets[0].text: expected a string, got an integer",
        ),
        (
            lambda d: d["contact"].pop("email"),
            "profile.toml: contact.email: missing (expected a string)",
        ),
        (
            lambda d: d["contact"].update(email="not-an-address"),
            "profile.toml: contact.email: not an email address",
        ),
        (
            lambda d: d["answers"].update(sponsorship_required="no"),
            "profile.toml: answers.sponsorship_required: expected a boolean, got a string",
        ),
        (
            lambda d: d["requirements"].update(seniority=["senior", "wizard"]),
            "profile.toml: requirements.seniority[1]: unknown level 'wizard'",
        ),
        (
            lambda d: d["requirements"].update(excluded_keywords=["ok", 3]),
            "profile.toml: requirements.excluded_keywords[1]: expected a string",
        ),
        (
            lambda d: d["links"][0].update(url="linkedin.com/in/x"),
            "profile.toml: links[0].url: must start with https://",
        ),
        (
            lambda d: d["experience"][0].update(titel="typo"),
            "profile.toml: experience[0].titel: unknown field",
        ),
        (
            lambda d: d.update(experience={"company": "x"}),
            "profile.toml: experience: expected an array, got a table",
        ),
        (
            lambda d: d["answers"]["extra"].update({"Why us?": ""}),
            "profile.toml: answers.extra.Why us?: must not be empty",
        ),
    ],
)
def test_bad_profile_names_the_field(change: Callable[[Any], object], message: str) -> None:
    data = _example()
    change(data)
    with pytest.raises(ProfileError) as raised:
        parse_profile(data)
    assert str(raised.value).startswith(message)
    assert isinstance(raised.value, ValueError)


def test_load_profile_reports_the_file_name(tmp_path: Path) -> None:
    bad = tmp_path / "mara.toml"
    bad.write_text('summary = "x"\n[contact]\nname = 1\n', encoding="utf-8")
    with pytest.raises(ProfileError, match=r"^mara\.toml: contact\.name: expected a string"):
        load_profile(bad)
    broken = tmp_path / "broken.toml"
    broken.write_text("summary = \n", encoding="utf-8")
    with pytest.raises(ProfileError, match=r"^broken\.toml: invalid TOML"):
        load_profile(broken)
    with pytest.raises(ProfileError, match=r"^absent\.toml: cannot read"):
        load_profile(tmp_path / "absent.toml")
