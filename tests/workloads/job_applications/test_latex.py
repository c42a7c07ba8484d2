"""LaTeX escaping, templates and real pdflatex builds with their page limits."""

from __future__ import annotations

import io
import re
import subprocess
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
from pypdf import PdfReader

from workloads.job_applications.boards import BoardConfig, Posting, parse_greenhouse
from workloads.job_applications.drafting import Draft, draft_deterministic
from workloads.job_applications.latex import (
    CompileError,
    PageLimitError,
    build_cover_letter,
    build_cv,
    compile_pdf,
    page_count,
    render_cover_letter,
    render_cv,
)
from workloads.job_applications.latex_escape import (
    PRINTABLE,
    escape_latex,
    latex_url,
    printable,
)
from workloads.job_applications.profile import Bullet, Contact, Experience, Link, Profile

from .fake_boards import LATEX_TITLE, greenhouse_jobs

SPECIALS = "\\ & % $ # _ { } ~ ^ < > [ ]"
UNICODE = "é ü ß – — “quoted” ‘single’ € £ ñ ø Å č ł ő ș ğ ı … • ™ © ° ½ ﬁ"


def _text(pdf: bytes) -> str:
    return " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)


@pytest.fixture(scope="module")
def latex_posting() -> Posting:
    jobs = parse_greenhouse(greenhouse_jobs("http://t"), BoardConfig("greenhouse", "nordwind"))
    return jobs[1]  # the one titled with every LaTeX special character


def test_escape_handles_every_special_in_one_pass() -> None:
    assert escape_latex(SPECIALS) == (
        r"\textbackslash{} \& \% \$ \# \_ \{ \} \textasciitilde{} \textasciicircum{} "
        r"\textless{} \textgreater{} {[} {]}"
    )
    # No double escaping: the braces of \textbackslash{} are not escaped again.
    assert escape_latex("\\{") == r"\textbackslash{}\{"
    assert escape_latex(r"\input{/etc/passwd}") == r"\textbackslash{}input\{/etc/passwd\}"
    assert escape_latex(42) == "42"


def test_unprintable_characters_fall_back() -> None:
    assert escape_latex(UNICODE) == UNICODE  # all printable as they are
    assert printable("→") == "→"  # TS1 has arrows
    assert printable("−") == "-"  # minus sign
    assert printable("Ｘ") == "X"  # fullwidth folds to ASCII
    assert escape_latex("＄5") == r"\$5"  # and a folded special is still escaped
    assert printable("ŉ") == "n"
    assert printable("Д") == "?"  # Cyrillic needs T2A: visible loss, not a failed build
    assert printable("😀") == "" and printable("\u200b") == ""
    assert escape_latex("line\nbreak\ttab") == "line break tab"


@pytest.mark.slow
async def test_every_printable_character_compiles() -> None:
    text = escape_latex("".join(sorted(PRINTABLE)) + " 😀 Дмитрий 中文 ＄ " + SPECIALS)
    tex = (
        "\\documentclass{article}\\usepackage[utf8]{inputenc}\\usepackage[T1]{fontenc}"
        "\\usepackage{lmodern}\\usepackage{textcomp}\\begin{document}"
        f"{text}\\end{{document}}"
    )
    assert page_count(await compile_pdf(tex)) >= 1


@pytest.mark.slow
async def test_cv_with_specials_and_unicode_compiles_to_a_real_pdf(
    profile: Profile, latex_posting: Posting
) -> None:
    contact = replace(profile.contact, name="Zoë Ågren-Müller", location="Zürich & Köln")
    weird = replace(
        profile.experience[0],
        company="R&D_Lab {Ünïcødé} #1",
        bullets=(Bullet(f"Cut cost 100% in $ — {SPECIALS} {UNICODE}", ("C#",)),),
    )
    odd = replace(
        profile,
        contact=contact,
        experience=(weird, *profile.experience[1:]),
        summary=f"Summary with {SPECIALS} and {UNICODE}.",
    )
    draft = draft_deterministic(latex_posting, odd)
    tex = render_cv(draft, odd)
    assert r"R\&D\_Lab \{Ünïcødé\} \#1" in tex
    result = await build_cv(draft, odd)
    assert result.pdf.startswith(b"%PDF") and result.pages == 1 and result.dropped == 0
    text = _text(result.pdf)
    for fragment in ("Zoë Ågren-Müller", "R&D_Lab", "100% in $", "Köln", "€"):
        assert fragment in text


@pytest.mark.slow
async def test_cover_letter_is_one_page(profile: Profile, latex_posting: Posting) -> None:
    draft = draft_deterministic(latex_posting, profile)
    tex = render_cover_letter(draft, profile, date(2026, 12, 1))
    assert "1 December 2026" in tex
    assert escape_latex(LATEX_TITLE) in tex
    pdf = await build_cover_letter(draft, profile, date(2026, 12, 1))
    assert page_count(pdf) == 1
    assert "Dear nordwind hiring team" in _text(pdf)


@pytest.mark.slow
async def test_too_long_cover_letter_is_an_error(profile: Profile, latex_posting: Posting) -> None:
    draft = draft_deterministic(latex_posting, profile)
    long = replace(draft, cover_letter=tuple(["A long paragraph that goes on. " * 30] * 6))
    with pytest.raises(PageLimitError, match="cover letter is 2 pages") as raised:
        await build_cover_letter(long, profile)
    assert raised.value.pages == 2


