"""Which connector a log line is about: on a worker running several, every line names its connector.

A connector's job sets :data:`CONNECTOR` in its own thread (:meth:`connector.job.SinkJob.run`); the
log handlers' :class:`ConnectorFormatter` puts ``[name] `` before the message of every record logged
from that thread (its tasks run in the driver, its commits, maintenance, retries), and nothing
where no connector is set (the REST server's own lines, Spark's).
"""

from __future__ import annotations

import contextvars
import logging

CONNECTOR: contextvars.ContextVar[str | None] = contextvars.ContextVar("icefloe_connector", default=None)


class ConnectorFormatter(logging.Formatter):
    """A formatter whose format may use ``%(connector)s``: ``[name] `` of the connector being run in the
    logging thread, or empty."""

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "connector"):
            name = CONNECTOR.get()
            record.connector = f"[{name}] " if name else ""
        return super().format(record)
