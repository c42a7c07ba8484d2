"""The extras the service's parts need (`pip install 'signoff[NAME]'`): each part checks
its own before it loads its libraries, and the service checks the configured ones at start,
before anything is written. A missing one is one line naming the extra."""

from __future__ import annotations

from taskqueue import require_extra

# The top-level modules each extra brings (pyproject.toml's optional-dependencies).
METRICS = ("aiohttp", "prometheus_client")
WEB = (*METRICS, "jinja2", "pypdfium2", "pygments", "webauthn", "aiohttp_session", "argon2")
TELEGRAM = ("telegram", "jinja2", "aiohttp")


def require_telegram() -> None:
    """MissingExtra unless the Telegram channel's libraries are installed."""
    require_extra("telegram", "the Telegram channel", *TELEGRAM)


def require_web() -> None:
    """MissingExtra unless the web inbox's libraries are installed."""
    require_extra("web", "the web inbox", *WEB)
