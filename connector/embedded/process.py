"""A local server run as a child process on a loopback port, its output captured in a log file.

The embedded broker (:class:`connector.embedded.tansu.TansuBroker`) is one, the tests' S3 endpoint
(``tests/support/moto_s3.py``) another. A subclass says how the server is started (:meth:`command`)
and when it is ready (:meth:`_wait_ready`); :class:`ServerProcess` finds it a free port (another one
when the port was taken meanwhile), keeps its log, and pauses, resumes and stops it.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable
from types import TracebackType
from typing import ClassVar, Optional, TypeVar

LOOPBACK = "127.0.0.1"

Server = TypeVar("Server", bound="ServerProcess")


class ServerStartError(RuntimeError):
    """The server process did not come up; the message includes its log."""


def free_port() -> int:
    """A TCP port that is free on loopback right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def _parent_death_signal() -> Optional[Callable[[], None]]:
    """A ``preexec_fn`` asking Linux to kill the server if the process that started it dies.

    This covers the one case finalizers cannot: the Python process being
    killed with SIGKILL (a CI timeout, a hung session killed by hand).
    libc is loaded here, in the parent: the child, forked from a process
    with threads, should only make the system call.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except OSError:  # not glibc: finalizers and atexit still apply
        return None
    pr_set_pdeathsig = 1

    def set_death_signal() -> None:
        prctl(pr_set_pdeathsig, signal.SIGKILL)

    return set_death_signal


class ServerProcess(ABC):
    """A server process on ``127.0.0.1:<port>``. Use as a context manager or call :meth:`start` / :meth:`stop`."""

    kind: ClassVar[str] = "server"  # what it is called in messages ("the server is not running")
    log_prefix: ClassVar[str] = "server-"  # of its log file's name
    extra_env: ClassVar[dict[str, str]] = {}  # set in its environment besides this process's
    stop_timeout: ClassVar[float] = 5.0  # seconds it has to end after SIGTERM, then after SIGKILL

    def __init__(self, *, startup_timeout: float = 30.0, port: Optional[int] = None) -> None:
        """``port``: listen there instead of on a free port picked at start."""
        self._fixed_port = port
        self._startup_timeout = startup_timeout
        self._process: Optional[subprocess.Popen[bytes]] = None
        self.log_path: Optional[str] = None  # the file that captures the server's stdout and stderr
        self.port: Optional[int] = None

    @abstractmethod
    def command(self, port: int) -> list[str]:
        """The command line that runs the server on ``port``."""

    @abstractmethod
    def _wait_ready(self) -> None:
        """Return once the server answers; raise a :class:`ServerStartError` (with the log) when it does not."""

    @property
    def address(self) -> str:
        """``127.0.0.1:<port>``; only valid once started."""
        if self.port is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return f"{LOOPBACK}:{self.port}"

    def log_text(self) -> str:
        """The server's log so far (empty if there is none)."""
        if not self.log_path or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, encoding="utf-8", errors="replace") as handle:
            return handle.read()

    def start(self: Server) -> Server:
        """Launch the server and wait until it answers.

        A port picked by the OS can be taken by someone else before the
        server binds it, so startup is retried on a fresh port a few times.
        """
        if self._process is not None:
            return self
        attempts = 3 if self._fixed_port is None else 1  # a port asked for is not swapped for another
        for attempt in range(1, attempts + 1):
            self._launch(self._fixed_port or free_port())
            try:
                self._wait_ready()
                atexit.register(self.stop)
                return self
            except ServerStartError:
                died = self._process is not None and self._process.poll() is not None
                self.stop()
                if not died or attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    def _launch(self, port: int) -> None:
        fd, self.log_path = tempfile.mkstemp(prefix=self.log_prefix, suffix=".log")
        with os.fdopen(fd, "wb") as log:
            self._process = subprocess.Popen(
                self.command(port),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.extra_env},
                preexec_fn=_parent_death_signal(),
            )
        self.port = port

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): clients see it unreachable, and it keeps what it holds in memory."""
        assert self._process is not None, f"the {self.kind} is not running"
        self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Thaw a paused server (SIGCONT)."""
        assert self._process is not None, f"the {self.kind} is not running"
        self._process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL); idempotent."""
        process, self._process = self._process, None
        if process is None:
            return
        atexit.unregister(self.stop)
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=self.stop_timeout)

    def remove_log(self) -> None:
        """Delete the captured log file (after a successful session)."""
        if self.log_path and os.path.exists(self.log_path):
            os.unlink(self.log_path)

    def __enter__(self: Server) -> Server:
        return self.start()

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self.stop()
