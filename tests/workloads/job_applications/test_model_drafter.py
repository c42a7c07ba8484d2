"""The model drafter against a local OpenAI-compatible endpoint."""

from __future__ import annotations

import pytest

from workloads.job_applications.boards import BoardConfig, Posting, parse_greenhouse
from workloads.job_applications.drafting import draft_deterministic
from workloads.job_applications.model_drafter import (
    DrafterError,
    ModelConfig,
    draft_with_model,
    validate_letter,
)
from workloads.job_applications.profile import Profile

from .fake_boards import greenhouse_jobs
from .fake_model import GOOD_LETTER
from .fake_site import FakeSite


@pytest.fixture(scope="module")
def posting() -> Posting:
    return parse_greenhouse(greenhouse_jobs("http://t"), BoardConfig("greenhouse", "nordwind"))[0]


def _config(site: FakeSite) -> ModelConfig:
    return ModelConfig(base_url=f"{site.base}/v1", api_key="sk-test-123", model="tiny-1", timeout=5)


async def test_model_writes_the_letter_and_orders_bullets(
    site: FakeSite, profile: Profile, posting: Posting
) -> None:
    draft = await draft_with_model(posting, profile, _config(site), feedback="shorter please")
    assert draft.cover_letter == tuple(GOOD_LETTER)
    assert draft.drafter == "model:tiny-1"
    assert draft.notes == ("the reviewer's note was given to the model",)
    # The fake picks the last four bullet ids (e2b0, e1b2, …) in reverse: the model chooses
    # and orders, but the bullet texts stay the profile's own.
    base = draft_deterministic(posting, profile, "shorter please")
    assert draft.bullet_count == 4
    assert sorted(b.rank for e in draft.entries for b in e.bullets) == [1, 2, 3, 4]
    assert draft.entries[2].bullets[0].rank == 1
    assert draft.entries[2].bullets[0].text == base.entries[2].bullets[0].text
    assert [b.rank for b in draft.entries[1].bullets] == [2, 3, 4]
    assert draft.entries[0].bullets == ()
    assert draft.skills == base.skills
    request = site.model.requests[0]
    assert request["authorization"] == "Bearer sk-test-123"
    assert request["body"]["model"] == "tiny-1"
    assert request["body"]["response_format"] == {"type": "json_object"}
    assert "Reviewer's note to honour: shorter please" in request["body"]["messages"][1]["content"]


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("error", "HTTP 500"),
        ("placeholder", "placeholder: '[Company]'"),
        ("not_json", "not JSON"),
        ("unknown_bullet", "unknown bullets: e9b9"),
        ("cuts_bullet", "a claim without its bullet's figures"),
        ("joins_bullets", "a claim joined to another bullet's object"),
        ("asks_unrequired", "\"asks for\" names 'Kafka'"),
        ("invents_numbers", "a number the profile does not give: '5'"),
        ("verbless", "a sentence without a verb: 'Backend engineer with nine years"),
    ],
)
async def test_model_failures_raise_drafter_error(
    site: FakeSite, profile: Profile, posting: Posting, mode: str, message: str
) -> None:
    site.model.mode = mode
    with pytest.raises(DrafterError, match=message.replace("[", r"\[").replace("]", r"\]")):
        await draft_with_model(posting, profile, _config(site))


async def test_unreachable_endpoint_is_a_drafter_error(profile: Profile, posting: Posting) -> None:
    config = ModelConfig(base_url="http://127.0.0.1:9/v1", api_key="k", model="m", timeout=2)
    with pytest.raises(DrafterError, match="ClientConnectorError"):
        await draft_with_model(posting, profile, config)


@pytest.mark.parametrize(
    ("letter", "message"),
    [
        ("not a list", "list of strings"),
        ([], "0 paragraphs"),
        (["Too short."], "characters"),
        (["x" * 1300, "y" * 100], "paragraph is 1300"),
        (["Dear {{ company }} team, " + "a" * 300], "placeholder"),
        (["I would love to join <Company Name>. " + "a" * 300], "placeholder"),
        (["TODO write the opening. " + "a" * 300], "placeholder"),
        (["a" * 1000] * 4, "4000 characters"),
    ],
)
def test_validate_letter_rejects_bad_output(letter: object, message: str) -> None:
    with pytest.raises(DrafterError, match=message):
        validate_letter(letter)


def test_validate_letter_accepts_a_real_letter() -> None:
    assert validate_letter([*GOOD_LETTER, "  "]) == tuple(GOOD_LETTER)
