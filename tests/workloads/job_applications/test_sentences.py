"""The sentence splitter: abbreviations never end a sentence, real full stops do."""

from __future__ import annotations

import pytest

from workloads.job_applications.sentences import split_sentences

# Each case: posting or letter text and the sentences it must come out as.
_CASES: list[tuple[str, list[str]]] = [
    # Abbreviations followed by a capitalised name, noun or subject: one sentence.
    ("A Ph.D. Machine Learning background is required. Apply now.",
     ["A Ph.D. Machine Learning background is required.", "Apply now."]),
    ("A Ph.D. in ML or a related field is required.",
     ["A Ph.D. in ML or a related field is required."]),
    ("An M.Sc. Computer Science degree or equivalent experience.",
     ["An M.Sc. Computer Science degree or equivalent experience."]),
    ("A B.Sc. Or M.Sc. Physics Degree Is A Plus.", ["A B.Sc. Or M.Sc. Physics Degree Is A Plus."]),
    ("Experience with U.S. Federal regulations (HIPAA, SOX) is required.",
     ["Experience with U.S. Federal regulations (HIPAA, SOX) is required."]),
    ("Veterans of the U.S. Army are encouraged to apply.",
     ["Veterans of the U.S. Army are encouraged to apply."]),
    ("U.S. citizens only, sorry.", ["U.S. citizens only, sorry."]),
    ("Offices in the U.K. Midlands and London.", ["Offices in the U.K. Midlands and London."]),
    ("Remote within the U.S. IT security clearance is a plus.",
     ["Remote within the U.S. IT security clearance is a plus."]),
    ("Cloud tools (e.g. Terraform, Pulumi) and languages (i.e. Go).",
     ["Cloud tools (e.g. Terraform, Pulumi) and languages (i.e. Go)."]),
    ("Python, Go, etc. Kubernetes experience helps.",
     ["Python, Go, etc. Kubernetes experience helps."]),
    ("Python, Go, etc. are welcome.", ["Python, Go, etc. are welcome."]),
    ("Acme Inc. Berlin is our headquarters.", ["Acme Inc. Berlin is our headquarters."]),
    ("Report to Dr. Weber and Prof. Ng in the data team.",
     ["Report to Dr. Weber and Prof. Ng in the data team."]),
    ("Interviews with Prof. An and Dr. Le, or Mrs. Smith.",
     ["Interviews with Prof. An and Dr. Le, or Mrs. Smith."]),
    ("Hiring manager: J. Smith, VP Engineering.", ["Hiring manager: J. Smith, VP Engineering."]),
    ("Prof. J. A. Smith leads the lab.", ["Prof. J. A. Smith leads the lab."]),
    ("Kotlin vs. Java is your choice.", ["Kotlin vs. Java is your choice."]),
    # "ms" after a number is milliseconds, which can end a sentence; "Ms." is still a title.
    ("A p99 latency under 80 ms. At Fjord I built it.",
     ["A p99 latency under 80 ms.", "At Fjord I built it."]),
    ("Ask Ms. Berg about it.", ["Ask Ms. Berg about it."]),
    ("Offices in St. Louis and Austin, approx. 40 hours a week.",
     ["Offices in St. Louis and Austin, approx. 40 hours a week."]),
    ("Quote job No. 4711 in your application.", ["Quote job No. 4711 in your application."]),
    ("We are hiring a Sr. Backend Engineer.", ["We are hiring a Sr. Backend Engineer."]),
    ("Standup at 9 a.m. Berlin time.", ["Standup at 9 a.m. Berlin time."]),
    # Real sentence ends, also after abbreviations a sentence can stop on.
    ("We use Python. The team is small.", ["We use Python.", "The team is small."]),
    ("We hire in the U.S. The team is remote.", ["We hire in the U.S.", "The team is remote."]),
    ("Python, Go, etc. We pay well.", ["Python, Go, etc.", "We pay well."]),
    ("Founded by Acme Inc. Our mission is clean energy.",
     ["Founded by Acme Inc.", "Our mission is clean energy."]),
    ("A Ph.D. is required. Apply with your CV.", ["A Ph.D. is required.", "Apply with your CV."]),
    ("You hold a Ph.D. Please attach your transcript.",
     ["You hold a Ph.D.", "Please attach your transcript."]),
    ("Our services are written in C. We also use Go.",
     ["Our services are written in C.", "We also use Go."]),
    ("Visa sponsorship: No. Relocation: yes.", ["Visa sponsorship: No.", "Relocation: yes."]),
    ("You hold a BS or MS. Python is a plus.", ["You hold a BS or MS.", "Python is a plus."]),
    ("Standup is at 9 a.m. If you are remote, join by video.",
     ["Standup is at 9 a.m.", "If you are remote, join by video."]),
    ("We ship with Vue.js. Python runs the backend.",
     ["We ship with Vue.js.", "Python runs the backend."]),
    ("We build grids. Do you like Go? We hire in the U.S. The team is small.\nApply now!",
     ["We build grids.", "Do you like Go?", "We hire in the U.S.", "The team is small.",
      "Apply now!"]),
    # Closing quotes and brackets stay with the sentence they close.
    ('We say "ship it." Then we do.', ['We say "ship it."', "Then we do."]),
    ("Tools (Python, Go, etc.) The rest you learn here.",
     ["Tools (Python, Go, etc.)", "The rest you learn here."]),
    ("Learning budget (Coursera, books, etc.) We review it yearly.",
     ["Learning budget (Coursera, books, etc.)", "We review it yearly."]),
    # A new line always ends a sentence, even after an abbreviation.
    ("Requirements: Ph.D.\nMachine learning experience",
     ["Requirements: Ph.D.", "Machine learning experience"]),
]


@pytest.mark.parametrize(("text", "expected"), _CASES, ids=[c[0][:40] for c in _CASES])
def test_split_sentences_cuts_at_sentence_ends_only(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_clauses_also_cut_at_semicolons_and_bullets() -> None:
    text = "EU work authorization required; German at B2 • Python"
    assert split_sentences(text) == [text]
    assert split_sentences(text, clauses=True) == ["EU work authorization required;",
                                                    "German at B2 •", "Python"]


def test_clauses_keep_abbreviations_whole() -> None:
    text = "A Ph.D. Machine Learning background is required; U.S. Work authorization too."
    assert split_sentences(text, clauses=True) == [
        "A Ph.D. Machine Learning background is required;", "U.S. Work authorization too."]


def test_empty_and_blank_text_has_no_sentences() -> None:
    assert split_sentences("") == []
    assert split_sentences("  \n\n ") == []
