"""Autocomplete fields: type the answer, then pick the suggestion that matches it.

A location field with suggestions (role=combobox) counts only once a suggestion is picked:
typed text alone leaves the site's hidden fields (place id, coordinates) empty.
"""

from __future__ import annotations

from collections.abc import Sequence

from playwright.async_api import Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from workloads.job_applications.form_answers import normalize
from workloads.job_applications.form_fields import FormField

__all__ = ["best_suggestion", "pick_suggestion"]

SUGGESTION_WAIT = 3.0  # seconds for the suggestions to appear after typing


def best_suggestion(answer: str, suggestions: Sequence[str]) -> int | None:
    """The index of the suggestion that matches `answer`, or None when none does.

    Exact text first, then the first suggestion holding every word of the answer. Never
    just the same city name: "Berlin, NH" is not "Berlin, Germany"."""
    wanted = normalize(answer)
    shown = [normalize(s) for s in suggestions]
    for index, text in enumerate(shown):
        if text == wanted:
            return index
    words = set(wanted.split())
    for index, text in enumerate(shown):
        if words and words <= set(text.split()):
            return index
    return None


def _options_selector(field: FormField) -> str:
    if field.listbox:
        return f'[id="{field.listbox}"] [role=option]'
    return "[role=listbox] [role=option]"


async def pick_suggestion(page: Page, field: FormField, text: str) -> str | None:
    """Type `text` into the field and click the matching suggestion; its text, or None.

    With no match the typed text is cleared again: half an answer is none."""
    box = page.locator(field.selector)
    await box.fill(text)
    options = page.locator(_options_selector(field))
    try:
        await options.first.wait_for(state="visible", timeout=SUGGESTION_WAIT * 1000)
    except PlaywrightTimeoutError:
        await box.fill("")
        return None
    labels = [" ".join(label.split()) for label in await options.all_inner_texts()]
    index = best_suggestion(text, labels)
    if index is None:
        await box.fill("")
        return None
    await options.nth(index).click()
    return labels[index]
