"""The applicant's side of a form: the values to enter, the files to upload, extra answers."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from workloads.job_applications.profile import Profile

__all__ = ["DECLINE", "ApplicantValues", "FormFiles", "parse_field_answers"]

# What a declined self-identification question gets; form_answers matches every common
# phrasing of it ("I don't wish to answer", "Prefer not to say", ...).
DECLINE = "Decline to self-identify"


@dataclass(frozen=True)
class FormFiles:
    resume: Path
    # None: no letter upload. A cover-letter text field gets ApplicantValues.cover_letter_text.
    cover_letter: Path | None = None


@dataclass(frozen=True)
class ApplicantValues:
    first_name: str
    last_name: str
    email: str
    phone: str
    location: str
    preferred_name: str = ""  # empty: a "preferred name" field is left empty
    current_company: str = ""
    linkedin: str = ""
    github: str = ""
    portfolio: str = ""
    work_authorization: str = ""
    sponsorship_required: bool | None = None
    notice_period: str = ""
    salary_expectation: str = ""
    pronouns: str = ""
    demographics: str = ""  # "decline": voluntary self-identification questions are declined
    skills: tuple[str, ...] = ()  # ticks matching options of optional multi-choice questions
    cover_letter_text: str = ""
    # Label text or field name -> answer; checked before anything else.
    extra: Mapping[str, str] = dataclasses.field(default_factory=lambda: MappingProxyType({}))

    @property
    def full_name(self) -> str:
        return f"{self.first_name} {self.last_name}".strip()

    @property
    def sponsorship(self) -> str:
        if self.sponsorship_required is None:
            return ""
        return "Yes" if self.sponsorship_required else "No"

    @classmethod
    def from_profile(
        cls,
        profile: Profile,
        cover_letter_text: str = "",
        extra_answers: Mapping[str, str] | None = None,
    ) -> ApplicantValues:
        """Values from the profile; `extra_answers` (a revise note's) win over the profile's."""
        answers = profile.answers
        return cls(
            first_name=profile.contact.first_name,
            last_name=profile.contact.last_name,
            email=profile.contact.email,
            phone=profile.contact.phone,
            location=profile.contact.location,
            preferred_name=profile.contact.preferred_name or "",
            current_company=profile.current_company or "",
            linkedin=profile.link("LinkedIn") or "",
            github=profile.link("GitHub") or "",
            portfolio=profile.link("Portfolio") or profile.link("Website") or "",
            work_authorization=answers.work_authorization,
            sponsorship_required=answers.sponsorship_required,
            notice_period=answers.notice_period,
            salary_expectation=answers.salary_expectation,
            pronouns=answers.pronouns or "",
            demographics=DECLINE if answers.demographics else "",
            skills=profile.all_skills,
            cover_letter_text=cover_letter_text,
            extra=MappingProxyType({**answers.extra, **(extra_answers or {})}),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, to store with the task between fill and submit."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {**data, "extra": dict(self.extra), "skills": list(self.skills)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApplicantValues:
        return cls(**{**data, "extra": MappingProxyType(dict(data.get("extra", {}))),
                      "skills": tuple(data.get("skills", ()))})


def parse_field_answers(note: str) -> dict[str, str]:
    """Answers from a revise note, one `field: answer` per line.

    `field` is the label text (or a distinctive part of it, at least 4 characters: "privacy:
    yes" answers "I have read the privacy notice") or the field's name attribute. It ends at
    the first colon, so answers may contain colons (URLs). Lines without one are ignored;
    later lines win.
    """
    answers: dict[str, str] = {}
    for line in note.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and value.strip():
            answers[key.strip()] = value.strip()
    return answers
