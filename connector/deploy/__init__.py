"""``icefloe deploy``: make a Connect worker's connectors match a set of JSON config files.

For each connector the files define: read its config from the worker, print what would
change, ``PUT /connectors/{name}/config`` only if something does, then wait until the
connector and its tasks are RUNNING. A second run with the same files changes nothing.

Exit codes: 0 everything deployed and running (or nothing to do), 1 a connector failed,
was refused, or the worker could not be reached, 2 bad input files or arguments.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from connector.deploy.client import ConnectClient, WorkerError, WorkerUnreachable
from connector.deploy.diff import ConnectorChange, deletion, plan, render
from connector.deploy.files import DeployInputError, desired_connectors
from connector.deploy.wait import wait_running

OK, FAILED, BAD_INPUT = 0, 1, 2


def deploy(args, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        wanted = desired_connectors(args.paths)
        auth = _auth(args)
    except DeployInputError as exc:
        print(f"icefloe deploy: {exc}", file=sys.stderr)
        return BAD_INPUT
    client = ConnectClient(args.url, auth)
    try:
        return _deploy(client, wanted, args, out)
    except WorkerUnreachable as exc:
        print(f"icefloe deploy: {exc}", file=sys.stderr)
        return FAILED
    except WorkerError as exc:
        print(f"icefloe deploy: the worker at {client.url} answered {exc.status}: {exc.message}", file=sys.stderr)
        return FAILED


def _auth(args) -> tuple[str, str] | None:
    user = args.user or os.environ.get("ICEFLOE_DEPLOY_USER")
    password = args.password or os.environ.get("ICEFLOE_DEPLOY_PASSWORD")
    if bool(user) != bool(password):
        raise DeployInputError("--user and --password (or ICEFLOE_DEPLOY_USER/PASSWORD) go together")
    return (user, password) if user and password else None


def _deploy(client: ConnectClient, wanted: dict[str, dict[str, str]], args, out: TextIO) -> int:
    changes = [plan(name, client.connector_config(name), config) for name, config in wanted.items()]
    if args.delete_missing:
        changes += [deletion(name) for name in sorted(set(client.connector_names()) - set(wanted))]
    secret_keys = _password_keys(client, wanted)
    for change in changes:
        print("\n".join(render(change, secret_keys)), file=out)
    todo = [c for c in changes if c.action != "unchanged"]
    if args.dry_run:
        print(f"Dry run: {len(todo)} change(s) not applied." if todo else "Dry run: nothing to change.", file=out)
        return OK
    refused = _apply(client, todo, wanted, out)
    if not todo:
        print("Nothing to change.", file=out)
    deployed = [name for name in wanted if name not in refused]
    result = _report(client, deployed, args.timeout, out) if deployed else OK
    return FAILED if refused else result


def _password_keys(client: ConnectClient, wanted: dict[str, dict[str, str]]) -> frozenset[str]:
    """PASSWORD-typed keys of every connector class deployed, asked of the worker once per class."""
    classes = {c["connector.class"] for c in wanted.values() if c.get("connector.class")}
    keys: frozenset[str] = frozenset()
    for connector_class in sorted(classes):
        keys |= client.password_keys(connector_class)
    return keys


def _apply(client: ConnectClient, todo: list[ConnectorChange], wanted: dict[str, dict[str, str]],
           out: TextIO) -> set[str]:
    """Send the changes; the names the worker refused, each with its message printed."""
    refused: set[str] = set()
    for change in todo:
        try:
            if change.action == "delete":
                client.delete(change.name)
                print(f"{change.name}: deleted", file=out)
                continue
            created = client.put_config(change.name, wanted[change.name])
            print(f"{change.name}: {'created' if created else 'updated'}", file=out)
        except WorkerError as exc:
            refused.add(change.name)
            print(f"{change.name}: refused by the worker ({exc.status}):", file=out)
            print("\n".join("    " + line for line in exc.message.splitlines()), file=out)
    return refused


def _report(client: ConnectClient, names: list[str], timeout: float, out: TextIO) -> int:
    outcomes = wait_running(client, names, timeout)
    for outcome in outcomes:
        print(f"{outcome.name}: {outcome.detail[0]}", file=out)
        for line in outcome.detail[1:]:
            print(line, file=out)
    failed = [o.name for o in outcomes if o.state in ("FAILED", "TIMEOUT")]
    if failed:
        print(f"Failed: {', '.join(failed)}", file=out)
    return FAILED if failed else OK
