"""Job applications: find postings, draft a CV and cover letter, fill the form, submit on sign-off.

The pure pieces are independent of the queue: `profile` (the candidate), `boards` (fetch
postings), `rank` (filter and score), `drafting` and `model_drafter` (what to say), `latex`
(the PDFs), `forms` (fill and submit the application form in Chromium).

On the queue: `settings` (the config section), `producer` (the nightly scrape), `handler`
(one stage per slice: `prepare` drafts and compiles, `review` fills and parks, `submit`
submits after a person's approve, at most once), with `artifacts` (content-addressed PDFs
and screenshots), `codec` (JSON) and `checkpoints` (where tests kill the worker).
"""

from taskqueue import require_extra

# Any of its modules checks the workload's libraries first (located, not loaded: Playwright
# and the rest load when a slice first uses them).
require_extra("jobs", "the job_applications workload", "playwright", "pypdf", "jinja2",
              "aiohttp")
