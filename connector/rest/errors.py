"""Every failure as Connect's ``{"error_code": N, "message": ...}`` (``ConnectExceptionMapper``).

The herder raises :class:`ConnectRestError` subclasses with Connect's texts;
routing errors get Jersey's (``HTTP 404 Not Found``, ``HTTP 405 Method Not
Allowed``); bad bodies get a 400 naming the problem (Connect answers 500 for
those, the issue asks for 400). FastAPI's own 422 never reaches a client: the
app parses bodies itself, and any validation error that slips through is mapped
to a 400 in Connect's shape. Anything unexpected is a 500 with its message,
logged with its traceback.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from connector.api.errors import ConfigException
from connector.herder.errors import ConnectRestError

log = logging.getLogger(__name__)

# Jersey's reason phrases, which Connect passes through as the message.
_REASONS = {
    400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
    406: "Not Acceptable", 409: "Conflict", 415: "Unsupported Media Type", 500: "Internal Server Error",
    503: "Service Unavailable",
}


def error_response(status: int, message: str, error_code: int | None = None) -> JSONResponse:
    return JSONResponse({"error_code": error_code if error_code is not None else status, "message": message},
                        status_code=status)


def jersey_message(status: int) -> str:
    return f"HTTP {status} {_REASONS.get(status, 'Error')}"


def install_error_handlers(app: FastAPI) -> None:
    """Map every exception the app can raise to Connect's error body."""

    async def rest_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ConnectRestError)
        return error_response(exc.status, exc.message, exc.error_code)

    async def config_error(request: Request, exc: Exception) -> JSONResponse:
        # A ConfigException that escaped the herder is still the user's input: a 400, never a 500.
        return error_response(400, str(exc))

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        detail = exc.detail if isinstance(exc.detail, str) and exc.detail.startswith("HTTP ") else None
        return error_response(exc.status_code, detail or jersey_message(exc.status_code))

    async def validation_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return error_response(400, _validation_text(exc))

    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("Uncaught exception in REST call to %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, str(exc) or type(exc).__name__)

    app.add_exception_handler(ConnectRestError, rest_error)
    app.add_exception_handler(ConfigException, config_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(Exception, unexpected)


def _validation_text(exc: RequestValidationError) -> str:
    """A readable sentence from FastAPI's validation details (query and path parameters)."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ()) if p not in ("query", "path", "body"))
        parts.append(f"{where}: {error.get('msg', 'invalid value')}" if where else str(error.get("msg")))
    return "Invalid request: " + "; ".join(parts) if parts else "Invalid request"
