"""`python -m bot [--config FILE]`: run the service until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence

# Tornado is installed with python-telegram-bot (its webhook server) and imported by tenacity
# (to retry Tornado coroutines) and by PTB's updater: 3.6 MB of the idle service that it
# never runs, since its webhook listener is aiohttp's and its coroutines asyncio's. Marked
# absent in the service's process only (not in `signoff worker` or a library's user), before
# anything here imports them; a handler that needs Tornado runs under `signoff worker`.
sys.modules.setdefault("tornado", None)  # type: ignore[arg-type]


def _telegram_without_passport() -> None:
    """Import python-telegram-bot while `cryptography` looks absent, then let it be found
    again. PTB imports cryptography only to decrypt Telegram Passport data, which Signoff
    never asks for: 9.8 MB of the idle service (the package's compiled library). The web's
    passkeys (webauthn) import cryptography when a passkey is first used, as before."""
    if "telegram" in sys.modules or "cryptography" in sys.modules:
        return
    sys.modules["cryptography"] = None  # type: ignore[assignment]
    try:
        import telegram.ext  # noqa: F401
    except ImportError:  # installed without the telegram extra
        pass
    finally:
        del sys.modules["cryptography"]


_telegram_without_passport()

from bot.service import Service  # noqa: E402
from taskqueue import (  # noqa: E402
    LOG_FORMATS,
    LOG_LEVELS,
    configure_logging,
    freeze_startup_objects,
    load_config,
    log_options,
    publish_path,
    run_main,
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    parser.add_argument("--config", metavar="FILE",
                        help="the config file (default: $SIGNOFF_CONFIG, else built-in defaults)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="log at DEBUG (default INFO); secrets stay masked")
    parser.add_argument("--log-format", choices=LOG_FORMATS,
                        help="text (default) or json: one JSON object a line "
                             "(default $SIGNOFF_LOG_FORMAT)")
    parser.add_argument("--log-level", choices=LOG_LEVELS,
                        help="debug, info (default), warning or error "
                             "(default $SIGNOFF_LOG_LEVEL)")
    args = parser.parse_args(argv)
    try:
        log_format, level = log_options(args.log_format, args.log_level,
                                        logging.DEBUG if args.verbose else logging.INFO)
    except ValueError as exc:
        parser.error(str(exc))
    # The Bot API client's request lines carry the token in the URL. (The webhook listener
    # is aiohttp without an access log; a malformed request is one rate-limited line.)
    configure_logging(level, log_format, quiet=("telegram.request",))
    # Our scheduler logs each job and run itself; APScheduler's own INFO lines repeat them.
    logging.getLogger("apscheduler").setLevel(logging.WARNING)

    def serve() -> int:
        config = load_config(args.config)
        publish_path(config)
        freeze_startup_objects()  # the service's modules (bot, telegram, the core) are loaded
        return asyncio.run(Service(config).run())

    return run_main(serve)


if __name__ == "__main__":
    raise SystemExit(main())
