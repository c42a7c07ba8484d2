"""Stages 3 and 4: fill the form in Chromium (never submitting), then park it for a person."""

from __future__ import annotations

import re
from typing import Any

from taskqueue import Fail, NewAttachment, Outcome, Park
from workloads.job_applications.applicant import ApplicantValues
from workloads.job_applications.artifacts import ArtifactMissing
from workloads.job_applications.codec import draft_from_json
from workloads.job_applications.form_answers import unapplied_answers
from workloads.job_applications.forms import FormError, fill_form
from workloads.job_applications.hard_requirements import unclear_authorization
from workloads.job_applications.job import Job, file_names

__all__ = ["KIND", "QUESTION", "blocked_reason", "fill_stage", "form_error", "park_stage",
           "question_for"]

KIND = "job_application"
QUESTION = "Submit application to {company} for {role}?"
BLOCKED_QUESTION = "Answer the open questions of the application to {company} for {role}?"
REVISE_HELP = (
    "Revise with `field: answer` lines to answer form fields (the label or a distinctive "
    "part of it, e.g. `Why do you want to join: I like grids`); any other note redrafts the "
    "CV and letter (`emphasize: Kafka`, `omit: PHP`, `paragraph: text`, or plain words).")
_GONE = re.compile(r"HTTP (404|410)\b")


def question_for(job: Job) -> str:
    blocked = blocked_reason(job.state)
    return (BLOCKED_QUESTION if blocked else QUESTION).format(company=job.company, role=job.role)


def blocked_reason(state: dict[str, Any]) -> str | None:
    """Why an approve cannot lead to a submit (required fields unanswered); None when it can."""
    open_fields = (state.get("fill") or {}).get("unanswered") or []
    if not open_fields:
        return None
    labels = ", ".join(u["label"] for u in open_fields)
    return f"cannot be submitted until you answer {labels}: reply with Revise (`field: answer`)"


def form_error(job: Job, exc: FormError) -> Fail:
    """A posting that is gone fails for good; anything else (network, 5xx) is retried."""
    if _GONE.search(str(exc)):
        return Fail(f"the posting is gone: {exc}", retryable=False)
    return Fail(f"cannot open the application form: {exc}", retryable=True)


def applicant_values(job: Job) -> ApplicantValues:
    """The profile's answers, then those it gives for this company, then the revise notes'."""
    letter = "\n\n".join(draft_from_json(job.state["draft"]).cover_letter)
    posting = job.posting
    company = job.rt.profile.answers.for_company(
        posting.company, posting.board, f"{posting.source}:{posting.board}")
    return ApplicantValues.from_profile(job.rt.profile, letter,
                                        {**company, **job.state.get("extra_answers", {})})


async def fill_stage(job: Job) -> Outcome:
    """Stage 3: open the form, fill it from the profile and the answers, screenshot it."""
    store, values = job.rt.store, applicant_values(job)
    try:
        cv = store.get(job.state["cv"]["sha256"])
        letter = store.get(job.state["cover_letter"]["sha256"])
    except ArtifactMissing as exc:
        job.ctx.log.warning("%s; compiling again", exc)
        job.state["stage"] = "compile"
        return job.release()
    try:
        with job.files(cv, letter) as files:
            result = await fill_form(job.posting.apply_url, values, files,
                                     browser=job.rt.browser,
                                     timeout=job.rt.settings.browser_timeout)
    except FormError as exc:
        return form_error(job, exc)
    await job.checkpoint("fill.middle")
    unapplied = unapplied_answers(result.fields, job.state.get("extra_answers", {}))
    job.state.update(values=values.to_dict(), stage="park", fill={
        "fingerprint": result.fingerprint, "layout": result.layout,
        "filled": dict(result.filled), "notes": list(result.notes),
        "labels": {f.key: f.label for f in result.fields if f.key in result.filled},
        "not_applied": [{"line": line, "why": why} for line, why in unapplied],
        "authorization_unclear": unclear_authorization(job.posting,
                                                       job.rt.profile.requirements),
        "unanswered": [{"label": f.label, "name": f.name} for f in result.unfilled_required],
        "screenshot": store.put(result.screenshot), "url": result.url,
    })
    await job.save()
    await job.stage_event("filled", unanswered=len(result.unfilled_required))
    await job.checkpoint("fill.end")
    return job.release()


