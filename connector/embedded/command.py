"""``icefloe broker``: the embedded Kafka-compatible broker (Tansu) on a port of your choice, to try icefloe.

It listens on loopback only, keeps records in memory (they are gone once it
stops) and runs until Ctrl-C or SIGTERM. ``--topic NAME:PARTITIONS`` creates
topics at start; any Kafka client (confluent-kafka, kcat,
kafka-console-producer) produces to it. Exit codes: 0 stopped, 1 it could
not start (the port taken, ...), 2 a bad argument.
"""

from __future__ import annotations

import signal
import socket
import sys
import threading

from connector.embedded.tansu import BrokerStartError, TansuBroker, create_topic


def add_parser(sub) -> None:
    broker = sub.add_parser("broker", help="run the embedded Kafka-compatible broker (Tansu, in memory) on "
                                           "127.0.0.1:PORT until Ctrl-C, to try icefloe on your own data")
    broker.add_argument("--port", type=int, default=9092, help="the port to listen on (default: %(default)s)")
    broker.add_argument("--topic", action="append", default=[], metavar="NAME[:PARTITIONS]",
                        help="create this topic at start (repeatable; 1 partition unless given)")


def broker(args) -> int:
    try:
        topics = [_topic(spec) for spec in args.topic]
    except ValueError as exc:
        print(f"Invalid --topic: {exc}", file=sys.stderr)
        return 2
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    taken = _port_taken(args.port)  # Tansu would share a taken port (SO_REUSEPORT) instead of failing
    if taken:
        print(f"Cannot start the broker on 127.0.0.1:{args.port}: {taken}; pass another --port", file=sys.stderr)
        return 1
    running = TansuBroker(port=args.port)
    try:
        running.start()
    except BrokerStartError as exc:
        print(f"Cannot start the broker on 127.0.0.1:{args.port}: {_cause(str(exc))}", file=sys.stderr)
        return 1
    try:
        for name, partitions in topics:
            create_topic(running.bootstrap, name, partitions)
            print(f"Created topic {name} ({partitions} partition{'s' if partitions > 1 else ''})", flush=True)
        print(f"Kafka broker (Tansu, in memory) on {running.bootstrap}: use --bootstrap-servers "
              f"{running.bootstrap}; Ctrl-C stops it and drops its records", flush=True)
        stopped.wait()
    finally:
        running.stop()
        running.remove_log()
    return 0


def _topic(spec: str) -> tuple[str, int]:
    name, _, count = spec.partition(":")
    if not name:
        raise ValueError(f"'{spec}' names no topic (NAME or NAME:PARTITIONS)")
    try:
        partitions = int(count) if count else 1
    except ValueError:
        raise ValueError(f"'{spec}': the partition count must be a number") from None
    if partitions < 1:
        raise ValueError(f"'{spec}': a topic needs at least 1 partition")
    return name, partitions


def _port_taken(port: int) -> str | None:
    """Why ``port`` cannot be listened on at 127.0.0.1 (in use, not allowed), or None if it can."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def _cause(message: str) -> str:
    """The line of a failed start that says why (Tansu's error, e.g. the address in use), else the first."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    for line in lines:
        if "in use" in line.lower() or "error" in line.lower():
            return line
    return lines[0] if lines else message
