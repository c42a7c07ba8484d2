"""Fixtures for the build workloads: a real git repository, stand-in tools, fake Open Cloud."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from workloads.builds.settings import BuildSettings

from .fake_open_cloud import KEY, FakeOpenCloud, running_cloud

HERE = Path(__file__).resolve().parent
FAKE_BUILD = str(HERE / "fake_build.py")
FAKE_UPLOAD = str(HERE / "fake_upload.py")
ASC = {"SIGNOFF_ASC_KEY_ID": "KEYID123", "SIGNOFF_ASC_ISSUER_ID": "issuer-1",
       "SIGNOFF_ASC_KEY_PATH": "/secret/AuthKey_KEYID123.p8"}


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                         text=True, env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                                         "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                                         "HOME": str(repo), "PATH": "/usr/bin:/bin"})
    return out.stdout.strip()


class Repo:
    """A repository with commits `first` and `second` on main (second is the tip)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir()
        git(path, "init", "-q", "-b", "main")
        self.first = self.commit("first version")
        self.second = self.commit("second version")

    def commit(self, text: str) -> str:
        (self.path / "place.txt").write_text(text)
        git(self.path, "add", "place.txt")
        git(self.path, "commit", "-q", "-m", text)
        return git(self.path, "rev-parse", "HEAD")

    def payload(self, commit: str | None = None, **extra: Any) -> dict[str, Any]:
        return {"repository": str(self.path), "commit": commit or self.second,
                "branch": "main", **extra}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


@pytest.fixture
async def cloud(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeOpenCloud]:
    monkeypatch.setenv("SIGNOFF_ROBLOX_API_KEY", KEY)
    async with running_cloud() as fake:
        yield fake


def build_command(mode: str, name: str, count: Path) -> tuple[str, ...]:
    return (sys.executable, FAKE_BUILD, mode, f"{{output}}/{name}", str(count))


@pytest.fixture
def roblox_settings(tmp_path: Path, cloud: FakeOpenCloud) -> Callable[..., BuildSettings]:
    """Settings for roblox_build against the fake cloud; `mode` picks the stand-in's mood."""

    def make(mode: str = "fast", **changes: Any) -> BuildSettings:
        base = BuildSettings(
            capability="roblox_build",
            command=build_command(mode, "place.rbxlx", tmp_path / "builds.count"),
            artifacts=("*.rbxl", "*.rbxlx"), work_dir=tmp_path / "work",
            store=tmp_path / "store", timeout=20, git_timeout=20, base_url=cloud.url,
            universe_id=111, place_id=222, retry_after_cap=0.2, publish_timeout=5)
        return replace(base, **changes)

    return make


@pytest.fixture
def ios_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                 ) -> Callable[..., BuildSettings]:
    for name, value in ASC.items():
        monkeypatch.setenv(name, value)

    def make(mode: str = "fast", upload: tuple[str, ...] = (), **changes: Any) -> BuildSettings:
        base = BuildSettings(
            capability="ios_build",
            command=build_command(mode, "App.ipa", tmp_path / "builds.count"),
            artifacts=("*.ipa", "*.dSYM.zip"), work_dir=tmp_path / "work",
            store=tmp_path / "store", timeout=20, git_timeout=20,
            upload_command=(sys.executable, FAKE_UPLOAD, str(tmp_path / "uploads.count"),
                            "{artifact}", *upload), upload_timeout=10)
        return replace(base, **changes)

    return make


def builds_started(tmp_path: Path) -> int:
    path = tmp_path / "builds.count"
    return len(path.read_text().splitlines()) if path.exists() else 0
