"""HTML of the replica application forms: Greenhouse-hosted, Lever-hosted and a plain one."""

from __future__ import annotations

import secrets

GREENHOUSE_OK = "4012345"
GREENHOUSE_EXTRA_QUESTION = "4012346"  # has a required question the profile cannot answer
GREENHOUSE_SERVER_ERROR = "4012360"  # submit answers HTTP 500
GREENHOUSE_GONE = "4012399"  # the posting page is a 404
LEVER_OK = "5f1c2a4e-8d7b-4c1e-9a3f-2b6d8e0f1a2c"
LEVER_INVALID = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"  # submit comes back with a form error
CARD = "0e1d2c3b-4a59-4687-9a8b-7c6d5e4f3a2b"


def _field(ident: str, label: str, control: str, required: bool = False) -> str:
    mark = ' <span class="asterisk">*</span>' if required else ""
    return f'<div class="field"><label for="{ident}">{label}{mark}</label>{control}</div>'


def _gh_text(ident: str, name: str, label: str, required: bool = False, kind: str = "text") -> str:
    aria = ' aria-required="true"' if required else ""
    return _field(ident, label, f'<input type="{kind}" id="{ident}" name="{name}"{aria}>', required)


def _gh_answer(n: int, label: str, control: str, required: bool = False) -> str:
    hidden = (
        f'<input type="hidden" name="job_application[answers_attributes][{n}]'
        f'[question_id]" value="{3000 + n}">'
    )
    return _field(f"q{n}", label, control + hidden, required)


def _gh_bool(n: int, label: str) -> str:
    name = f"job_application[answers_attributes][{n}][boolean_value]"
    return _gh_answer(
        n,
        label,
        f'<select id="q{n}" name="{name}" aria-required="true">'
        '<option value="">--</option><option value="1">Yes</option>'
        '<option value="0">No</option></select>',
        required=True,
    )


# The suggestions a geocoder would offer; typing shows those holding the first word typed.
PLACES = ("Berlin, Germany", "Berlin, NH, United States", "Bern, Switzerland",
          "Hamburg, Germany", "Stockholm, Sweden")
_AUTOCOMPLETE_JS = """
const box = document.getElementById('job_application_location');
const list = document.getElementById('location-options');
const places = %s;
box.addEventListener('input', () => {
  const word = box.value.split(/[ ,]/)[0].toLowerCase();
  document.getElementById('location_place').value = '';
  list.innerHTML = '';
  places.filter(p => word && p.toLowerCase().includes(word)).forEach(p => {
    const li = document.createElement('li');
    li.setAttribute('role', 'option');
    li.textContent = p;
    li.addEventListener('click', () => {
      box.value = p;
      document.getElementById('location_place').value = 'place:' + p;
      list.innerHTML = '';
    });
    list.appendChild(li);
  });
});
"""


def _gh_location() -> str:
    """Greenhouse's location question: typed text counts only once a suggestion is picked."""
    control = (
        '<input type="text" id="job_application_location" name="job_application[location]" '
        'role="combobox" aria-autocomplete="list" aria-controls="location-options" '
        'aria-required="true" autocomplete="off">'
        '<input type="hidden" id="location_place" name="job_application[location_place]">'
        '<ul id="location-options" role="listbox"></ul>'
        f"<script>{_AUTOCOMPLETE_JS % (list(PLACES),)}</script>"
    )
    return _field("job_application_location", "Location (City)", control, True)


def _gh_eeoc(n: int, label: str, options: tuple[str, ...]) -> str:
    name = f"job_application[demographic_answers][{n}]"
    choices = "".join(f'<option value="{n}{i}">{o}</option>' for i, o in enumerate(options))
    return _field(f"eeoc{n}", label, f'<select id="eeoc{n}" name="{name}">'
                  f'<option value="">Please select</option>{choices}</select>')


