"""Filling an application form for review, and submitting it only once the fill was approved.

`fill_form` never clicks submit. `submit_form` refills the same values, and clicks only if the
form's fingerprint (its fields and the values entered) equals the one the human approved.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from playwright.async_api import Browser, Page, Response
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from workloads.job_applications.applicant import ApplicantValues, FormFiles, parse_field_answers
from workloads.job_applications.autocomplete import pick_suggestion
from workloads.job_applications.browser import open_page
from workloads.job_applications.form_answers import FillStep, plan_fill
from workloads.job_applications.form_fields import (
    FormField,
    Layout,
    detect_layout,
    fingerprint,
    read_fields,
)

__all__ = ["ApplicantValues", "FillResult", "FormError", "FormFiles", "SubmitResult",
           "UnfilledField", "fill_form", "parse_field_answers", "submit_form"]

DEFAULT_TIMEOUT = 30.0  # seconds for loading the form and for the submit's navigation
# submitted: clicked and confirmed. form_changed: fields or values differ from the approved
# fill, not clicked. incomplete: required fields empty, not clicked. error: no submit button
# (not clicked), or clicked and the site answered with an HTTP error or no confirmation.
SubmitStatus = Literal["submitted", "form_changed", "incomplete", "error"]

_SUBMIT_BUTTONS: Mapping[Layout, tuple[str, ...]] = {
    "greenhouse": ("#submit_app", "button[type=submit]", "input[type=submit]"),
    "lever": ("#btn-submit", "button[type=submit]", "input[type=submit]"),
    "generic": ("button[type=submit]", "input[type=submit]", "form button:not([type])"),
}
_CONFIRMATION_TEXT = re.compile(
    r"thank(s| you) for (applying|your application)|application (was |has been )?"
    r"(submitted|received)|we('ve| have) received your application",
    re.IGNORECASE,
)
_CONFIRMATION_URL = re.compile(r"/(confirmation|thanks|thank[-_]you)\b", re.IGNORECASE)
_INVALID_JS = """
(selector) => {
  const button = document.querySelector(selector);
  const form = (button && button.form) || document.querySelector('form');
  if (!form) return [];
  return [...form.elements].filter(el => el.willValidate && !el.checkValidity())
    .map(el => (el.name || el.id) + ': ' + el.validationMessage);
}
"""
_ERRORS_JS = """
() => [...document.querySelectorAll(
  '.error, .errors, .field-error, .error-message, .flash-error, [role=alert]')]
  .map(el => el.innerText.trim()).filter(Boolean)
