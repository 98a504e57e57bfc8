"""What a deploy changes on the worker, per connector, as text a person can review.

Values of secret-looking keys are printed as ``[hidden]`` so a deploy log in CI never
shows a password; a ``${provider:path:key}`` placeholder is not a secret and is shown
as it is, which is also how a reviewer sees that the secret comes from a provider.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

HIDDEN = "[hidden]"

_SECRET_WORDS = ("password", "passwd", "secret", "token", "credential")
_PLACEHOLDER = re.compile(r"^\$\{[^}]*\}$")


@dataclass
class ConnectorChange:
    """One connector's plan: ``action`` is create, update, delete or unchanged."""

    name: str
    action: str
    added: dict[str, str] = field(default_factory=dict)
    changed: dict[str, tuple[str, str]] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)


def plan(name: str, current: dict[str, str] | None, desired: dict[str, str]) -> ConnectorChange:
    """Compare the worker's config (None when the connector does not exist) with the file's."""
    if current is None:
        return ConnectorChange(name, "create", added=dict(desired))
    added = {k: v for k, v in desired.items() if k not in current}
    removed = {k: v for k, v in current.items() if k not in desired}
    changed = {k: (current[k], v) for k, v in desired.items() if k in current and current[k] != v}
    action = "update" if added or removed or changed else "unchanged"
    return ConnectorChange(name, action, added, changed, removed)


def deletion(name: str) -> ConnectorChange:
    return ConnectorChange(name, "delete")


def looks_secret(key: str, password_keys: frozenset[str] = frozenset()) -> bool:
    """A key whose value must not be printed: PASSWORD-typed, or named like a secret.

    ``key`` counts only after the first segment, so ``key.converter`` stays readable
    while ``iceberg.catalog.s3.access-key-id`` or ``api.key`` is hidden.
    """
    if key in password_keys:
        return True
    lowered = key.lower()
    if any(word in lowered for word in _SECRET_WORDS) or "jaas" in lowered or "user.info" in lowered:
        return True
    if lowered.endswith("apikey"):
        return True
    segments = re.split(r"[._\-]", lowered)
    return "key" in segments[1:] and not any("converter" in s for s in segments)


def shown(key: str, value: str, password_keys: frozenset[str] = frozenset()) -> str:
    """The value as the diff prints it."""
    if _PLACEHOLDER.match(value) or not looks_secret(key, password_keys):
        return value
    return HIDDEN


def render(change: ConnectorChange, password_keys: frozenset[str] = frozenset()) -> list[str]:
    """The lines printed for one connector: a heading, then ``+``/``~``/``-`` per key, sorted."""
    heading = {
        "create": f"{change.name}: create ({len(change.added)} keys)",
        "update": f"{change.name}: update",
        "delete": f"{change.name}: delete (no PATH defines it)",
        "unchanged": f"{change.name}: no change",
    }[change.action]
    if change.action == "create":
        return [heading] + [f"  + {k} = {shown(k, v, password_keys)}" for k, v in sorted(change.added.items())]
    lines = [heading]
    for key in sorted({*change.added, *change.changed, *change.removed}):
        if key in change.added:
            lines.append(f"  + {key} = {shown(key, change.added[key], password_keys)}")
        elif key in change.changed:
            old, new = change.changed[key]
            lines.append(f"  ~ {key}: {shown(key, old, password_keys)} -> {shown(key, new, password_keys)}")
        else:
            lines.append(f"  - {key} (was {shown(key, change.removed[key], password_keys)})")
    return lines
