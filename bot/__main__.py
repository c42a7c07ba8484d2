"""`python -m bot [--config FILE]`: run the service until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Sequence

from bot.service import Service
from taskqueue import load_config, publish_path, run_main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    parser.add_argument("--config", metavar="FILE",
                        help="the config file (default: $SIGNOFF_CONFIG, else built-in defaults)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    # Our scheduler logs each job and run itself; APScheduler's own INFO lines repeat them.
    logging.getLogger("apscheduler").setLevel(logging.WARNING)

    def serve() -> int:
        config = load_config(args.config)
        publish_path(config)
        return asyncio.run(Service(config).run())

    return run_main(serve)


if __name__ == "__main__":
    raise SystemExit(main())
