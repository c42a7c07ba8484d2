"""The candidate profile: one TOML file read into frozen dataclasses, validated field by field."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from workloads.job_applications._reader import Node, ProfileError
from workloads.job_applications.requirements import (
    DEGREE_LEVELS,
    SENIORITY_LEVELS,
    Requirements,
    parse_requirements,
)

__all__ = [
    "DEGREE_LEVELS",
    "SENIORITY_LEVELS",
    "Answers",
    "Bullet",
    "Contact",
    "Education",
    "Experience",
    "Link",
    "Profile",
    "ProfileError",
    "Requirements",
    "SkillGroup",
    "load_profile",
    "parse_profile",
]

# Lowest to highest; rank.seniority_of() maps a job title to one of these.



@dataclass(frozen=True)
class Contact:
    name: str
    email: str
    phone: str
    location: str
    preferred_name: str | None = None  # only forms asking for a preferred name get it

    @property
    def first_name(self) -> str:
        return self.name.split()[0]

    @property
    def last_name(self) -> str:
        # A one-word name has no last name: repeating the first would answer for the person.
        return " ".join(self.name.split()[1:])


@dataclass(frozen=True)
class Link:
    label: str
    url: str


@dataclass(frozen=True)
class Bullet:
    text: str
    skills: tuple[str, ...]


@dataclass(frozen=True)
class Experience:
    company: str
    title: str
    start: str
    end: str  # "present" for the current job
    location: str
    bullets: tuple[Bullet, ...]


@dataclass(frozen=True)
class SkillGroup:
    name: str  # "" when the profile lists skills without groups
    skills: tuple[str, ...]


@dataclass(frozen=True)
class Education:
    institution: str
    degree: str
    start: str
    end: str
    details: str


@dataclass(frozen=True)
class Answers:
    work_authorization: str
    sponsorship_required: bool | None  # None: not stated, so never answered
    notice_period: str  # "" when the candidate has none to give
    salary_expectation: str
    pronouns: str | None
    demographics: str | None  # "decline": EEO-style self-identification questions are declined
    extra: Mapping[str, str]  # question label (or field name) -> answer
    # company name, board token or "greenhouse:token" -> answers for every posting there
    # (a storage consent given once for the company)
    companies: Mapping[str, Mapping[str, str]] = field(
        default_factory=lambda: MappingProxyType({}))

    def for_company(self, *names: str) -> Mapping[str, str]:
        """The answers given for a company, by any of its `names` (company, board, both)."""
        wanted = {name.casefold() for name in names if name}
        found: dict[str, str] = {}
        for key, answers in self.companies.items():
            if key.casefold() in wanted:
                found.update(answers)
        return found


@dataclass(frozen=True)
class Profile:
    contact: Contact
    links: tuple[Link, ...]
    summary: str
    experience: tuple[Experience, ...]
    skills: tuple[SkillGroup, ...]
    education: tuple[Education, ...]
    answers: Answers
    requirements: Requirements

    @property
    def all_skills(self) -> tuple[str, ...]:
        """Every listed skill, in profile order."""
        return tuple(skill for group in self.skills for skill in group.skills)

    @property
    def current_company(self) -> str | None:
        """The company of the first experience entry that has not ended."""
        for entry in self.experience:
            if entry.end.lower() in {"present", "now", "today", ""}:
                return entry.company
        return None

    def link(self, label: str) -> str | None:
        """The URL of the link whose label is `label` (case-insensitive)."""
        wanted = label.casefold()
        return next((ln.url for ln in self.links if ln.label.casefold() == wanted), None)


def load_profile(path: str | Path) -> Profile:
    """Read and validate the profile TOML at `path`; raise ProfileError naming the bad field."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProfileError(f"{path.name}: cannot read: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{path.name}: invalid TOML: {exc}") from exc
    return parse_profile(data, source=path.name)


