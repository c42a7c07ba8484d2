"""What to put in each form field: the applicant's values, matched by field name or label."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from workloads.job_applications.applicant import ApplicantValues, FormFiles
from workloads.job_applications.form_fields import FieldOption, FormField, Layout
from workloads.job_applications.terms import mentions

__all__ = ["FillStep", "answer_for", "choose_options", "is_decline", "normalize", "plan_fill",
           "unapplied_answers"]

RESUME = "resume"
COVER_LETTER = "cover_letter"
TEXT_KINDS = {"text", "email", "tel", "url", "number", "search", "textarea", ""}
_YES = {"yes", "y", "true", "1", "agree", "i agree", "accept", "ok"}
_NO = {"no", "n", "false", "0"}
# The phrasings EEO-style forms use for "no answer"; any of them is the same answer.
_DECLINE = re.compile(
    r"\bdecline\b|\bprefer not\b|\bd(o|on t|o not) (wish|want) to\b|\brather not\b"
    r"|\bchoose not to\b|\bnot (to )?(say|answer|disclose|specify|self identify)\b"
    r"|\bnot wish to\b")

# Field names each hosted layout uses, mapped to the ApplicantValues attribute they take.
_KNOWN_NAMES: Mapping[str, Mapping[str, str]] = {
    "greenhouse": {
        "first_name": "first_name",
        "job_application[first_name]": "first_name",
        "last_name": "last_name",
        "job_application[last_name]": "last_name",
        "preferred_name": "preferred_name",
        "job_application[preferred_name]": "preferred_name",
        "email": "email",
        "job_application[email]": "email",
        "phone": "phone",
        "job_application[phone]": "phone",
        "job_application_location": "location",
        "job_application[location]": "location",
        "candidate-location": "location",
        "resume": RESUME,
        "job_application[resume]": RESUME,
        "cover_letter": COVER_LETTER,
        "job_application[cover_letter]": COVER_LETTER,
        "job_application[cover_letter_text]": "cover_letter_text",
    },
    "lever": {
        "name": "full_name",
        "email": "email",
        "phone": "phone",
        "org": "current_company",
        "location": "location",
        "urls[LinkedIn]": "linkedin",
        "urls[GitHub]": "github",
        "urls[Portfolio]": "portfolio",
        "resume": RESUME,
        "comments": "cover_letter_text",
        "pronouns": "pronouns",
    },
    "generic": {},
}

# Label rules, first match wins: sponsorship before authorization ("…require sponsorship to
# work…"), links before "website", cover letter before résumé.
_LABEL_RULES: tuple[tuple[str, str], ...] = (
    # "Preferred first name" is not the legal first name: only a stated preferred name fits.
    (r"\bpreferred (first )?name\b|\bnickname\b|\bgo by\b", "preferred_name"),
    (r"\bfirst name\b|\bgiven name\b", "first_name"),
    (r"\blast name\b|\bsurname\b|\bfamily name\b", "last_name"),
    (r"^(full )?name$|^your (full )?name$|\bfull name\b", "full_name"),
    (r"\be ?mail\b", "email"),
    (r"\bphone\b|\bmobile\b|\btelephone\b", "phone"),
    (r"\blinkedin\b", "linkedin"),
    (r"\bgithub\b", "github"),
    (r"\bportfolio\b|\bpersonal (web)?site\b|^website$", "portfolio"),
    (r"\bsponsor", "sponsorship"),
    (r"\bauthori[sz]", "work_authorization"),
    (r"\bright to work\b|\b(allowed|eligible|entitled|permitted) to work\b", "work_authorization"),
    (
        r"\bnotice period\b|\bwhen can you start\b|\bearliest start\b|\bstart date\b",
        "notice_period",
    ),
    (r"\bsalary\b|\bcompensation\b|\bpay expectations?\b|\bremuneration\b", "salary_expectation"),
    (r"\bpronoun", "pronouns"),
    (r"\bgender\b|\brace\b|\bethnic|\bveteran\b|\bdisabilit|\bhispanic\b|\blatin[oax]\b"
     r"|\bsexual orientation\b", "demographics"),
    (r"\bcurrent (company|employer)\b|^company$|^organi[sz]ation$", "current_company"),
    (r"\bcover letter\b", COVER_LETTER),
    (r"\bresume\b|\brésumé\b|\bcv\b|\bcurriculum vitae\b", RESUME),
    (r"\blocation\b|\bcity\b|\bwhere are you (based|located)\b", "location"),
)


@dataclass(frozen=True)
class FillStep:
    field: FormField
    shown: str  # what the fingerprint and the reviewer see: text, option labels or file name
    text: str | None = None
    options: tuple[FieldOption, ...] = ()
    path: Path | None = None


def normalize(text: str) -> str:
    """Lower case, punctuation and required markers gone, spaces collapsed."""
    return " ".join(re.sub(r"[^\w]+", " ", text.casefold()).split())


def answer_for(
    field: FormField, layout: Layout, values: ApplicantValues, files: FormFiles
) -> str | Path | None:
    """The answer for one field, or None when nothing in the values fits it."""
    extra = _extra_answer(field, values.extra)
    if extra is not None:
        return extra
    source = _KNOWN_NAMES[layout].get(field.name) or _KNOWN_NAMES[layout].get(field.id)
    source = source or _by_label(field.label)
    if source is None:
        return None
    if source == RESUME:
        return files.resume if field.kind == "file" else None
    if source == COVER_LETTER:
        if field.kind == "file":
            return files.cover_letter
        return values.cover_letter_text or None
    return getattr(values, source) or None


def _extra_answer(field: FormField, extra: Mapping[str, str]) -> str | None:
    label = normalize(field.label)
    for key, answer in extra.items():
        if _names(field, key):
            return answer
    # A human typing a revise note abbreviates: "privacy: yes" answers "I accept the privacy…".
    partial = [(len(k), a) for k, a in extra.items() if _names_part_of(k, label)]
    return max(partial)[1] if partial else None


def _names(field: FormField, key: str) -> bool:
    return key in {field.name, field.id} or normalize(key) == normalize(field.label)


def _names_part_of(key: str, label: str) -> bool:
    return len(normalize(key)) >= 4 and re.search(rf"\b{re.escape(normalize(key))}\b",
                                                  label) is not None


def unapplied_answers(fields: Sequence[FormField], answers: Mapping[str, str]
                      ) -> list[tuple[str, str]]:
    """(`field: answer` line, why) for each answer that fills no field of this form: it names
    no field, or its value is not among the field's options."""
    visible = [f for f in fields if f.kind != "hidden"]
    problems = []
    for key, answer in answers.items():
        line = f"{key}: {answer}"
        named = [f for f in visible if _names(f, key)] or \
            [f for f in visible if _names_part_of(key, normalize(f.label))]
        if not named:
            problems.append((line, "no such field on this form"))
            continue
        field = named[0]
        said = normalize(answer)
        yes_no = said in _YES | _NO or said.split(" ")[0] in _YES | _NO
        if field.kind == "checkbox" and not yes_no:
            problems.append((line, f"{field.label!r} is a checkbox: answer yes or no"))
        elif field.kind not in TEXT_KINDS and field.kind not in {"checkbox", "file"} \
                and _step(field, answer) is None:
            options = ", ".join(o.label or o.value for o in field.options
                                if o.value != "" or o.index >= 0)  # not "Select…"
            problems.append((line, f"{answer!r} is not among the options of {field.label!r} "
                                   f"({options})"))
    return problems


