"""The CV and cover-letter PDFs: Jinja2 LaTeX templates, pdflatex, and the page limits."""

from __future__ import annotations

import asyncio
import io
import tempfile
from dataclasses import dataclass
from datetime import date
from importlib import resources
from pathlib import Path

import jinja2
from pypdf import PdfReader

from workloads.job_applications.drafting import Draft
from workloads.job_applications.latex_escape import escape_latex, latex_url
from workloads.job_applications.profile import Profile

__all__ = [
    "TEMPLATE_DIR",
    "CompileError",
    "CvResult",
    "LatexError",
    "PageLimitError",
    "build_cover_letter",
    "build_cv",
    "compile_pdf",
    "page_count",
    "render_cover_letter",
    "render_cv",
]

TEMPLATE_DIR = Path(str(resources.files(__package__).joinpath("templates")))
CV_MAX_PAGES = 2
COMPILE_TIMEOUT = 60.0  # seconds; a normal CV takes well under one
LOG_TAIL_LINES = 60
PDFLATEX = ("pdflatex", "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error")


class LatexError(Exception):
    """Building a PDF failed."""


class CompileError(LatexError):
    """pdflatex failed or timed out; `log` holds the tail of its log."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


class PageLimitError(LatexError):
    """The document does not fit its page limit, even after shortening."""

    def __init__(self, message: str, pages: int) -> None:
        super().__init__(message)
        self.pages = pages


@dataclass(frozen=True)
class CvResult:
    pdf: bytes
    pages: int
    dropped: int  # lowest-ranked bullets left out to fit CV_MAX_PAGES
    draft: Draft  # the draft as printed (without the dropped bullets)


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        block_start_string=r"\BLOCK{",
        block_end_string="}",
        variable_start_string=r"\VAR{",
        variable_end_string="}",
        comment_start_string=r"\#{",
        comment_end_string="}",
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        # Every \VAR goes through the escaper: no template can forget it.
        finalize=escape_latex,
        keep_trailing_newline=True,
    )
    env.filters["url"] = latex_url  # a link that breaks only after a slash
    return env


_ENV = _environment()


def render_cv(draft: Draft, profile: Profile) -> str:
    """The CV's LaTeX source."""
    return _ENV.get_template("cv.tex.j2").render(draft=draft, profile=profile)


def render_cover_letter(draft: Draft, profile: Profile, today: date | None = None) -> str:
    """The cover letter's LaTeX source, dated `today` (default: the current date)."""
    day = today or date.today()
    return _ENV.get_template("cover_letter.tex.j2").render(
        draft=draft, profile=profile, date=f"{day.day} {day:%B %Y}"
    )


async def compile_pdf(tex: str, *, timeout: float = COMPILE_TIMEOUT) -> bytes:
    """Run pdflatex on `tex` in a fresh temporary folder; the PDF bytes or CompileError."""
    with tempfile.TemporaryDirectory(prefix="signoff-latex-") as folder:
        work = Path(folder)
        (work / "doc.tex").write_text(tex, encoding="utf-8")
        process = await asyncio.create_subprocess_exec(
            *PDFLATEX,
            "doc.tex",
            cwd=work,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            returncode = await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise CompileError(f"pdflatex timed out after {timeout:g}s", _log_tail(work)) from None
        pdf = work / "doc.pdf"
        if returncode != 0 or not pdf.exists():
            log = _log_tail(work)
            raise CompileError(f"pdflatex failed: {_first_error(log)}", log)
        return pdf.read_bytes()


def _log_tail(work: Path) -> str:
    log = work / "doc.log"
    if not log.exists():
        return ""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join(lines[-LOG_TAIL_LINES:])


def _first_error(log: str) -> str:
    return next((line for line in log.splitlines() if line.startswith("!")), "see the log")


def page_count(pdf: bytes) -> int:
    """Number of pages in a PDF."""
    return len(PdfReader(io.BytesIO(pdf)).pages)


async def build_cv(draft: Draft, profile: Profile, *, max_pages: int = CV_MAX_PAGES) -> CvResult:
    """The CV PDF, dropping the lowest-ranked bullets until it fits `max_pages`."""
    pdf = await compile_pdf(render_cv(draft, profile))
    pages = page_count(pdf)
    if pages <= max_pages:
        return CvResult(pdf, pages, 0, draft)
    # Fewer bullets never means more pages, so binary-search the smallest cut that fits.
    best: CvResult | None = None
    low, high = 1, draft.bullet_count
    while low <= high:
        cut = (low + high) // 2
        shorter = draft.without_lowest(cut)
        pdf = await compile_pdf(render_cv(shorter, profile))
        pages = page_count(pdf)
        if pages <= max_pages:
            best, high = CvResult(pdf, pages, cut, shorter), cut - 1
        else:
            low = cut + 1
    if best is None:
        raise PageLimitError(f"CV is {pages} pages even without bullets (max {max_pages})", pages)
    return best


async def build_cover_letter(draft: Draft, profile: Profile, today: date | None = None) -> bytes:
    """The cover-letter PDF; PageLimitError if it does not fit exactly one page."""
    pdf = await compile_pdf(render_cover_letter(draft, profile, today))
    pages = page_count(pdf)
    if pages != 1:
        raise PageLimitError(f"cover letter is {pages} pages; it must fit on one", pages)
    return pdf
