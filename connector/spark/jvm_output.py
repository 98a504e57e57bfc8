"""The driver JVM's console output (Spark's log4j lines, the JVM's own warnings) into icefloe's log.

Left on the terminal, those lines break through the progress bars, carry a
format of their own, and keep coming after ``icefloe run`` has exited: the JVM
stops itself a moment later and its executors' threads report the Python
workers it kills on the way (``Python worker exited unexpectedly (crashed)``,
about 2 s after a successful exit). Read through a pipe instead, each line
becomes a record of the ``icefloe.spark`` logger at the level Spark gave it,
drawn above the bars like every other log line; once this process has exited
nobody reads the pipe, and the JVM's last lines go nowhere.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import IO

log = logging.getLogger("icefloe.spark")

#: Spark's default log4j2 layout: ``26/11/29 08:41:02 WARN NativeCodeLoader: message``
_SPARK_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) (\S+?): ?(.*)$")
_LEVELS = {"TRACE": logging.DEBUG, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
           "ERROR": logging.ERROR, "FATAL": logging.CRITICAL}


def forward(stream: IO[bytes], name: str) -> threading.Thread:
    """Log every line of ``stream`` (a JVM's stdout or stderr) from a daemon thread, until it closes."""
    thread = threading.Thread(target=_pump, args=(stream,), name=f"spark-{name}", daemon=True)
    thread.start()
    return thread


def _pump(stream: IO[bytes]) -> None:
    level = logging.INFO  # a continuation line (a stack trace) keeps the level of the line it follows
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", errors="replace").rstrip()
        if not line:
            continue
        level, message = parse(line, level)
        log.log(level, "%s", message)


#: Spark's warnings that say nothing an icefloe user can act on, logged at DEBUG: Hadoop's native
#: libraries are optional (icefloe's data never goes through Hadoop's codecs).
_NOISE = ("NativeCodeLoader",)


def parse(line: str, previous_level: int) -> tuple[int, str]:
    """The level and message of one JVM output line (``WARN Utils: ...`` → WARNING, ``Utils: ...``)."""
    match = _SPARK_LINE.match(line)
    if match is None:
        return previous_level, line
    level = logging.DEBUG if match.group(2) in _NOISE else _LEVELS[match.group(1)]
    return level, f"{match.group(2)}: {match.group(3)}"