def _wordy_profile(profile: Profile) -> Profile:
    def entry(n: int) -> Experience:
        bullets = tuple(
            Bullet(
                f"Job {n} bullet {b}: " + "Built and operated Python services on PostgreSQL "
                "for a very large logistics platform, with careful migrations. " * 4,
                ("Python",) if b % 2 else ("PostgreSQL", "Kafka"),
            )
            for b in range(6)
        )
        return Experience(f"Company {n}", "Engineer", "2015", "2016", "Berlin", bullets)

    return replace(profile, experience=tuple(entry(n) for n in range(6)))


@pytest.mark.slow
async def test_long_cv_drops_lowest_ranked_bullets_until_two_pages(
    profile: Profile, latex_posting: Posting
) -> None:
    wordy = _wordy_profile(profile)
    draft = draft_deterministic(replace(latex_posting, text="Kafka and PostgreSQL"), wordy)
    assert page_count(await compile_pdf(render_cv(draft, wordy))) > 2
    result = await build_cv(draft, wordy)
    assert result.pages == 2 and result.dropped > 0
    assert result.draft.bullet_count == draft.bullet_count - result.dropped
    kept_ranks = {b.rank for e in result.draft.entries for b in e.bullets}
    assert kept_ranks == set(range(1, draft.bullet_count - result.dropped + 1))
    # The cut is minimal: one bullet fewer dropped would not fit.
    one_less = draft.without_lowest(result.dropped - 1)
    assert page_count(await compile_pdf(render_cv(one_less, wordy))) > 2


@pytest.mark.slow
async def test_compile_failure_keeps_the_log() -> None:
    tex = "\\documentclass{article}\\begin{document}\\undefinedmacro\\end{document}"
    with pytest.raises(CompileError, match="Undefined control sequence") as raised:
        await compile_pdf(tex)
    assert "\\undefinedmacro" in raised.value.log
    assert "no output PDF file produced" in raised.value.log


@pytest.mark.slow
async def test_compile_timeout_is_a_compile_error() -> None:
    tex = "\\documentclass{article}\\begin{document}\\def\\x{\\x}\\x\\end{document}"
    with pytest.raises(CompileError, match="timed out after 1s"):
        await compile_pdf(tex, timeout=1)


def test_draft_strings_all_pass_through_the_escaper(profile: Profile) -> None:
    draft = Draft("k", "A&B", "Role_1", (), ("C#", "50%"), ("Para with $ and ~",), "deterministic")
    tex = render_cover_letter(draft, profile, date(2026, 1, 2))
    assert r"Dear A\&B hiring team" in tex and r"Para with \$ and \textasciitilde{}" in tex
    cv = render_cv(draft, replace(profile, contact=Contact("A_B", "a@b.c", "1", "X")))
    assert r"C\#, 50\%" in cv and r"A\_B" in cv


LONG_URL = ("https://github.com/mara-lindqvist-example/distributed-postgresql-task-queue-with-"
            "human-signoff/tree/main/docs/operations-and-deployment-guide")
ODD_URL = "https://example.org/p?q=50%25&x=#frag_{a}\\b^c~d/ünï"


def _breaks_only_after_slashes(url: str, text: str) -> bool:
    """Whether `url` is in `text` whole, or cut across lines only right after a '/'."""
    pattern = "".join(re.escape(c) + (r"\s*" if c == "/" else "") for c in url)
    return re.search(pattern, text) is not None


def test_a_link_is_escaped_and_may_break_only_after_a_slash() -> None:
    assert latex_url("https://x.org/a-b--c/d") == (
        r"\mbox{https://}\allowbreak{}\mbox{x.org/}\allowbreak{}\mbox{a-b-{}-c/}"
        r"\allowbreak{}\mbox{d}")
    assert latex_url(ODD_URL) == (
        r"\mbox{https://}\allowbreak{}\mbox{example.org/}\allowbreak{}"
        r"\mbox{p?q=50\%25\&x=\#frag\_\{a\}\textbackslash{}b\textasciicircum{}c"
        r"\textasciitilde{}d/}\allowbreak{}\mbox{ünï}")
    assert escape_latex(latex_url("https://x.org/%")) == latex_url("https://x.org/%")


@pytest.mark.slow
async def test_long_links_in_the_cv_header_break_only_after_a_slash(
    profile: Profile, latex_posting: Posting, tmp_path: Path
) -> None:
    links = (Link("GitHub", LONG_URL), Link("Odd", ODD_URL), *profile.links)
    odd = replace(profile, links=links)
    tex = render_cv(draft_deterministic(latex_posting, odd), odd)
    (tmp_path / "cv.pdf").write_bytes(await compile_pdf(tex))
    text = subprocess.run(["pdftotext", str(tmp_path / "cv.pdf"), "-"], capture_output=True,
                          text=True, check=True).stdout
    assert LONG_URL not in " ".join(text.split())  # it is too long for one line: it was cut
    for link in links:
        assert _breaks_only_after_slashes(link.url, text), link.url
