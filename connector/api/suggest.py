"""``Did you mean ...?``: the closest known name to a mistyped key or class name."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: How alike a name must be to be suggested (difflib's ratio): a typo or two in a dotted name, not a guess.
CUTOFF = 0.8


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` Did you mean 'x'?`` for the known name closest to ``name``, or "" when none is close."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=CUTOFF)
    return f" Did you mean '{close[0]}'?" if close else ""
