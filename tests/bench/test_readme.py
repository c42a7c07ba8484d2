"""bench/README.md stays what a reader wants first: today's figures and how to run them, in at
most 150 lines; the journal of every run lives in bench/HISTORY.md, which it links."""

from __future__ import annotations

from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
MAX_LINES = 150


def test_the_readme_is_the_latest_table_and_how_to_run_in_at_most_150_lines() -> None:
    lines = (BENCH / "README.md").read_text("utf-8").splitlines()
    assert len(lines) <= MAX_LINES, (
        f"bench/README.md has {len(lines)} lines (at most {MAX_LINES}): keep the latest "
        "figures and how to run them there, and move the story of a run to bench/HISTORY.md")
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[:2] == ["## Latest figures", "## Run them"], headings


def test_the_journal_is_kept_and_linked() -> None:
    readme = (BENCH / "README.md").read_text("utf-8")
    history = (BENCH / "HISTORY.md").read_text("utf-8")
    assert "(HISTORY.md)" in readme
    assert "## Soak: retention" in history  # docs/deployment.md links it
