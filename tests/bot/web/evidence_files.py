"""Real evidence for the tests: a PDF from pdflatex and a screenshot from Chromium."""

from __future__ import annotations

import subprocess
import tempfile
from functools import cache
from pathlib import Path

from playwright.sync_api import Browser

CV = r"""\documentclass{article}
\begin{document}
\section*{Ada Lovelace}
Analyst of engines, page one.
\newpage
\section*{Experience}
Notes on the analytical engine, page two.
\end{document}
"""


@cache
def two_page_pdf() -> bytes:
    return _pdf(CV)


@cache
def three_page_pdf() -> bytes:
    return _pdf(CV.replace(r"\end{document}", "\\newpage\n\\section*{References}\nPage three.\n"
                                              "\\end{document}"))


def _pdf(source: str) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        tex = Path(folder) / "cv.tex"
        tex.write_text(source)
        subprocess.run(["pdflatex", "-interaction=batchmode", "-halt-on-error", tex.name],
                       cwd=folder, check=True, capture_output=True, timeout=120)
        return (Path(folder) / "cv.pdf").read_bytes()


def form_screenshot(browser: Browser) -> bytes:
    page = browser.new_page(viewport={"width": 800, "height": 500})
    try:
        page.set_content("<h1>Application form</h1><label>Name <input value='Ada'></label>"
                         "<p id='marker'>filled form</p>")
        return page.screenshot()
    finally:
        page.close()
