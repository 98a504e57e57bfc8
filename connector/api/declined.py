"""When a column-wise (batch) stage cannot promise the per-record result.

Batch forms of converters, SMTs, routing and conversion are optimisations of
the per-record contract. A batch form that meets a case it does not handle
exactly as the per-record path would *declines* the batch with a named
reason (:class:`Declined`); the task pipeline then runs that stage per record
and counts the reason, so a test or an operator can see which batches took
the slow path and why.

An exception a batch form did not expect is a bug, not a reason. It goes
through :func:`unexpected`: under the test suite (``ICEFLOE_STRICT_BATCH=1``,
set by ``tests/conftest.py``) it is raised, so a batch form that always crashes
cannot hide behind the per-record path; in production the batch declines
with the reason ``"unexpected error"``, and the trace is logged.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

#: Set to "1" to raise unexpected errors of batch forms instead of declining (the test suite does).
STRICT_ENV = "ICEFLOE_STRICT_BATCH"
UNEXPECTED = "unexpected error"


class Declined(Exception):
    """A batch form cannot guarantee the per-record result for this batch; ``reason`` says why."""

    @property
    def reason(self) -> str:
        return str(self.args[0]) if self.args else "declined"


def strict() -> bool:
    """Whether unexpected errors of batch forms are raised (tests) rather than declined (production)."""
    return os.environ.get(STRICT_ENV, "").strip().lower() in ("1", "true", "yes")


def unexpected(exc: BaseException, where: str) -> Declined:
    """The :class:`Declined` for an exception nobody expected in ``where``; raises it under strict mode.

    Use as ``except Exception as exc: raise unexpected(exc, "JSON batch conversion") from exc``.
    """
    if strict():
        raise exc
    log.warning("Batch form %s failed unexpectedly; declining to the per-record path", where, exc_info=exc)
    return Declined(UNEXPECTED)


@contextmanager
def guarded(where: str) -> Iterator[None]:
    """Run (part of) a batch form: :class:`Declined` passes, any other exception goes through :func:`unexpected`."""
    try:
        yield
    except Declined:
        raise
    except Exception as exc:
        raise unexpected(exc, where) from exc