def _by_label(label: str) -> str | None:
    text = normalize(label)
    return next((source for pattern, source in _LABEL_RULES if re.search(pattern, text)), None)


def choose_options(options: tuple[FieldOption, ...], answer: str) -> tuple[FieldOption, ...]:
    """The options an answer selects: exact text, then Yes/No by first word, then containment."""
    usable = [o for o in options if o.value != "" or o.index >= 0]
    wanted = normalize(answer)
    if is_decline(answer):
        return tuple([o for o in usable if is_decline(o.label or o.value)][:1])
    exact = [o for o in usable if wanted in {normalize(o.label), normalize(o.value)}]
    if exact:
        return (exact[0],)
    first_word = wanted.split(" ")[0] if wanted else ""
    for words, option_word in ((_YES, "yes"), (_NO, "no")):
        if first_word in words or wanted in words:
            hits = [o for o in usable if normalize(o.label).split(" ")[:1] == [option_word]]
            if hits:
                return (hits[0],)
    contained = [
        o
        for o in usable
        if _contains_words(wanted, normalize(o.label))
        or _contains_words(normalize(o.label), wanted)
    ]
    return tuple(contained[:1])


def is_decline(text: str) -> bool:
    """Whether `text` is one of the common ways to decline a self-identification question."""
    return bool(_DECLINE.search(normalize(text)))


def _contains_words(text: str, words: str) -> bool:
    return bool(words) and f" {words} " in f" {text} "


def _step(field: FormField, answer: str | Path) -> FillStep | None:
    if isinstance(answer, Path):
        return FillStep(field, shown=answer.name, path=answer) if field.kind == "file" else None
    if field.kind in TEXT_KINDS:
        return FillStep(field, shown=answer, text=answer)
    if field.kind == "checkbox":
        agreed = normalize(answer) in _YES or normalize(answer).split(" ")[0] in _YES
        return FillStep(field, shown="checked", options=field.options) if agreed else None
    if field.kind == "checkboxes":
        picked = [
            o for part in re.split(r"[,;]", answer) for o in choose_options(field.options, part)
        ]
        chosen = tuple(dict.fromkeys(picked))
    else:
        chosen = choose_options(field.options, answer)
    if not chosen:
        return None
    return FillStep(field, shown=", ".join(o.label or o.value for o in chosen), options=chosen)


def _skills_step(field: FormField, values: ApplicantValues) -> FillStep | None:
    """An unanswered multi-choice question ticks the options naming the profile's skills."""
    if not (field.kind == "checkboxes" or (field.kind == "select" and field.multiple)):
        return None
    chosen = tuple(o for o in field.options if o.label and any(
        mentions(skill, o.label) for skill in values.skills))
    if not chosen:
        return None
    return FillStep(field, shown=", ".join(o.label for o in chosen), options=chosen)


def plan_fill(
    fields: list[FormField], layout: Layout, values: ApplicantValues, files: FormFiles
) -> list[FillStep]:
    """One step per field that can be answered; fields already holding a value are left alone.

    The cover letter is uploaded or pasted, not both: when a file field takes the PDF, text
    fields that would get the letter's text are skipped.
    """
    steps = []
    for form_field in fields:
        if form_field.kind == "hidden" or (form_field.has_value and form_field.kind != "select"):
            continue
        answer = answer_for(form_field, layout, values, files)
        step = _step(form_field, answer) if answer is not None else _skills_step(form_field, values)
        if step is not None:
            steps.append(step)
    if files.cover_letter and any(step.path == files.cover_letter for step in steps):
        steps = [s for s in steps if not (s.text and s.text == values.cover_letter_text)]
    return steps
