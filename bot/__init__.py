"""Signoff's service: the scheduler, in-process workers and the Telegram bot around the queue."""

import sys

# httpx (python-telegram-bot's HTTP client) imports its own command line on import whenever
# click, rich and Pygments are installed, as `signoff[all]` installs them (for `signoff mcp`
# and the web's patches): about 8 MB the service never uses. Marked absent before anything
# here imports httpx, its import falls back to the stub httpx keeps for that case.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
