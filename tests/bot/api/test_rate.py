"""Each token's rate: past its burst, 429 with Retry-After; other tokens are not held."""

from __future__ import annotations

import pytest

from bot.api.settings import ApiSettings
from tests.bot.api.conftest import Api


@pytest.fixture
def api_settings() -> ApiSettings:
    return ApiSettings(rate_per_minute=6, burst=3)


async def test_a_token_past_its_rate_gets_429_with_retry_after(api: Api) -> None:
    token = await api.token("ci", None, ("read",))
    other = await api.token("other", None, ("read",))
    answers = [await api.call("GET", "/api/v1/tasks", token) for _ in range(4)]
    assert [a[0] for a in answers] == [200, 200, 200, 429]
    _, body, headers = answers[3]
    assert body["error"] == "rate_limited" and 1 <= int(headers["Retry-After"]) <= 10
    assert (await api.call("GET", "/api/v1/tasks", other))[0] == 200
