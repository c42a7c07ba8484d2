"""A task's payload, checked strictly: the repository, the base branch, the instruction."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["BadPayload", "Payload", "parse_payload"]

MAX_REPO = 500
MAX_TITLE = 200
_KEYS = {"repo", "base", "instruction", "title", "github_repo"}
# Remote forms git understands without running anything: no `ext::`/`fd::` helpers.
_URL = re.compile(r"^(https?|ssh|git|file)://[^\s]+$")
_SCP = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[A-Za-z0-9._/~-]+$")
_BRANCH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$")
_OWNER_REPO = re.compile(r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$")


class BadPayload(ValueError):
    """The payload cannot be a code change (a bad key, type, size or form)."""


@dataclass(frozen=True)
class Payload:
    """What to change: `repo` (URL or absolute path), `base` branch, the `instruction`."""

    repo: str
    base: str
    instruction: str
    title: str
    github_repo: str | None = None


def parse_payload(raw: Any, *, max_instruction_bytes: int,
                  allowed_repos: tuple[str, ...] = ()) -> Payload:
    """The payload as a Payload, or BadPayload saying what is wrong."""
    if not isinstance(raw, dict):
        raise BadPayload("the payload must be an object")
    unknown = set(raw) - _KEYS
    if unknown:
        raise BadPayload(f"unknown payload keys: {', '.join(sorted(unknown))}")
    repo = _repo(raw.get("repo"), allowed_repos)
    base = raw.get("base", "main")
    if not isinstance(base, str) or not _branch_ok(base):
        raise BadPayload(f"base must be a plain branch name, not {str(base)[:80]!r}")
    instruction = _instruction(raw.get("instruction"), max_instruction_bytes)
    title = raw.get("title") or instruction.strip().splitlines()[0][:72]
    if not isinstance(title, str) or len(title) > MAX_TITLE or not _printable(title):
        raise BadPayload(f"title must be one line of at most {MAX_TITLE} characters")
    github_repo = raw.get("github_repo")
    if github_repo is not None and (not isinstance(github_repo, str)
                                    or not _OWNER_REPO.match(github_repo)):
        raise BadPayload("github_repo must look like owner/name")
    return Payload(repo, base, instruction, title.strip(), github_repo)


def _repo(value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_REPO:
        raise BadPayload(f"repo must be a URL or an absolute path of at most {MAX_REPO} chars")
    if not (_URL.match(value) or _SCP.match(value) or value.startswith("/")) \
            or not _printable(value) or "::" in value:
        raise BadPayload(f"repo {value[:80]!r} is not an https/ssh/git/file URL, "
                         "user@host:path or an absolute path")
    if allowed and not any(fnmatch.fnmatchcase(value, pattern) for pattern in allowed):
        raise BadPayload(f"repo {value[:80]!r} is not in workloads.code_changes.allowed_repos")
    return value


def _branch_ok(name: str) -> bool:
    return (bool(_BRANCH.match(name)) and ".." not in name and "//" not in name
            and not name.endswith(("/", ".lock", ".")) and "@{" not in name)


def _instruction(value: Any, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadPayload("instruction must be a non-empty string")
    size = len(value.encode("utf-8"))
    if size > limit:
        raise BadPayload(f"instruction is {size} bytes, over the limit of {limit}")
    if "\x00" in value:
        raise BadPayload("instruction must not contain NUL characters")
    return value


def _printable(text: str) -> bool:
    return all(ch.isprintable() for ch in text)


def web_url(repo: str) -> str | None:
    """A browsable address for the repository, when it is an http(s) URL."""
    if repo.startswith(("https://", "http://")):
        return repo.removesuffix(".git")
    return None
