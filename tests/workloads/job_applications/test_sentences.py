"""The sentence splitter: abbreviations never end a sentence, real full stops do."""

from __future__ import annotations

import pytest

from workloads.job_applications.sentences import split_sentences


@pytest.mark.parametrize("text", [
    "A Ph.D. in ML or a related field is required.",
    "U.S. citizens only, sorry.",
    "Languages (e.g. Python, Go, Rust) and tools (i.e. the usual ones).",
    "Python, Go, etc. are welcome.",
    "Dr. Weber and Prof. Ng lead Acme Inc. in Berlin.",
    "An M.Sc. or B.A. in any field and J. Smith's approval.",
    "Meet at 9 a.m. on Monday.",
])
def test_abbreviations_do_not_end_a_sentence(text: str) -> None:
    assert split_sentences(text) == [text]


def test_full_stops_question_marks_and_lines_do() -> None:
    text = "We build grids. Do you like Go? We hire in the U.S. The team is small.\nApply now!"
    assert split_sentences(text) == ["We build grids.", "Do you like Go?", "We hire in the U.S.",
                                     "The team is small.", "Apply now!"]
    assert split_sentences("Python, Go, etc. We pay well.") == ["Python, Go, etc.",
                                                                "We pay well."]


def test_clauses_also_cut_at_semicolons_and_bullets() -> None:
    text = "EU work authorization required; German at B2 • Python"
    assert split_sentences(text) == [text]
    assert split_sentences(text, clauses=True) == ["EU work authorization required;",
                                                    "German at B2 •", "Python"]
