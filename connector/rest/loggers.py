"""``/admin/loggers``: Connect's log-level API on Python's ``logging`` (``Loggers`` of Connect's runtime).

Connect's levels map onto Python's numbers (TRACE is below DEBUG, OFF above
CRITICAL); ``root`` is the root logger. A level set here is remembered with the
time it was set (``last_modified``, epoch ms), as Connect reports it.
"""

from __future__ import annotations

import logging
import threading
import time

from connector.herder.errors import BadRequestError, NotFoundError

ROOT = "root"
TRACE = 5
OFF = logging.CRITICAL + 50

#: Connect (log4j) level names -> Python levels.
LEVELS = {"ALL": 1, "TRACE": TRACE, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
          "ERROR": logging.ERROR, "FATAL": logging.CRITICAL, "OFF": OFF}
_BY_THRESHOLD = sorted(((number, name) for name, number in LEVELS.items()), reverse=True)


def level_name(level: int) -> str:
    """The Connect name of a Python level: the highest Connect level it reaches."""
    for number, name in _BY_THRESHOLD:
        if level >= number:
            return name
    return "ALL"  # NOTSET on the root logger lets everything through


def parse_level(text: str) -> int:
    level = LEVELS.get(text.upper())
    if level is None:
        raise NotFoundError(f"invalid log level '{text}'.")
    return level


class Loggers:
    """The worker's logger levels as Connect reports and changes them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_modified: dict[str, int] = {}

    def all_levels(self) -> dict[str, dict]:
        """Loggers with an explicitly set level, and root, sorted by name (Connect's TreeMap)."""
        with self._lock:
            named = {name: self._entry(logger) for name, logger in _existing().items()
                     if logger.level != logging.NOTSET}
            named[ROOT] = self._entry(logging.getLogger())
            return {name: named[name] for name in sorted(named)}

    def level(self, name: str) -> dict:
        with self._lock:
            logger = logging.getLogger() if name == ROOT else _existing().get(name)
            if logger is None:
                raise NotFoundError(f"Logger {name} not found.")
            return self._entry(logger)

    def set_level(self, namespace: str, level_text: object) -> list[str]:
        """Set ``namespace`` and every logger under it; the names changed, sorted."""
        if level_text is None:
            raise BadRequestError("Desired 'level' parameter was not specified in request.")
        level = parse_level(str(level_text).lower() if isinstance(level_text, bool) else str(level_text))
        with self._lock:
            now = int(time.time() * 1000)
            changed = []
            for name, logger in self._affected(namespace).items():
                logger.setLevel(level)
                self._last_modified[name] = now
                changed.append(name)
            logging.getLogger(__name__).info("Set level of namespace %s and children to %s", namespace,
                                             level_name(level))
            return sorted(changed)

    def _affected(self, namespace: str) -> dict[str, logging.Logger]:
        existing = _existing()
        if namespace == ROOT:
            # Like Connect, root resets every logger that carries its own level.
            found = {name: lg for name, lg in existing.items() if lg.level != logging.NOTSET}
            found[ROOT] = logging.getLogger()
            return found
        # Connect matches by plain prefix, and creates the namespace's logger if it is missing.
        found = {name: lg for name, lg in existing.items() if name.startswith(namespace)}
        found.setdefault(namespace, logging.getLogger(namespace))
        return found

    def _entry(self, logger: logging.Logger) -> dict:
        name = ROOT if logger is logging.getLogger() else logger.name
        level = logger.level if logger.level != logging.NOTSET else logger.getEffectiveLevel()
        return {"level": level_name(level), "last_modified": self._last_modified.get(name)}


def _existing() -> dict[str, logging.Logger]:
    """Every logger created so far (placeholders for dotted parents are not loggers)."""
    return {name: logger for name, logger in list(logging.Logger.manager.loggerDict.items())
            if isinstance(logger, logging.Logger)}
