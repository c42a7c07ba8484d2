"""Checkout at a commit with real git, and the payload's checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from workloads.builds.git import (
    CheckoutError,
    Source,
    checkout,
    shown_repository,
    source_from_payload,
)

from .conftest import Repo, git


async def test_checkout_detaches_at_an_older_commit_and_replaces_a_stale_workspace(
        repo: Repo, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "half-built.o").write_text("stale")
    head = await checkout(Source(str(repo.path), repo.first, "main"), ws, timeout=20)
    assert head == repo.first == git(ws, "rev-parse", "HEAD")
    assert (ws / "place.txt").read_text() == "first version"
    assert not (ws / "half-built.o").exists()


async def test_an_unknown_commit_fails_for_good(repo: Repo, tmp_path: Path) -> None:
    with pytest.raises(CheckoutError, match="is not in the repository") as info:
        await checkout(Source(str(repo.path), "0" * 40), tmp_path / "ws", timeout=20)
    assert not info.value.retryable


@pytest.mark.parametrize(("payload", "message"), [
    ({"commit": "a" * 40}, "repository"),
    ({"repository": "--upload-pack=touch /tmp/x", "commit": "a" * 40}, "must not start"),
    ({"repository": "ext::sh -c touch% /tmp/x", "commit": "a" * 40}, "must not start"),
    ({"repository": "/r", "commit": "abc123"}, "full hexadecimal"),
    ({"repository": "/r", "commit": "a" * 40, "branch": "-x"}, "plain branch"),
    ({"repository": "/r", "commit": "a" * 40, "branch": "a/../b"}, "plain branch"),
])
def test_bad_payloads_are_refused(payload: dict[str, str], message: str) -> None:
    with pytest.raises(CheckoutError, match=message):
        source_from_payload(payload)


def test_credentials_in_a_url_are_not_shown() -> None:
    assert shown_repository("https://bot:ghp_secret@github.com/o/r.git") == \
        "https://github.com/o/r.git"
    assert shown_repository("/srv/git/game") == "/srv/git/game"
    # git's own messages (older versions do not redact them) go through it too.
    assert shown_repository("fatal: repository 'https://bot:tok@h.example/r/' not found") == \
        "fatal: repository 'https://h.example/r/' not found"
