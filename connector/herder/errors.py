"""Errors the herder raises, each carrying the HTTP status and message Kafka Connect answers with.

Connect's ``ConnectExceptionMapper`` turns every exception into
``{"error_code": <int>, "message": <str>}``; the REST layer does the same with
these, so the status and the text are decided once, where the rule lives.
"""

from __future__ import annotations


class ConnectRestError(Exception):
    """An answer other than success: ``status`` and Connect's ``message``."""

    status = 500

    def __init__(self, message: str, status: int | None = None, error_code: int | None = None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.error_code = error_code if error_code is not None else self.status


class BadRequestError(ConnectRestError):
    status = 400


class ForbiddenError(ConnectRestError):
    status = 403


class NotFoundError(ConnectRestError):
    status = 404


class AlreadyExistsError(ConnectRestError):
    status = 409


class ConflictError(ConnectRestError):
    """A concurrent change won (Connect: stale configuration during a rebalance)."""

    status = 409


class StartingError(ConnectRestError):
    """The worker is still starting and cannot answer this yet."""

    status = 503