def build_request(job: Job) -> dict[str, Any]:
    """What the person sees: who, what, why it ranked, every field and value, what is open."""
    s, payload = job.state, job.task.payload
    fill = s["fill"]
    request: dict[str, Any] = {
        "kind": KIND, "company": job.company, "role": job.role,
        "location": job.posting.location, "score": payload.get("score"), "score_max": 100,
        "top_terms": payload.get("top_terms", []), "url": job.posting.url,
        "apply_url": job.posting.apply_url, "summary": summary(s),
        # The form's own question, not `cards[…][field0]`; a field without a label keeps its name.
        "fields": [{"field": fill.get("labels", {}).get(k) or k, "value": v}
                   for k, v in fill["filled"].items()],
        "unanswered": fill["unanswered"], "fill_notes": fill["notes"],
        "fingerprint": fill["fingerprint"], "drafter": s.get("drafter"),
        "draft_notes": s["draft"].get("notes", []),
        "cv": {"pages": s["cv"]["pages"], "dropped_bullets": s["cv"]["dropped_bullets"]},
        "how_to_revise": REVISE_HELP,
    }
    for key in ("drafter_note", "form_changed", "not_submitted"):
        if s.get(key):
            request[key] = s[key]
    for key in ("not_applied", "authorization_unclear"):
        if fill.get(key):
            request[key] = fill[key]
    if blocked_reason(s):
        request["cannot_submit"] = blocked_reason(s)
    return request


def summary(s: dict[str, Any]) -> str:
    """One paragraph for the message: what was filled, what is open, how it was drafted."""
    fill, cv = s["fill"], s["cv"]
    blocked = blocked_reason(s)
    parts = [blocked[0].upper() + blocked[1:]] if blocked else []
    parts += [f"not submitted: {s['not_submitted']}"] if s.get("not_submitted") else []
    parts.append(f"{_count(len(fill['filled']), 'field')} filled")
    if fill["unanswered"]:
        parts.append("unanswered: " + ", ".join(u["label"] for u in fill["unanswered"]))
    for item in fill.get("not_applied", []):
        parts.append(f"not applied: {item['line']} ({item['why']})")
    for line in fill.get("authorization_unclear", []):
        parts.append(f"check the work authorization yourself, no place in it is recognised: "
                     f"\"{line}\"")
    dropped = cv["dropped_bullets"]
    parts.append(f"CV {_count(cv['pages'], 'page')}"
                 + (f", {_count(dropped, 'bullet')} left out" if dropped else ""))
    parts.append(f"drafted by {s.get('drafter')}")
    parts += [s["drafter_note"]] if s.get("drafter_note") else []
    parts += ["the form changed since your approve"] if s.get("form_changed") else []
    return "; ".join(parts) + ". Revise with `field: answer` lines to answer fields; " \
        "any other note redrafts."


def _count(n: int, noun: str) -> str:
    """"1 page", "2 pages"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


async def park_stage(job: Job) -> Outcome:
    """Stage 4: ask the person, with the screenshot, the CV and the letter attached."""
    store = job.rt.store
    try:
        shot = store.get(job.state["fill"]["screenshot"])
        cv = store.get(job.state["cv"]["sha256"])
        letter = store.get(job.state["cover_letter"]["sha256"])
    except ArtifactMissing as exc:
        job.ctx.log.warning("%s; compiling again", exc)
        job.state["stage"] = "compile"
        return job.release()
    cv_name, letter_name = file_names(job.rt.profile)
    request = build_request(job)
    job.state.update(stage="await", parked_fingerprint=request["fingerprint"])
    for key in ("form_changed", "not_submitted"):
        job.state.pop(key, None)
    await job.stage_event("parked", fingerprint=request["fingerprint"])
    await job.checkpoint("park.middle")
    return Park(question_for(job), request=request, state=dict(job.state), attachments=(
        NewAttachment("form.png", shot, "image/png"),
        NewAttachment(cv_name, cv, "application/pdf"),
        NewAttachment(letter_name, letter, "application/pdf"),
    ))