def parse_profile(data: Mapping[str, object], source: str = "profile.toml") -> Profile:
    """Validate already-parsed TOML; `source` prefixes every error message."""
    root = Node(data, "", source)
    root.check_keys(
        {
            "contact",
            "links",
            "summary",
            "experience",
            "skills",
            "education",
            "answers",
            "requirements",
        }
    )
    return Profile(
        contact=_contact(root.table("contact")),
        links=tuple(_link(node) for node in root.tables("links")),
        summary=root.text("summary"),
        experience=tuple(_experience(node) for node in root.tables("experience")),
        skills=_skills(root),
        education=tuple(_education(node) for node in root.tables("education")),
        answers=_answers(root.table("answers")),
        requirements=parse_requirements(root.table("requirements", required=False)),
    )


def _contact(node: Node) -> Contact:
    node.check_keys({"name", "email", "phone", "location", "preferred_name"})
    name, email = node.text("name"), node.text("email")
    if "@" not in email:
        node.fail("email", f"not an email address: {email!r}")
    return Contact(name, email, node.text("phone"), node.text("location"),
                   node.optional_text("preferred_name"))


def _link(node: Node) -> Link:
    node.check_keys({"label", "url"})
    url = node.text("url")
    if not url.startswith(("https://", "http://")):
        node.fail("url", f"must start with https:// or http://, got {url!r}")
    return Link(node.text("label"), url)


def _experience(node: Node) -> Experience:
    node.check_keys({"company", "title", "start", "end", "location", "bullets"})
    bullets = []
    for bullet in node.tables("bullets"):
        bullet.check_keys({"text", "skills"})
        bullets.append(Bullet(bullet.text("text"), bullet.texts("skills")))
    return Experience(
        company=node.text("company"),
        title=node.text("title"),
        start=node.text("start"),
        end=node.text("end", default="present"),
        location=node.text("location", default=""),
        bullets=tuple(bullets),
    )


def _skills(root: Node) -> tuple[SkillGroup, ...]:
    # Either `skills = ["Python", ...]` or a `[skills]` table of group name -> list.
    if isinstance(root.data.get("skills"), list):
        return (SkillGroup("", root.texts("skills")),)
    groups = root.table("skills", required=False)
    return tuple(SkillGroup(name, groups.texts(name)) for name in groups.data)


def _education(node: Node) -> Education:
    node.check_keys({"institution", "degree", "start", "end", "details"})
    return Education(
        institution=node.text("institution"),
        degree=node.text("degree"),
        start=node.text("start", default=""),
        end=node.text("end"),
        details=node.text("details", default=""),
    )


def _answers(node: Node) -> Answers:
    node.check_keys(
        {
            "work_authorization",
            "sponsorship_required",
            "notice_period",
            "salary_expectation",
            "pronouns",
            "demographics",
            "extra",
            "companies",
        }
    )
    demographics = node.optional_text("demographics")
    if demographics is not None and demographics.casefold() != "decline":
        node.fail("demographics", f'the only accepted value is "decline", not {demographics!r}')
    extra = node.table("extra", required=False)
    return Answers(
        work_authorization=node.text("work_authorization"),
        sponsorship_required=(node.flag("sponsorship_required", default=False)
                              if "sponsorship_required" in node.data else None),
        notice_period=node.text("notice_period", default=""),
        salary_expectation=node.text("salary_expectation"),
        pronouns=node.optional_text("pronouns"),
        demographics=demographics and "decline",
        extra=MappingProxyType({key: extra.text(key) for key in extra.data}),
        companies=_companies(node.table("companies", required=False)),
    )


def _companies(node: Node) -> Mapping[str, Mapping[str, str]]:
    """`[answers.companies."Name"]` tables: label (or field name) -> answer, per company."""
    found = {}
    for company in node.data:
        table = node.table(company)
        found[company] = MappingProxyType({key: table.text(key) for key in table.data})
    return MappingProxyType(found)
