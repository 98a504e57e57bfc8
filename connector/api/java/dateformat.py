"""``java.text.SimpleDateFormat`` patterns, always in UTC with an English locale."""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from connector.api.errors import DataException

# ======================================================================================
# java.text.SimpleDateFormat, in UTC
# ======================================================================================

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_PATTERN_LETTERS = set("GyYMLwWDdFEuaHkKhmsSzZX")
_UNSUPPORTED_LETTERS = set("YwW")  # week-based fields need locale week rules
_NUMERIC_TEXT_LETTERS = set("ML")  # numeric when fewer than 3 letters
_ALWAYS_NUMERIC = set("yDdFuHkKhmsS")
# Fixed offsets (minutes) of the zone names accepted when parsing z/Z.
_ZONE_NAMES = {
    "UTC": 0, "GMT": 0, "UT": 0, "Z": 0,
    "COORDINATED UNIVERSAL TIME": 0, "GREENWICH MEAN TIME": 0,
    "EST": -300, "EDT": -240, "CST": -360, "CDT": -300, "MST": -420, "MDT": -360,
    "PST": -480, "PDT": -420,
}
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


class UnsupportedPatternError(ValueError):
    """A valid ``SimpleDateFormat`` pattern that this implementation does not support."""


class JavaDateFormat:
    """A ``SimpleDateFormat`` with the UTC time zone and an English locale.

    Supports the pattern letters G y M L d D F E u a H k K h m s S z Z X, quoted
    literals (``'T'``, ``''``) and lenient parsing (out-of-range fields roll
    over; text after the last field is ignored), as ``SimpleDateFormat`` does.
    Letters Java rejects raise ``ValueError``; the week-based letters Y, w and W,
    which Java supports but this class does not, raise
    :class:`UnsupportedPatternError`.
    """

    def __init__(self, pattern: str):
        self.pattern = pattern
        self._tokens = self._compile(pattern)

    def to_pattern(self) -> str:
        return self.pattern

    @staticmethod
    def _compile(pattern: str) -> list[tuple[str, Any]]:
        tokens: list[tuple[str, Any]] = []
        i, n = 0, len(pattern)
        literal: list[str] = []

        def flush() -> None:
            if literal:
                tokens.append(("lit", "".join(literal)))
                literal.clear()

        while i < n:
            c = pattern[i]
            if c == "'":
                if i + 1 < n and pattern[i + 1] == "'":
                    literal.append("'")
                    i += 2
                    continue
                j = i + 1
                while True:
                    if j >= n:
                        raise ValueError("Unterminated quote")
                    if pattern[j] == "'":
                        if j + 1 < n and pattern[j + 1] == "'":
                            literal.append("'")
                            j += 2
                            continue
                        break
                    literal.append(pattern[j])
                    j += 1
                i = j + 1
            elif ("a" <= c <= "z") or ("A" <= c <= "Z"):
                if c not in _PATTERN_LETTERS:
                    raise ValueError(f"Illegal pattern character '{c}'")
                if c in _UNSUPPORTED_LETTERS:
                    raise UnsupportedPatternError(
                        f"Unsupported pattern character '{c}' (week-based fields are not supported)")
                j = i
                while j < n and pattern[j] == c:
                    j += 1
                count = j - i
                if c == "X" and count > 3:
                    raise ValueError(f"invalid ISO 8601 format: length={count}")
                flush()
                tokens.append((c, count))
                i = j
            else:
                literal.append(c)
                i += 1
        flush()
        return tokens

    # --- formatting -------------------------------------------------------------------

    def format_millis(self, millis: int) -> str:
        try:
            moment = _EPOCH + _dt.timedelta(milliseconds=millis)
        except OverflowError:
            raise DataException(f"Timestamp {millis} is out of the supported range (years 1-9999)") from None
        return self.format(moment)

    def format(self, moment: _dt.datetime) -> str:
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=_dt.timezone.utc)
        moment = moment.astimezone(_dt.timezone.utc)
        out: list[str] = []
        for kind, arg in self._tokens:
            if kind == "lit":
                out.append(arg)
            else:
                out.append(self._format_field(kind, arg, moment))
        return "".join(out)

    @staticmethod
    def _format_field(letter: str, count: int, t: _dt.datetime) -> str:
        def num(v: int) -> str:
            return str(v).zfill(count)

        if letter == "G":
            return "AD"
        if letter == "y":
            return str(t.year % 100).zfill(2) if count == 2 else num(t.year)
        if letter in "ML":
            if count >= 4:
                return _MONTHS[t.month - 1]
            if count == 3:
                return _MONTHS[t.month - 1][:3]
            return num(t.month)
        if letter == "d":
            return num(t.day)
        if letter == "D":
            return num(t.timetuple().tm_yday)
        if letter == "F":
            return num((t.day - 1) // 7 + 1)
        if letter == "E":
            name = _DAYS[t.weekday()]
            return name if count >= 4 else name[:3]
        if letter == "u":
            return num(t.isoweekday())
        if letter == "a":
            return "AM" if t.hour < 12 else "PM"
        if letter == "H":
            return num(t.hour)
        if letter == "k":
            return num(t.hour or 24)
        if letter == "K":
            return num(t.hour % 12)
        if letter == "h":
            return num(t.hour % 12 or 12)
        if letter == "m":
            return num(t.minute)
        if letter == "s":
            return num(t.second)
        if letter == "S":
            return num(t.microsecond // 1000)
        if letter == "z":
            return "Coordinated Universal Time" if count >= 4 else "UTC"
        if letter == "Z":
            return "+0000"
        if letter == "X":
            return "Z"
        raise AssertionError(letter)

    # --- parsing ----------------------------------------------------------------------

    def parse_millis(self, text: str) -> int:
        """Epoch milliseconds of ``text``; ``ValueError`` when it does not match."""
        fields: dict[str, int] = {}
        offset_minutes = 0
        pos = 0
        tokens = self._tokens
        n = len(text)
        for index, (kind, arg) in enumerate(tokens):
            if kind == "lit":
                if not text.startswith(arg, pos):
                    raise ValueError(f"Unparseable date: \"{text}\"")
                pos += len(arg)
                continue
            letter, count = kind, arg
            numeric = letter in _ALWAYS_NUMERIC or (letter in _NUMERIC_TEXT_LETTERS and count <= 2)
            if numeric:
                while pos < n and text[pos] in " \t":
                    pos += 1
                obey_count = False
                if index + 1 < len(tokens):
                    nk, nc = tokens[index + 1]
                    if nk != "lit" and (nk in _ALWAYS_NUMERIC or (nk in _NUMERIC_TEXT_LETTERS and nc <= 2)):
                        obey_count = True
                end = min(n, pos + count) if obey_count else n
                m = re.compile(r"-?[0-9]+").match(text, pos, end)
                if not m:
                    raise ValueError(f"Unparseable date: \"{text}\"")
                digits = m.group(0)
                value = int(digits)
                if letter == "y" and count <= 2 and len(digits) == 2 and digits.isdigit():
                    value = _two_digit_year(value)
                fields[letter if letter != "L" else "M"] = value
                pos = m.end()
            elif letter in "ML":
                matched = _match_text(text, pos, [(name, i + 1) for i, name in enumerate(_MONTHS)]
                                    + [(name[:3], i + 1) for i, name in enumerate(_MONTHS)])
                if matched is None:
                    raise ValueError(f"Unparseable date: \"{text}\"")
                fields["M"], pos = matched
            elif letter == "E":
                matched = _match_text(text, pos, [(d, i) for i, d in enumerate(_DAYS)]
                                    + [(d[:3], i) for i, d in enumerate(_DAYS)])
                if matched is None:
                    raise ValueError(f"Unparseable date: \"{text}\"")
                pos = matched[1]
            elif letter == "a":
                matched = _match_text(text, pos, [("AM", 0), ("PM", 1)])
                if matched is None:
                    raise ValueError(f"Unparseable date: \"{text}\"")
                fields["a"], pos = matched
            elif letter == "G":
                matched = _match_text(text, pos, [("AD", 1), ("BC", 0)])
                if matched is None:
                    raise ValueError(f"Unparseable date: \"{text}\"")
                pos = matched[1]
            else:  # z, Z, X
                parsed = _parse_zone(text, pos, letter)
                if parsed is None:
                    raise ValueError(f"Unparseable date: \"{text}\"")
                offset_minutes, pos = parsed
        if pos == 0 and tokens:
            raise ValueError(f"Unparseable date: \"{text}\"")
        return _resolve_lenient(fields) - offset_minutes * 60_000


def _two_digit_year(value: int) -> int:
    # SimpleDateFormat resolves "yy" into the century starting 80 years before now.
    start = _dt.datetime.now(_dt.timezone.utc).year - 80
    year = (start // 100) * 100 + value
    if year < start:
        year += 100
    return year


def _match_text(text: str, pos: int, candidates: list[tuple[str, int]]) -> tuple[int, int] | None:
    best: tuple[int, int] | None = None
    best_len = 0
    folded = text[pos:].lower()
    for name, value in candidates:
        if folded.startswith(name.lower()) and len(name) > best_len:
            best, best_len = (value, pos + len(name)), len(name)
    return best


_OFFSET = re.compile(r"([+-])([0-9]{1,2})(?::?([0-9]{2}))?")


def _parse_zone(text: str, pos: int, letter: str) -> tuple[int, int] | None:
    if letter == "X":
        if text.startswith(("Z", "z"), pos):
            return 0, pos + 1
        m = _OFFSET.match(text, pos)
        if not m:
            return None
        minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
        return (-minutes if m.group(1) == "-" else minutes), m.end()
    m = _OFFSET.match(text, pos)
    if m:
        minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
        return (-minutes if m.group(1) == "-" else minutes), m.end()
    upper = text[pos:].upper()
    if upper.startswith("GMT") and len(upper) > 3 and upper[3] in "+-":
        m = _OFFSET.match(text, pos + 3)
        if m:
            minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
            return (-minutes if m.group(1) == "-" else minutes), m.end()
    for name in sorted(_ZONE_NAMES, key=len, reverse=True):
        if name == "Z":
            continue
        if upper.startswith(name):
            return _ZONE_NAMES[name], pos + len(name)
    return None


def _resolve_lenient(fields: dict[str, int]) -> int:
    """Epoch millis (UTC) from parsed fields, rolling over out-of-range values like Calendar."""
    year = fields.get("y", 1970)
    if "D" in fields and "M" not in fields and "d" not in fields:
        days = (_dt.date(year, 1, 1) - _dt.date(1970, 1, 1)).days + fields["D"] - 1
    else:
        month = fields.get("M", 1) - 1
        year += month // 12
        month %= 12
        if not 1 <= year <= 9999:
            raise ValueError(f"Year {year} out of range")
        days = (_dt.date(year, month + 1, 1) - _dt.date(1970, 1, 1)).days + fields.get("d", 1) - 1
    if "H" in fields:
        hour = fields["H"]
    elif "k" in fields:
        hour = 0 if fields["k"] == 24 else fields["k"]
    elif "h" in fields or "K" in fields:
        base = fields["h"] % 12 if "h" in fields else fields["K"]
        hour = base + 12 * fields.get("a", 0)
    else:
        hour = 12 * fields.get("a", 0) if "a" in fields else 0
    millis = (((days * 24 + hour) * 60 + fields.get("m", 0)) * 60 + fields.get("s", 0)) * 1000
    return millis + fields.get("S", 0)
