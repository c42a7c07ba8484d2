"""The nightly scrape against the fake boards and real PostgreSQL, and `signoff stats`."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from taskqueue import ProducerJob, TaskQueue
from taskqueue.cli.main import main
from workloads.job_applications import producer
from workloads.job_applications.boards import BoardConfig
from workloads.job_applications.producer import nightly_scrape, scrape
from workloads.job_applications.profile import Profile
from workloads.job_applications.settings import JobSettings

from .fake_site import FakeSite
from .pipeline import CAP

EXPECTED_KEYS = [
    "greenhouse:nordwind:4012345", "lever:fjord:5f1c2a4e-8d7b-4c1e-9a3f-2b6d8e0f1a2c",
    "lever:fjord:7c2d4e6f-1a3b-4c5d-9e8f-0a1b2c3d4e5f", "greenhouse:nordwind:4012399"]


async def test_scrape_filters_ranks_and_enqueues_the_best_with_reasons_counted(
    queue: TaskQueue, settings: JobSettings, profile: Profile
) -> None:
    report = await scrape(queue, settings, profile, capability=CAP)
    assert (report.fetched, report.kept, report.rejected) == (8, 4, 4)
    assert report.filtered_by_reason == {
        "location: Zürich, Switzerland not accepted": 1, "seniority: principal": 1,
        "excluded keyword: crypto": 1, "seniority: junior": 1}
    assert sorted(e["key"] for e in report.enqueued) == sorted(EXPECTED_KEYS)
    tasks = await queue.task_list(capability=CAP)
    best = max(tasks, key=lambda t: t.priority)
    assert best.payload["score"] == best.priority and best.payload["top_terms"]
    assert best.payload["posting"]["company"] == "Nordwind Energie GmbH"
    assert await queue.task_list(capability=f"{CAP}.scrape") == []


async def test_one_failing_board_does_not_stop_the_other(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, profile: Profile
) -> None:
    broken = BoardConfig("greenhouse", "broken", "", site.url("/gh"))
    settings = dataclasses.replace(settings, boards=(broken, settings.boards[1]))
    report = await scrape(queue, settings, profile, capability=CAP)
    assert [e["board"] for e in report.board_errors] == ["greenhouse:broken"]
    assert "500" in report.board_errors[0]["error"]
    assert len(report.enqueued) == 2 and {e["company"] for e in report.enqueued} == {
        "Fjord Analytics"}


async def test_a_posting_is_never_enqueued_twice_even_after_it_ended(
    queue: TaskQueue, settings: JobSettings, profile: Profile
) -> None:
    first = await scrape(queue, settings, profile, capability=CAP)
    await queue.task_cancel(first.enqueued[0]["id"])  # its dedupe key is free in the queue
    again = await scrape(queue, dataclasses.replace(settings, top=1), profile, capability=CAP)
    assert again.enqueued == [] and again.already_known == 4
    assert len(await queue.task_list(capability=CAP)) == 4


async def test_top_n_caps_what_one_night_enqueues(
    queue: TaskQueue, settings: JobSettings, profile: Profile
) -> None:
    one = await scrape(queue, dataclasses.replace(settings, top=1), profile, capability=CAP)
    assert len(one.enqueued) == 1 and one.below_top == 3
    two = await scrape(queue, dataclasses.replace(settings, top=1), profile, capability=CAP)
    assert len(two.enqueued) == 1 and two.already_known == 1
    assert two.enqueued[0]["score"] <= one.enqueued[0]["score"]


def _config(settings: JobSettings, folder: Path) -> Path:
    boards = "".join(
        f'\n[[workloads.job_applications.boards]]\nkind = "{b.kind}"\ntoken = "{b.token}"\n'
        f'base_url = "{b.base_url}"\n' for b in settings.boards)
    path = folder / "signoff.toml"
    path.write_text(f'[workloads.job_applications]\nprofile = "{settings.profile}"\n{boards}',
                    "utf-8")
    return path


async def test_the_producer_reads_its_settings_from_the_config_file(
    queue: TaskQueue, settings: JobSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIGNOFF_CONFIG", str(_config(settings, tmp_path)))
    job = ProducerJob(queue, "nightly-scrape", CAP, nightly_scrape)
    report = await job.run_once(datetime(2026, 12, 1, 2, 30, tzinfo=UTC))
    assert (report.created, report.existing) == (4, 0)
    run = await queue.producer_run_get(CAP, "nightly-scrape", "2026-12-01")
    assert run is not None and run.report == report.report
    assert run.report is not None and run.report["filtered_by_reason"]["seniority: junior"] == 1
    # A restart after the nightly run: the same period enqueues nothing, stores no report.
    restarted = ProducerJob(queue, "nightly-scrape", CAP, nightly_scrape)
    same = await restarted.run_once(datetime(2026, 12, 1, 9, 0, tzinfo=UTC))
    assert (same.ran, same.created, same.existing) == (False, 0, 0)
    again = await job.run_once(datetime(2026, 12, 2, 2, 30, tzinfo=UTC))
    assert (again.created, again.existing) == (0, 4)


async def test_signoff_stats_prints_the_pipeline_as_json(
    queue: TaskQueue, dsn: str, settings: JobSettings, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SIGNOFF_CONFIG", str(_config(settings, tmp_path)))
    await ProducerJob(queue, "nightly-scrape", CAP, nightly_scrape).run_once()
    monkeypatch.setenv("DATABASE_URL", dsn)
    # The CLI runs its own event loop, so it gets a thread of its own.
    assert await asyncio.to_thread(main, ["stats", CAP, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["enqueued"] == 4 and doc["by_status"] == {"pending": 4}
    assert doc["filtered_by_reason"]["seniority: junior"] == 1
    assert doc["reports"]["runs"] == 1 and doc["read_at"]
    assert await asyncio.to_thread(main, ["stats", CAP]) == 0
    text = capsys.readouterr().out
    assert "filtered by reason:" in text and "seniority: principal" in text


POSTING_KEYS = {"key", "board", "company", "title", "outcome", "reasons", "score", "rank",
                "task_id"}


def _with_polaris(settings: JobSettings, site: FakeSite, **changes: object) -> JobSettings:
    polaris = BoardConfig("greenhouse", "polaris", "Polaris Systems", site.url("/gh"))
    return dataclasses.replace(settings, boards=(*settings.boards, polaris), **changes)


async def test_every_requirement_and_the_minimum_score_are_counted_per_reason_and_posting(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, profile: Profile
) -> None:
    report = await scrape(queue, _with_polaris(settings, site), profile, capability=CAP)
    counts = report.filtered_by_reason
    for reason in ("remote: restricted to US", "security clearance: required",
                   "degree: phd required", "language: French required",
                   "student: enrollment required", "work authorization: United States",
                   "salary: below 70000 EUR",  # the pay only the one-job view states
                   "score below min_score 1"):
        assert counts[reason] == 1, reason
    assert report.below_min_score == 1 and report.min_score == 1
    by_title = {p["title"]: p for p in report.postings}
    assert len(report.postings) == report.fetched == 19
    assert all(set(p) == POSTING_KEYS for p in report.postings)
    office = by_title["Office Manager"]
    assert (office["outcome"], office["score"], office["reasons"]) == (
        "below_min_score", 0, ["score below min_score 1"])
    phd = by_title["Research Engineer"]
    assert (phd["outcome"], phd["reasons"], phd["rank"], phd["task_id"]) == (
        "filtered", ["degree: phd required"], None, None)
    enqueued = [p for p in report.postings if p["outcome"] == "enqueued"]
    assert sorted(p["task_id"] for p in enqueued) == sorted(e["id"] for e in report.enqueued)
    assert [p["rank"] for p in enqueued] == sorted(p["rank"] for p in enqueued)
    assert "Office Manager" not in {e["role"] for e in report.enqueued}
    assert report.to_json()["postings"] == report.postings


async def test_min_score_zero_lets_an_unrelated_posting_through(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, profile: Profile
) -> None:
    report = await scrape(queue, _with_polaris(settings, site, min_score=0), profile,
                          capability=CAP)
    assert "Office Manager" in {e["role"] for e in report.enqueued}
    assert report.below_min_score == 0 and not any(
        r.startswith("score below") for r in report.filtered_by_reason)


async def test_the_per_posting_list_is_bounded_and_says_known_and_below_top(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, profile: Profile,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    await scrape(queue, dataclasses.replace(settings, top=1), profile, capability=CAP)
    again = await scrape(queue, dataclasses.replace(settings, top=1), profile, capability=CAP)
    outcomes = [p["outcome"] for p in again.postings if p["rank"] is not None]
    assert outcomes == ["known", "enqueued", "below_top", "below_top"]
    assert again.postings[2]["reasons"] == ["not among the top 1 new postings"]
    monkeypatch.setattr(producer, "MAX_POSTINGS", 3)
    monkeypatch.setattr(producer, "MAX_TITLE", 10)
    bounded = await scrape(queue, settings, profile, capability=CAP)
    assert len(bounded.postings) == 3 and bounded.postings_left_out == bounded.fetched - 3
    assert all(len(p["title"]) <= 10 for p in bounded.postings)


@pytest.mark.parametrize("status", [404, 410])
async def test_a_posting_whose_one_job_view_is_gone_is_not_enqueued(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, profile: Profile, status: int
) -> None:
    site.boards.view_gone["5010008"] = status  # still listed, its own page taken down
    report = await scrape(queue, _with_polaris(settings, site), profile, capability=CAP)
    by_title = {p["title"]: p for p in report.postings}
    gone = by_title["Senior PostgreSQL Engineer"]
    assert (gone["outcome"], gone["reasons"], gone["task_id"]) == (
        "filtered", ["posting gone"], None)
    assert report.filtered_by_reason["posting gone"] == 1
    assert "Senior PostgreSQL Engineer" not in {e["role"] for e in report.enqueued}
    assert by_title["Senior Data Engineer"]["outcome"] == "enqueued"  # the live ones still are


async def test_without_min_salary_the_one_job_view_is_not_read_and_the_posting_stays(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, profile: Profile
) -> None:
    site.boards.view_gone["5010008"] = 410
    no_pay = dataclasses.replace(profile, requirements=dataclasses.replace(
        profile.requirements, min_salary=None))
    report = await scrape(queue, _with_polaris(settings, site), no_pay, capability=CAP)
    assert "Senior PostgreSQL Engineer" in {e["role"] for e in report.enqueued}
    assert "posting gone" not in report.filtered_by_reason
