"""The draft and compile stages: the model drafter's retries and fallback, the 2-page CV."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from playwright.async_api import Browser

from taskqueue import Status, TaskQueue
from workloads.job_applications.handler import make_handler
from workloads.job_applications.model_drafter import ModelConfig
from workloads.job_applications.settings import JobSettings

from .conftest import EXAMPLE_PROFILE
from .fake_form_pages import GREENHOUSE_OK
from .fake_site import FakeSite
from .pipeline import CAP, backdate, drain, greenhouse_payload, tick


def _with_model(settings: JobSettings, site: FakeSite) -> JobSettings:
    model = ModelConfig(site.url("/v1"), "sk-test", "fake-model", timeout=5)
    return dataclasses.replace(settings, model=model)


async def _retry_now(queue: TaskQueue, task_id: int) -> None:
    await backdate(queue, "UPDATE tasks SET run_after = now() WHERE id = %s", task_id)


async def test_a_failing_model_is_retried_with_its_state_kept_then_used(
    queue: TaskQueue, site: FakeSite, settings: JobSettings
) -> None:
    handler = make_handler(_with_model(settings, site))
    task_id = (await queue.task_enqueue(CAP, greenhouse_payload(site, GREENHOUSE_OK))).id
    site.model.mode = "error"
    assert (await tick(queue, handler)).outcome == "failed"
    task = await queue.task_get(task_id)
    assert task.status == Status.PENDING and task.attempts == 1
    assert "model drafter failed" in (task.last_error or "") and "draft" not in task.state

    site.model.mode = "ok"
    await _retry_now(queue, task_id)
    assert (await tick(queue, handler)).outcome == "released"
    task = await queue.task_get(task_id)
    assert task.state["drafter"] == "model:fake-model" and task.state["stage"] == "compile"
    assert "drafter_note" not in task.state
    assert site.model.requests[-1]["authorization"] == "Bearer sk-test"


@pytest.mark.slow
async def test_a_model_that_always_fails_gives_way_to_the_deterministic_drafter(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, browser: Browser
) -> None:
    handler = make_handler(_with_model(settings, site), browser=browser)
    task_id = (await queue.task_enqueue(CAP, greenhouse_payload(site, GREENHOUSE_OK))).id
    site.model.mode = "placeholder"  # answers, but with a letter that fails the checks
    for _ in range(2):
        assert (await tick(queue, handler)).outcome == "failed"
        await _retry_now(queue, task_id)
    await drain(queue, handler)  # the last attempt: deterministic, then compile, fill, park
    task = await queue.task_get(task_id)
    assert task.status == Status.NEEDS_APPROVAL and task.approval is not None
    request = task.approval.request
    assert request["drafter"] == "deterministic"
    assert "model drafter failed on the last attempt" in request["drafter_note"]
    assert "placeholder" in request["drafter_note"]
    assert len(site.model.requests) == 3


def _long_profile(folder: Path) -> Path:
    """The example profile with six more jobs of six long bullets each: over two pages."""
    extra = []
    for n in range(6):
        extra.append(f'\n[[experience]]\ncompany = "Firma {n} & Söhne"\ntitle = "Engineer"\n'
                     f'start = "201{n}-01"\nend = "201{n}-12"\nlocation = "Berlin"\n')
        for b in range(6):
            text = f"Bullet {b} of job {n}: " + (
                "Built and operated Python services on PostgreSQL for a very large "
                "logistics platform, with careful migrations. " * 4)
            extra.append(f'\n[[experience.bullets]]\ntext = "{text}"\nskills = ["Python"]\n')
    text = EXAMPLE_PROFILE.read_text("utf-8")
    head, sep, tail = text.partition("\n[skills]")
    path = folder / "long_profile.toml"
    path.write_text(head + "".join(extra) + sep + tail, "utf-8")
    return path


@pytest.mark.slow
async def test_a_cv_too_long_for_two_pages_is_shortened_before_it_is_shown(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, tmp_path: Path
) -> None:
    settings = dataclasses.replace(settings, profile=_long_profile(tmp_path))
    handler = make_handler(settings)
    task_id = (await queue.task_enqueue(CAP, greenhouse_payload(site, GREENHOUSE_OK))).id
    assert (await tick(queue, handler)).outcome == "released"  # drafted
    assert (await tick(queue, handler)).outcome == "released"  # compiled
    task = await queue.task_get(task_id)
    assert task.state["stage"] == "fill"
    assert task.state["cv"]["pages"] == 2 and task.state["cv"]["dropped_bullets"] > 0
    pdf = (settings.artifacts / task.state["cv"]["sha256"][:2] / task.state["cv"]["sha256"])
    assert pdf.read_bytes().startswith(b"%PDF-")
