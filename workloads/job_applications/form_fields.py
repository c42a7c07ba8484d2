"""Reading an application form's fields from the page, its layout, and its fingerprint."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from playwright.async_api import Page

__all__ = [
    "FieldOption",
    "FormField",
    "Layout",
    "build_fields",
    "detect_layout",
    "fingerprint",
    "read_fields",
]

Layout = Literal["greenhouse", "lever", "generic"]
INDEX_ATTRIBUTE = "data-signoff-index"
_REQUIRED_MARKS = re.compile(r"\s*(\*|✱|\(required\))\s*")

# Runs in the page: tags every control with data-signoff-index (so Python can address it
# without escaping names like `cards[…][field0]`) and describes it.
_READ_FIELDS_JS = """
() => {
  const clean = (s) => (s || '').replace(/\\s+/g, ' ').trim();
  const textOf = (node) => {
    if (!node) return '';
    const copy = node.cloneNode(true);
    copy.querySelectorAll('input, select, textarea, option, script, style')
      .forEach(n => n.remove());
    return clean(copy.textContent);
  };
  const ownLabel = (el) => {
    if (el.labels && el.labels.length) return textOf(el.labels[0]);
    if (el.getAttribute('aria-label')) return clean(el.getAttribute('aria-label'));
    const by = el.getAttribute('aria-labelledby');
    return by ? textOf(document.getElementById(by)) : '';
  };
  const questionLabel = (el) => {
    const box = el.closest(
      'fieldset, .application-question, .field, [role=group], [role=radiogroup]');
    if (!box) return '';
    const head = box.querySelector('legend, .application-label, [data-question]');
    if (head) return textOf(head);
    const label = [...box.querySelectorAll('label')].find(l => !l.querySelector('input'));
    return textOf(label);
  };
  const controls = [...document.querySelectorAll('input, select, textarea')].filter(
    el => !['submit', 'button', 'reset', 'image'].includes((el.type || '').toLowerCase()));
  return controls.map((el, index) => {
    el.setAttribute('data-signoff-index', String(index));
    const options = el.tagName === 'SELECT'
      ? [...el.options].map(o => ({value: o.value, label: clean(o.textContent)})) : [];
    const checkable = el.type === 'checkbox' || el.type === 'radio';
    return {
      index, tag: el.tagName.toLowerCase(), type: (el.type || '').toLowerCase(),
      name: el.getAttribute('name') || '', id: el.id || '',
      own_label: ownLabel(el), question_label: questionLabel(el),
      placeholder: el.getAttribute('placeholder') || '',
      required: el.required || el.getAttribute('aria-required') === 'true',
      value: checkable ? el.value : '', checked: checkable ? el.checked : false,
      has_value: checkable ? el.checked : (el.type === 'file' ? el.files.length > 0 : !!el.value),
      multiple: !!el.multiple, options,
      combobox: el.getAttribute('role') === 'combobox'
        || ['list', 'both'].includes(el.getAttribute('aria-autocomplete') || ''),
      listbox: el.getAttribute('aria-controls') || el.getAttribute('aria-owns') || '',
    };
  });
}
"""

_LAYOUT_JS = """
() => ({
  greenhouse: !!document.querySelector('#submit_app, form#application_form, #application_form'),
  lever: !!document.querySelector('#btn-submit, .application-form .application-question'),
})
"""


@dataclass(frozen=True)
class FieldOption:
    value: str
    label: str
    index: int  # the radio/checkbox element's data-signoff-index; -1 for a select's option

    @property
    def selector(self) -> str:
        return f'[{INDEX_ATTRIBUTE}="{self.index}"]'


@dataclass(frozen=True)
class FormField:
    key: str  # the name attribute, else "#id", else "field-<index>"
    name: str
    id: str
    kind: str  # input type (text, email, file, radio, checkbox…), "checkboxes", select, textarea
    label: str  # the question, without required markers
    required: bool
    options: tuple[FieldOption, ...]
    multiple: bool
    index: int  # data-signoff-index of the element (of the first member for groups)
    has_value: bool  # already filled or checked when read
    # A text field whose value counts only once one of its suggestions is picked.
    combobox: bool = False
    listbox: str = ""  # the id of the suggestion list it controls ("" when unnamed)

    @property
    def selector(self) -> str:
        return f'[{INDEX_ATTRIBUTE}="{self.index}"]'

    def structure(self) -> dict[str, Any]:
        """What identifies the field for the fingerprint: not its current value."""
        return {
            "key": self.key,
            "kind": self.kind,
            "label": self.label,
            "required": self.required,
            "multiple": self.multiple,
            "options": [[o.value, o.label] for o in self.options],
        }


async def read_fields(page: Page) -> list[FormField]:
    """Every form control on the page, radios and same-named checkboxes grouped."""
    raw = await page.evaluate(_READ_FIELDS_JS)
    return build_fields(raw)


async def detect_layout(page: Page, fields: Sequence[FormField]) -> Layout:
    """Greenhouse-hosted, Lever-hosted, or anything else (matched by labels)."""
    hints = await page.evaluate(_LAYOUT_JS)
    names = {field.name for field in fields}
    if hints["greenhouse"] or any(n.startswith("job_application[") for n in names):
        return "greenhouse"
    if hints["lever"] or any(n.startswith(("cards[", "urls[")) for n in names):
        return "lever"
    return "generic"


def build_fields(raw: Sequence[Mapping[str, Any]]) -> list[FormField]:
    """FormFields from the page's raw control list (pure, so tests need no browser)."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for item in raw:
        kind = item["type"] if item["tag"] == "input" else item["tag"]
        grouped = kind in {"radio", "checkbox"} and item["name"]
        groups.setdefault((kind, item["name"] if grouped else f"#{item['index']}"), []).append(item)
    return [_field(kind, members) for (kind, _), members in groups.items()]


def _field(kind: str, members: list[Mapping[str, Any]]) -> FormField:
    first = members[0]
    is_group = kind == "radio" or (kind == "checkbox" and len(members) > 1)
    label = (
        first["question_label"]
        if is_group
        else (
            first["own_label"] or first["question_label"] or first["placeholder"] or first["name"]
        )
    )
    if is_group:
        options = tuple(
            FieldOption(m["value"], _strip_marks(m["own_label"]), m["index"]) for m in members
        )
    elif kind == "checkbox":
        options = (FieldOption(first["value"], _strip_marks(first["own_label"]), first["index"]),)
    else:
        options = tuple(FieldOption(o["value"], o["label"], -1) for o in first["options"])
    return FormField(
        key=first["name"] or (f"#{first['id']}" if first["id"] else f"field-{first['index']}"),
        name=first["name"],
        id=first["id"],
        kind="checkboxes" if kind == "checkbox" and len(members) > 1 else kind,
        label=_strip_marks(label or first["name"]),
        required=any(m["required"] for m in members) or bool(_REQUIRED_MARKS.search(label)),
        options=options,
        multiple=bool(first["multiple"]) or kind == "checkbox",
        index=first["index"],
        has_value=any(m["has_value"] for m in members),
        combobox=bool(first.get("combobox")),
        listbox=str(first.get("listbox") or ""),
    )


def _strip_marks(label: str) -> str:
    return _REQUIRED_MARKS.sub(" ", label).strip()


def fingerprint(fields: Sequence[FormField], filled: Mapping[str, str]) -> str:
    """sha256 over the form's structure and the values filled in: any change shows."""
    payload = {
        "fields": [field.structure() for field in fields],
        "values": dict(sorted(filled.items())),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