def greenhouse_form(path: str, job_id: str, changed: bool) -> str:
    """A Greenhouse-hosted job page: description, then `#application_form`."""
    answers = "job_application[answers_attributes]"
    parts = [
        f'<input type="hidden" name="authenticity_token" value="{secrets.token_hex(8)}">',
        _gh_text("first_name", "job_application[first_name]", "First Name", True),
        _gh_text("last_name", "job_application[last_name]", "Last Name", True),
        _gh_text("email", "job_application[email]", "Email", True, "email"),
        _gh_text("phone", "job_application[phone]", "Phone", False, "tel"),
        _gh_text("preferred_name", "job_application[preferred_name]", "Preferred First Name"),
        _gh_location(),
        _gh_text("resume", "job_application[resume]", "Resume/CV", True, "file"),
        _gh_text("cover_letter", "job_application[cover_letter]", "Cover Letter", False, "file"),
        _gh_answer(
            0, "LinkedIn Profile", f'<input type="text" id="q0" name="{answers}[0][text_value]">'
        ),
        _gh_bool(1, "Are you legally authorized to work in Germany?"),
        _gh_bool(
            2,
            "Will you now or in the future require sponsorship for employment "
            "visa status (e.g. H-1B)?",
        ),
        _gh_answer(
            3,
            "What is your notice period?",
            f'<input type="text" id="q3" name="{answers}[3][text_value]" aria-required="true">',
            required=True,
        ),
        _gh_answer(
            4,
            "What are your salary expectations?",
            f'<input type="text" id="q4" name="{answers}[4][text_value]">',
        ),
        '<fieldset class="field"><legend>Which of these have you run in production?</legend>'
        + "".join(
            f'<label><input type="checkbox" name="{answers}[5][answer_selected_options_'
            f'attributes][][question_option_id]" value="{v}">{t}</label>'
            for v, t in (("71", "Kafka"), ("72", "Cassandra"), ("73", "Kubernetes"))
        )
        + "</fieldset>",
        _gh_answer(
            6,
            "How did you hear about this job?",
            f'<input type="text" id="q6" name="{answers}[6][text_value]">',
        ),
        '<fieldset class="field"><legend>Pronouns</legend>'
        + "".join(
            f'<label><input type="radio" name="{answers}[7][text_value]" value="{v}">{v}</label>'
            for v in ("He/him", "She/her", "They/them")
        )
        + "</fieldset>",
        _gh_eeoc(0, "Gender", ("Male", "Female", "Non-binary", "I don't wish to answer")),
        _gh_eeoc(1, "Veteran Status", ("I am a protected veteran",
                                       "I am not a protected veteran", "Decline To Self Identify")),
    ]
    if job_id == GREENHOUSE_EXTRA_QUESTION:
        parts.append(
            _gh_answer(
                8,
                "Why do you want to join Nordwind?",
                f'<textarea id="q8" name="{answers}[8][text_value]" '
                'aria-required="true"></textarea>',
                required=True,
            )
        )
    if changed:
        parts.append(_gh_bool(9, "Are you willing to relocate to Hamburg?"))
    form = "".join(parts)
    return page(
        "Senior Backend Engineer at Nordwind Energie GmbH",
        '<div id="content"><h1 class="app-title">Senior Backend Engineer</h1>'
        "<p>Our backend runs on Python and PostgreSQL.</p></div>"
        f'<div id="application"><form id="application_form" method="post" action="{path}" '
        f'enctype="multipart/form-data">{form}'
        '<input type="submit" id="submit_app" value="Submit Application"></form></div>',
    )


def _lever_question(label: str, control: str, required: bool = False) -> str:
    mark = '<span class="required">✱</span>' if required else ""
    return (
        f'<li class="application-question"><label><div class="application-label">{label}'
        f'{mark}</div><div class="application-field">{control}</div></label></li>'
    )


def _lever_card(field_no: int, label: str, control: str) -> str:
    return (
        f'<li class="application-question custom-question"><div class="application-label">'
        f'<div class="text">{label}<span class="required">✱</span></div></div>'
        f'<div class="application-field">{control}</div></li>'
    )


