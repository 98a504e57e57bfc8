"""Putting loggers back: `PUT /admin/loggers/root` changes every logger with a level of its own, process-wide."""

from __future__ import annotations

import contextlib
import logging
from typing import Iterator


@contextlib.contextmanager
def log_levels_restored() -> Iterator[None]:
    """Every logger's level as it was before the block, whatever requests the block sent."""
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    saved = {logger: logger.level for logger in loggers if isinstance(logger, logging.Logger)}
    try:
        yield
    finally:
        for logger, level in saved.items():
            logger.setLevel(level)
