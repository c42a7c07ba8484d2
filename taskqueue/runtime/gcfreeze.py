"""The garbage collector of a long-running Signoff process (`signoff worker`, `python -m
bot`): the objects of start-up kept out of the collector's full passes."""

from __future__ import annotations

import gc


def freeze_startup_objects() -> None:
    """Move every object alive now (modules, classes, config: what start-up imported and
    built) to the collector's permanent generation. They live as long as the process, and
    each full collection, which a busy worker triggers every few seconds, would otherwise
    walk all of them again."""
    gc.collect()
    gc.freeze()