"""


class FormError(Exception):
    """The application form could not be opened (network error, HTTP error, no fields)."""


@dataclass(frozen=True)
class UnfilledField:
    label: str
    name: str  # the field's key: its name attribute, else "#id"


@dataclass(frozen=True)
class FillResult:
    url: str
    layout: Layout
    filled: Mapping[str, str]  # field key -> what was entered (option labels, file names)
    unfilled_required: tuple[UnfilledField, ...]
    fingerprint: str
    screenshot: bytes  # full-page PNG of the filled form
    notes: tuple[str, ...] = ()  # fields the browser refused to fill, and why
    fields: tuple[FormField, ...] = ()  # every field read from the page (labels, options)


@dataclass(frozen=True)
class SubmitResult:
    """The outcome of a submit; only `submitted` and `error` mean the button was clicked."""

    status: SubmitStatus
    message: str
    clicked: bool  # the submit button was pressed: never retry blindly, it may have gone through
    confirmation_text: str
    fingerprint: str
    screenshot: bytes  # full-page PNG of the confirmation, or of the form when not submitted
    url: str

    @property
    def ok(self) -> bool:
        return self.status == "submitted"


@dataclass(frozen=True)
class _Filled:
    layout: Layout
    filled: dict[str, str]
    unfilled: tuple[UnfilledField, ...]
    fingerprint: str
    notes: tuple[str, ...]
    fields: tuple[FormField, ...] = ()


async def fill_form(
    apply_url: str,
    values: ApplicantValues,
    files: FormFiles,
    *,
    browser: Browser | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> FillResult:
    """Open the form, fill everything the values answer, screenshot it; never submit."""
    async with open_page(browser) as page:
        state = await _open_and_fill(page, apply_url, values, files, timeout)
        screenshot = await page.screenshot(full_page=True)
    return FillResult(
        apply_url,
        state.layout,
        state.filled,
        state.unfilled,
        state.fingerprint,
        screenshot,
        state.notes,
        state.fields,
    )


async def submit_form(
    apply_url: str,
    values: ApplicantValues,
    files: FormFiles,
    expected_fingerprint: str,
    *,
    browser: Browser | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    before_click: Callable[[], Awaitable[None]] | None = None,
) -> SubmitResult:
    """Refill the form and click submit only if it still matches the approved fingerprint.

    `before_click` runs after every check, immediately before the click; if it raises,
    nothing is clicked and the exception propagates (the caller's last word on the click).
    """
    async with open_page(browser) as page:
        state = await _open_and_fill(page, apply_url, values, files, timeout)
        if state.fingerprint != expected_fingerprint:
            return await _not_clicked(
                page, state, "form_changed", "the form changed since it was approved; not submitted"
            )
        if state.unfilled:
            missing = ", ".join(f"{f.label} ({f.name})" for f in state.unfilled)
            return await _not_clicked(
                page, state, "incomplete", f"required fields are empty: {missing}"
            )
        return await _click_submit(page, state, timeout, before_click)


async def _open_and_fill(
    page: Page, url: str, values: ApplicantValues, files: FormFiles, timeout: float
) -> _Filled:
    page.set_default_timeout(timeout * 1000)
    try:
        response = await page.goto(url, wait_until="load")
    except PlaywrightError as exc:
        raise FormError(f"cannot open {url}: {_first_line(exc)}") from exc
    if response is not None and response.status >= 400:
        raise FormError(f"cannot open {url}: HTTP {response.status}")
    fields = await read_fields(page)
    if not any(field.kind != "hidden" for field in fields):
        raise FormError(f"no form fields at {url}")
    layout = await detect_layout(page, fields)
    steps = plan_fill(fields, layout, values, files)
    filled, notes = await _fill(page, steps)
    unfilled = tuple(UnfilledField(f.label, f.key) for f in fields if _missing(f, filled))
    stamp = fingerprint(fields, _with_file_digests(filled, steps))
    return _Filled(layout, filled, unfilled, stamp, notes, tuple(fields))


async def _fill(page: Page, steps: list[FillStep]) -> tuple[dict[str, str], tuple[str, ...]]:
    """Run the steps; a field the browser refuses is left out and explained in the notes."""
    filled: dict[str, str] = {}
    notes: list[str] = []
    for step in steps:
        try:
            shown = await _apply(page, step)
        except PlaywrightError as exc:
            notes.append(f"could not fill {step.field.label!r}: {_first_line(exc)}")
            continue
        if shown is None:
            notes.append(f"no suggestion of {step.field.label!r} matches {step.text!r}")
        else:
            filled[step.field.key] = shown
    return filled, tuple(notes)


async def _apply(page: Page, step: FillStep) -> str | None:
    """Fill one field; what it shows now (a picked suggestion), None when nothing fit."""
    locator = page.locator(step.field.selector)
    if step.text is not None and step.field.combobox:
        return await pick_suggestion(page, step.field, step.text)
    if step.path is not None:
        await locator.set_input_files(step.path)
    elif step.text is not None:
        await locator.fill(step.text)
    elif step.field.kind == "select":
        await locator.select_option([option.value for option in step.options])
    else:
        for option in step.options:
            await page.locator(option.selector).check()
    return step.shown


def _missing(field: FormField, filled: Mapping[str, str]) -> bool:
    return (
        field.required
        and field.kind != "hidden"
        and not field.has_value
        and (field.key not in filled)
    )


def _with_file_digests(filled: Mapping[str, str], steps: list[FillStep]) -> dict[str, str]:
    # A regenerated CV with the same file name must not pass for the approved one.
    values = dict(filled)
    for step in steps:
        if step.path is not None and step.field.key in values:
            digest = hashlib.sha256(step.path.read_bytes()).hexdigest()
            values[step.field.key] = f"{step.shown} sha256:{digest}"
    return values


async def _not_clicked(
    page: Page, state: _Filled, status: SubmitStatus, message: str
) -> SubmitResult:
    screenshot = await page.screenshot(full_page=True)
    return SubmitResult(status, message, False, "", state.fingerprint, screenshot, page.url)


async def _click_submit(
    page: Page,
    state: _Filled,
    timeout: float,
    before_click: Callable[[], Awaitable[None]] | None = None,
) -> SubmitResult:
    selector = await _submit_selector(page, state.layout)
    if selector is None:
        return await _not_clicked(page, state, "error", "no submit button found")
    invalid = await page.evaluate(_INVALID_JS, selector)
    if invalid:
        return await _not_clicked(
            page, state, "incomplete", f"the browser refuses to submit: {'; '.join(invalid)}"
        )
    if before_click is not None:
        await before_click()
    response: Response | None = None
    try:
        async with page.expect_navigation(timeout=timeout * 1000) as navigation:
            await page.locator(selector).first.click()
        response = await navigation.value
    except PlaywrightTimeoutError:
        pass  # a form that submits by XHR: judge by what the page shows now
    return await _judge(page, state, response)


async def _submit_selector(page: Page, layout: Layout) -> str | None:
    for selector in _SUBMIT_BUTTONS[layout]:
        if await page.locator(selector).count():
            return selector
    return None


async def _judge(page: Page, state: _Filled, response: Response | None) -> SubmitResult:
    screenshot = await page.screenshot(full_page=True)
    text = " ".join((await page.inner_text("body")).split())

    def result(status: SubmitStatus, message: str, confirmation: str = "") -> SubmitResult:
        return SubmitResult(
            status, message, True, confirmation, state.fingerprint, screenshot, page.url
        )

    if response is not None and response.status >= 400:
        return result("error", f"HTTP {response.status} after submit: {text[:300]}")
    if _CONFIRMATION_TEXT.search(text) or _CONFIRMATION_URL.search(page.url):
        return result("submitted", "application submitted", text[:1000])
    errors = await page.evaluate(_ERRORS_JS)
    shown = "; ".join(errors) if errors else text[:300]
    return result("error", f"no confirmation after submit: {shown}")


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