def lever_form(path: str, error: str = "", changed: bool = False) -> str:
    """A Lever-hosted apply page (jobs.lever.co/{company}/{id}/apply)."""
    card = f"cards[{CARD}]"
    radios = "".join(
        f'<li><label><input type="radio" name="{card}[field0]" value="{v}" required>'
        f"<span>{v}</span></label></li>"
        for v in ("Yes", "No")
    )
    notice = "".join(
        f"<option>{v}</option>"
        for v in ("Immediately", "1 month", "2 months", "3 months", "More than 3 months")
    )
    pronouns = "".join(
        f'<li><label><input type="checkbox" name="pronouns" value="{v}">{v}</label></li>'
        for v in ("He/him", "She/her", "They/them", "Xe/xem")
    )
    questions = [
        _lever_question("Resume/CV", '<input type="file" name="resume" required>', True),
        _lever_question("Full name", '<input type="text" name="name" required>', True),
        _lever_question("Email", '<input type="email" name="email" required>', True),
        _lever_question("Phone", '<input type="text" name="phone">'),
        _lever_question("Current location", '<input type="text" name="location">'),
        _lever_question("Current company", '<input type="text" name="org">'),
        _lever_question("LinkedIn URL", '<input type="text" name="urls[LinkedIn]">'),
        _lever_question("GitHub URL", '<input type="text" name="urls[GitHub]">'),
        _lever_question("Portfolio URL", '<input type="text" name="urls[Portfolio]">'),
        '<li class="application-question"><div class="application-label">Pronouns</div>'
        f"<ul>{pronouns}</ul></li>",
        _lever_card(0, "Are you authorized to work in the EU?", f"<ul>{radios}</ul>"),
        _lever_card(
            1,
            "What is your notice period?",
            f'<select name="{card}[field1]" required><option value="">Select…</option>'
            f"{notice}</select>",
        ),
        _lever_question(
            "Additional information",
            '<textarea name="comments" placeholder="Add a cover letter or anything '
            'else you want to share."></textarea>',
        ),
    ]
    if changed:
        questions.append(
            _lever_card(
                2,
                "Can you work from our Stockholm office once a month?",
                f'<input type="text" name="{card}[field2]" required>',
            )
        )
    banner = f'<div class="error" role="alert">{error}</div>' if error else ""
    return page(
        "Fjord Analytics – Platform Engineer",
        f'{banner}<form id="application-form" class="application-form" method="POST" '
        f'action="{path}" enctype="multipart/form-data"><h4>Submit your application</h4>'
        f"<ul>{''.join(questions)}</ul>"
        '<button type="submit" id="btn-submit" class="template-btn-submit">Submit application'
        "</button></form>",
    )


def generic_form(path: str, changed: bool = False) -> str:
    """A careers page with no known layout: only the labels tell what each field wants."""
    rows = [
        '<p><label for="f1">Your full name</label><input id="f1" name="applicant" required></p>',
        '<p><label for="f2">E-mail address</label><input id="f2" name="contact" type="email" '
        "required></p>",
        '<p><label for="f3">Mobile phone</label><input id="f3" name="tel" type="tel"></p>',
        '<p><label for="f4">Where are you based?</label><input id="f4" name="town"></p>',
        '<p><label for="f5">Upload your CV</label><input id="f5" type="file" name="doc1" '
        "required></p>",
        '<p><label for="f6">Cover letter</label>'
        '<textarea id="f6" name="motivation"></textarea></p>',
        '<p><label for="f7">Do you need visa sponsorship?</label><select id="f7" name="visa">'
        "<option value=''>Choose…</option><option>Yes</option><option>No</option></select></p>",
        "<fieldset><legend>Are you allowed to work in the EU?</legend>"
        '<label><input type="radio" name="eu" value="y">Yes</label>'
        '<label><input type="radio" name="eu" value="n">No</label></fieldset>',
        '<p><label for="f8">Notice period</label><input id="f8" name="notice"></p>',
        '<p><label><input type="checkbox" name="privacy" value="agreed" required> I have read '
        "the privacy notice *</label></p>",
    ]
    if changed:
        rows.append('<p><label for="f9">Desired start date</label><input id="f9" name="start"></p>')
    return page(
        "Acme careers – apply",
        f'<h1>Apply to Acme</h1><form method="post" '
        f'action="{path}" enctype="multipart/form-data">{"".join(rows)}'
        '<button type="submit">Send application</button></form>',
    )


def page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"</head><body>{body}</body></html>"
    )
