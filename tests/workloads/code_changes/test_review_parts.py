"""The pieces of the park and the pull request: the patch cut at the limit, the API's answers."""

from __future__ import annotations

import pytest

from workloads.code_changes.github import PullRequestError, open_pull_request
from workloads.code_changes.payload import BadPayload, parse_payload
from workloads.code_changes.review import patch_bytes
from workloads.code_changes.settings import GitHubSettings

from .fake_github import TOKEN, FakeGitHub


def test_a_patch_over_the_limit_is_cut_with_a_note_and_stays_utf8() -> None:
    raw = ("+é" * 600).encode() + b"\x00\xff"
    cut = patch_bytes(raw[:1000], size=len(raw), limit=1000)
    assert len(cut) <= 1000 and b"cut at 1000 bytes" in cut
    cut.decode("utf-8")  # no half characters, no NUL
    small = patch_bytes(b"+a\x00\xff\n", size=5)
    assert small == "+a\\0\ufffd\n".encode()


async def test_the_pull_request_is_opened_once_and_found_on_a_repeat(github: FakeGitHub) -> None:
    gh = GitHubSettings(api_url=github.base_url, token=TOKEN)
    first = await open_pull_request(gh, "acme/widgets", head="b", base="main", title="t",
                                    body="x")
    again = await open_pull_request(gh, "acme/widgets", head="b", base="main", title="t",
                                    body="x")
    assert (first.number, first.created) == (1, True)
    assert (again.number, again.url, again.created) == (1, first.url, False)
    assert github.creations == 1 and github.posts == 2


async def test_bad_credentials_fail_for_good_and_server_errors_are_retried(
        github: FakeGitHub) -> None:
    wrong = GitHubSettings(api_url=github.base_url, token="nope")
    with pytest.raises(PullRequestError) as err:
        await open_pull_request(wrong, "acme/widgets", head="b", base="main", title="t",
                                body="x")
    assert not err.value.retryable and "401" in str(err.value) and "nope" not in str(err.value)
    github.fail_next.append(502)
    good = GitHubSettings(api_url=github.base_url, token=TOKEN)
    with pytest.raises(PullRequestError) as err:
        await open_pull_request(good, "acme/widgets", head="b", base="main", title="t",
                                body="x")
    assert err.value.retryable and github.creations == 0
    with pytest.raises(PullRequestError, match="SIGNOFF_GITHUB_TOKEN"):
        await open_pull_request(GitHubSettings(api_url=github.base_url), "acme/widgets",
                                head="b", base="main", title="t", body="x")


def test_the_payload_allowlist_and_defaults() -> None:
    p = parse_payload({"repo": "https://github.com/acme/w.git", "instruction": "Fix it\nmore"},
                      max_instruction_bytes=100, allowed_repos=("https://github.com/acme/*",))
    assert (p.base, p.title) == ("main", "Fix it")
    with pytest.raises(BadPayload, match="allowed_repos"):
        parse_payload({"repo": "https://evil.example/x.git", "instruction": "x"},
                      max_instruction_bytes=100, allowed_repos=("https://github.com/acme/*",))
