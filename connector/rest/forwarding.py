"""Config writes made on a worker that does not lead its group go to the leader, as Connect forwards them.

Only the leader writes connector configs and target states (one writer keeps
Connect's rules: a name created twice is a 409, a patch applies to the config
it read). Any other worker passes such a request on, with ``forward=false``
so the leader answers it itself, and returns the leader's answer as its own
(a ``Location`` names the worker that was asked, as Connect's relative one does).
With no leader known — a rebalance under way — the answer is Connect's 409.
Restarts, topic resets and the dead letter queue replay are not forwarded:
any worker carries them out (a restart goes on to the worker running the connector).
"""

from __future__ import annotations

import re
from typing import Any, Awaitable, Callable, Protocol

import requests
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

NO_LEADER = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
_WRITES = ("POST", "PUT", "PATCH", "DELETE")
_LOCAL = re.compile(r"^/connectors/[^/]+/(restart|tasks/[^/]+/restart|topics/reset|dlq/.*)$")
_TIMEOUT_SECONDS = 90  # a leader's write waits for the config topic; a restart for a commit in flight
_PASSED_HEADERS = ("content-type", "authorization", "accept")


class Leadership(Protocol):
    def is_leader(self) -> bool: ...
    def leader_url(self) -> str | None: ...


def install_forwarding(app: FastAPI, group: Leadership) -> None:
    @app.middleware("http")
    async def forward(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if not _forwarded(request) or group.is_leader():
            return await call_next(request)
        leader = group.leader_url()
        if leader is None:
            return JSONResponse({"error_code": 409, "message": NO_LEADER}, status_code=409)
        body = await request.body()
        answer = await run_in_threadpool(_send, request, leader, body)
        return _relayed(answer, leader, str(request.base_url).rstrip("/"))


def _forwarded(request: Request) -> bool:
    path = request.url.path
    if request.method not in _WRITES or not path.startswith("/connectors") or _LOCAL.match(path):
        return False
    return request.query_params.get("forward", "true").lower() != "false"


def _send(request: Request, leader: str, body: bytes) -> requests.Response | str:
    query = [(k, v) for k, v in request.query_params.multi_items() if k != "forward"] + [("forward", "false")]
    headers = {k: v for k, v in request.headers.items() if k.lower() in _PASSED_HEADERS}
    try:
        return requests.request(request.method, f"{leader.rstrip('/')}{request.url.path}", params=query,
                                data=body, headers=headers, timeout=_TIMEOUT_SECONDS)
    except requests.RequestException as exc:
        return f"Could not forward the request to the leader at {leader}: {exc}"


def _relayed(answer: Any, leader: str, own_base: str) -> Response:
    if isinstance(answer, str):  # the leader went away: as Connect, a 409 the client may retry
        return JSONResponse({"error_code": 409, "message": answer}, status_code=409)
    headers = {}
    location = answer.headers.get("Location")
    if location:
        headers["Location"] = own_base + location[len(leader.rstrip("/")):] if location.startswith(leader) \
            else location
    media = answer.headers.get("Content-Type")
    return Response(answer.content, status_code=answer.status_code, headers=headers, media_type=media)
