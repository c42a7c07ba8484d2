"""The README's first example runs as written: its handler module and config file, saved
where it says, and its commands run in a shell's order against a real database."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taskqueue import TaskQueue
from tests.timing import limit

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text("utf-8")
pytestmark = pytest.mark.slow


def _block(lang: str, marker: str) -> str:
    for body in re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S):
        if marker in body:
            return str(body)
    raise AssertionError(f"the README has no {lang} block with {marker!r}")


def _commands() -> list[str]:
    return [line.split("#")[0].strip() for line in _block("sh", "signoff enqueue").splitlines()
            if line.strip()]


def _run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # The README's `signoff` is the venv's: the same module as `python -m taskqueue`.
    args = command.replace("signoff ", f"{sys.executable} -m taskqueue ", 1)
    return subprocess.run(args, shell=True, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60, check=False)


@pytest.fixture(params=["saved", "init"])
def app(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The README's files, saved by hand from its text, or written by `signoff init`."""
    if request.param == "init":
        made = _run(f"signoff init {tmp_path}", tmp_path, dict(os.environ))
        assert made.returncode == 0, made.stderr
        return tmp_path
    handler = _block("python", "# mywork/greetings.py")
    (tmp_path / "mywork").mkdir()
    (tmp_path / "mywork" / "greetings.py").write_text(handler)
    (tmp_path / "signoff.toml").write_text(_block("toml", "[capabilities.greet]"))
    return tmp_path


def test_init_writes_the_readme_example_exactly() -> None:
    from taskqueue.cli.init import packaged

    assert packaged("greetings.py.txt") == _block("python", "# mywork/greetings.py")
    assert packaged("signoff.toml") == _block("toml", "[capabilities.greet]")
    assert packaged("signoff.example.toml") == (ROOT / "signoff.example.toml").read_text()


async def test_the_first_example_runs_as_written(app: Path, dsn: str, queue: TaskQueue) -> None:
    env = os.environ | {"DATABASE_URL": dsn}
    enqueue, worker, ls, show, approve, show_again = _commands()
    done = _run(enqueue, app, env)
    assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr
    assert done.stderr == ""  # the config's settings are written: no "no settings" warning
    cmd = worker.replace("signoff ", f"{sys.executable} -m taskqueue ", 1).split()
    with (app / "worker.log").open("wb") as log:
        proc = subprocess.Popen(cmd, cwd=app, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + limit(30)
        while (await queue.task_get(1)).status != "needs_approval":
            assert time.monotonic() < deadline and proc.poll() is None, "the worker stopped"
            await asyncio.sleep(0.2)
        listed = _run(ls, app, env)
        assert "needs_approval" in listed.stdout
        assert "Send this greeting?" in _run(show, app, env).stdout
        assert _run(approve, app, env).returncode == 0
        while (await queue.task_get(1)).status != "succeeded":
            assert time.monotonic() < deadline, "the approved task did not finish"
            await asyncio.sleep(0.2)
        shown = _run(show_again, app, env).stdout
        assert "status:      succeeded" in shown
        assert "result:\n  sent: Dear Ada, thank you!" in shown
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0


def test_the_documented_config_error_is_the_real_one(app: Path) -> None:
    config = app / "signoff.toml"
    config.write_text(config.read_text().replace('mode = "pool"', 'mode = "tock"'))
    expected = re.search(r"\$ (signoff worker [^\n]+)\n    (signoff: [^\n]+)", README)
    assert expected is not None
    done = _run(expected[1], app, os.environ | {"DATABASE_URL": "postgresql://unused"})
    assert done.returncode == 1 and done.stderr == expected[2] + "\n"


def test_the_readme_stays_short() -> None:
    assert len(README.splitlines()) <= 300


async def test_the_any_agent_curl_example_runs_as_written(dsn: str, queue: TaskQueue) -> None:
    from bot.api.settings import ApiSettings
    from tests.bot.api.conftest import serve_api

    block = _block("sh", "curl -s localhost:8080")
    runner, _, port = await serve_api(queue, ApiSettings(), {})
    script = block.replace("signoff ", f"{sys.executable} -m taskqueue ").replace(
        "localhost:8080", f"localhost:{port}")
    try:
        proc = await asyncio.create_subprocess_exec(
            "bash", "-euo", "pipefail", "-c", script, env=os.environ | {"DATABASE_URL": dsn},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not await queue.approval_list_open():
            assert time.monotonic() < deadline and proc.returncode is None, "nothing asked"
            await asyncio.sleep(0.2)
        await asyncio.sleep(0.5)  # the second curl long-polls by now, or soon
        await queue.approval_decide_for_task(1, "approved", "ada")
        out, err = await asyncio.wait_for(proc.communicate(), 90)
        assert proc.returncode == 0, err.decode()
    finally:
        await runner.cleanup()
    decoder, text, docs = json.JSONDecoder(), out.decode().strip(), []
    while text:  # curl prints each answer without a newline after it
        doc, end = decoder.raw_decode(text)
        docs.append(doc)
        text = text[end:].strip()
    assert [(d["id"], d["status"]) for d in docs] == [(1, "needs_approval"), (1, "approved")]
    assert docs[1]["decided_by"] == "ada"
