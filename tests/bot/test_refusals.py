"""The refusal words every channel shows: one text per reason the core turns a decision down."""

from __future__ import annotations

import pytest

from bot.refusals import EXPIRED, STRANGER, not_a_person, refusal_of
from taskqueue import (
    AlreadyApproved,
    AlreadyDecided,
    ApprovalExpired,
    Conflict,
    NotAnApprover,
    NotFound,
)


@pytest.mark.parametrize(("exc", "words"), [
    (NotAnApprover("not among approvers"), STRANGER),
    (AlreadyApproved(approved=1, required=2),
     "you already approved this (1 of 2); an approve counts once per person"),
    (AlreadyDecided(decision="skipped", decided_by="web:bob"), "this was already skipped by bob"),
    (AlreadyDecided(decision="approved", decided_by="telegram:7:Alice"),
     "this was already approved by Alice"),
    (ApprovalExpired("expired"), EXPIRED),
    (Conflict("the task is not parked"), "the task is not parked"),
    (NotFound("no such approval"), "no such approval"),
])
def test_each_refusal_has_one_text_for_every_channel(exc: Exception, words: str) -> None:
    assert refusal_of(exc) == words


def test_the_words_for_someone_no_person_names_say_which_key_to_set() -> None:
    assert not_a_person("account", "web_account") == (
        "your account is not one of the configured people ([people.NAME] web_account); "
        "nothing was recorded")
    assert STRANGER == "you are not on the list of people who may decide"
    assert EXPIRED == "this approval has expired; nothing was decided"
