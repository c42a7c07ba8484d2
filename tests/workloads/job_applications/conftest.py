"""Fixtures for the job-application workload: the example profile and the fake site."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser

from workloads.job_applications.boards import BoardConfig
from workloads.job_applications.browser import launch_browser
from workloads.job_applications.profile import Profile, load_profile
from workloads.job_applications.settings import JobSettings

from .fake_site import FakeSite, running_site

EXAMPLE_PROFILE = (
    Path(__file__).resolve().parents[3] / "workloads" / "job_applications" / "profile.example.toml"
)


@pytest.fixture(scope="session")
def profile() -> Profile:
    return load_profile(EXAMPLE_PROFILE)


@pytest.fixture
async def site() -> AsyncIterator[FakeSite]:
    async with running_site() as fake:
        yield fake


@pytest.fixture
def settings(site: FakeSite, tmp_path: Path) -> JobSettings:
    """Settings pointing at the fake boards, with artifacts in this test's folder."""
    return JobSettings(
        profile=EXAMPLE_PROFILE,
        boards=(
            BoardConfig("greenhouse", "nordwind", "Nordwind Energie GmbH", site.url("/gh")),
            BoardConfig("lever", "fjord", "Fjord Analytics", site.url("/lever-api")),
        ),
        artifacts=tmp_path / "artifacts",
        browser_timeout=15,
        board_timeout=5,
    )


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """One Chromium for the whole test (each slice would otherwise launch its own)."""
    async with launch_browser() as shared:
        yield shared
