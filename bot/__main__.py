"""`python -m bot [--config FILE]`: run the service until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Sequence

from bot.service import Service
from taskqueue import (
    configure_logging,
    freeze_startup_objects,
    load_config,
    publish_path,
    run_main,
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    parser.add_argument("--config", metavar="FILE",
                        help="the config file (default: $SIGNOFF_CONFIG, else built-in defaults)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="log at DEBUG (default INFO); secrets stay masked")
    args = parser.parse_args(argv)
    # The Bot API client's request lines carry the token in the URL; tornado (the webhook
    # listener) logs each malformed request (general) and each refused one (access).
    configure_logging(logging.DEBUG if args.verbose else logging.INFO,
                      quiet=("telegram.request", "tornado.general"),
                      errors_only=("tornado.access",))
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
