"""Java's number semantics: casts, ``Number`` accessors, parsing and ``toString``.

A Java ``double`` is a Python ``float``; a Java ``float`` is a Python ``float``
holding a float32-representable number (see :func:`to_float32`); ``long``,
``int``, ``short``, ``byte`` and ``BigInteger`` are ``int``; ``BigDecimal`` is
``decimal.Decimal``.

``Double.toString`` and ``Float.toString`` follow the JDK 19+ specification
(the shortest decimal that rounds back to the value, the closest one if there
are several, and at least two digits). Older JDKs sometimes print a digit or
two more (JDK-4511638); the texts always read back as the same value.
"""

from __future__ import annotations

import decimal
import math
import re
import struct
from fractions import Fraction
from typing import Callable

from connector.api.java.strings import java_trim

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
FLOAT32_MAX = 3.4028234663852886e38
_FLOAT32_OVERFLOW = 2.0**128 - 2.0**103  # FLOAT32_MAX plus half an ulp: rounds to infinity


class NumberFormatError(ValueError):
    """Java's ``NumberFormatException``: the text is not a number of the requested kind."""


# ======================================================================================
# Casts and Number accessors
# ======================================================================================


def wrap_int(value: int, bits: int) -> int:
    """A narrowing cast of an integer to a ``bits``-wide signed type (keeps the low bits)."""
    half = 1 << (bits - 1)
    return ((value + half) % (1 << bits)) - half


def double_to_long(value: float) -> int:
    """``(long) d``: truncation toward zero, saturating at the long range, NaN is 0."""
    return _saturating_truncation(value, LONG_MIN, LONG_MAX)


def double_to_int(value: float) -> int:
    """``(int) d``: as :func:`double_to_long`, within the int range."""
    return _saturating_truncation(value, INT_MIN, INT_MAX)


def _saturating_truncation(value: float, low: int, high: int) -> int:
    if math.isnan(value):
        return 0
    if value >= high:
        return high
    if value <= low:
        return low
    return int(value)


def int_to_double(value: int) -> float:
    """``BigInteger.doubleValue``: the nearest double, infinite beyond the double range."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def to_float32(value: float) -> float:
    """``(float) d``: the nearest float32 (ties to even), as a Python float."""
    if math.isnan(value) or math.isinf(value):
        return value
    if abs(value) >= _FLOAT32_OVERFLOW:
        return math.copysign(math.inf, value)
    return struct.unpack(">f", struct.pack(">f", value))[0]


def _float32_neighbour(value: float, towards: float) -> float:
    """The float32 next to ``value`` in the direction of ``towards``."""
    bits = struct.unpack(">i", struct.pack(">f", value))[0]
    step = 1 if (towards > value) == (value >= 0) else -1
    if value == 0:
        bits, step = (0 if towards > 0 else -(2**31)), 1
    return struct.unpack(">f", struct.pack(">i", bits + step))[0]


def exact_to_float32(value: int | decimal.Decimal) -> float:
    """``BigDecimal.floatValue`` / ``(float) long``: the float32 nearest to the exact value.

    Rounding first to a double and then to a float32 is only wrong when the
    double lands exactly halfway between two float32s; that case is settled
    by comparing with the exact value.
    """
    as_double = int_to_double(value) if isinstance(value, int) else float(value)
    result = to_float32(as_double)
    if result == as_double or math.isinf(result) or math.isnan(result):
        return result
    other = _float32_neighbour(result, as_double)
    midpoint = (result + other) / 2
    if midpoint != as_double or math.isinf(other):
        return result
    exact, mid = Fraction(value), Fraction(midpoint)
    if exact == mid:
        return result  # a true tie: to_float32 already rounded half to even
    return other if (exact > mid) == (other > result) else result


def java_long_value(value: int | float | decimal.Decimal) -> int:
    """``Number.longValue`` of an int, float or Decimal."""
    if isinstance(value, float):
        return double_to_long(value)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise ValueError(f"A BigDecimal cannot be {value}")
        if value.as_tuple().exponent >= 64:  # type: ignore[operator]
            return 0  # a multiple of 10**64 is one of 2**64: its low 64 bits are zero
        value = int(value)  # BigDecimal.longValue: truncate, then keep the low 64 bits
    return wrap_int(value, 64)


def java_double_value(value: int | float | decimal.Decimal) -> float:
    """``Number.doubleValue`` of an int, float or Decimal."""
    if isinstance(value, int):
        return int_to_double(value)
    return float(value)


# ======================================================================================
# Parsing
# ======================================================================================

# BigDecimal(String): optional sign, digits with an optional point, optional exponent.
_BIG_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")
# Double.parseDouble after trim(): decimal or hexadecimal, optional f/F/d/D suffix.
_DOUBLE = re.compile(
    r"[+-]?(?:NaN|Infinity|"
    r"(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|"
    r"0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)"
)


def parse_big_decimal(text: str) -> decimal.Decimal:
    """``new BigDecimal(text)``."""
    if not _BIG_DECIMAL.fullmatch(text):
        raise NumberFormatError(f"Not a BigDecimal: {text!r}")
    return decimal.Decimal(text)


def parse_integer(text: str, bits: int = 64) -> int:
    """``Long.parseLong`` (``Integer.parseInt``, ... for fewer ``bits``): no blanks, in range."""
    if not _INTEGER.fullmatch(text):
        raise NumberFormatError(f'For input string: "{text}"')
    value = int(text)
    if wrap_int(value, bits) != value:
        raise NumberFormatError(f'For input string: "{text}"')
    return value


def parse_double(text: str) -> float:
    """``Double.parseDouble``: leading and trailing blanks (<= U+0020) are ignored."""
    trimmed = java_trim(text)
    if not _DOUBLE.fullmatch(trimmed):
        raise NumberFormatError(f'For input string: "{text}"')
    body = trimmed if trimmed.endswith(("NaN", "Infinity")) else trimmed.rstrip("fFdD")
    if "x" in body.lower():
        sign = -1.0 if body.startswith("-") else 1.0
        return sign * float.fromhex(body.lstrip("+-"))
    return float(body.replace("Infinity", "inf"))


# ======================================================================================
# toString
# ======================================================================================


def double_to_string(value: float) -> str:
    """``Double.toString``: ``1.0``, ``1.0E7``, ``1.0E-4``, ``4.9E-324``, ``NaN``, ``-Infinity``."""
    special = _special_text(value)
    if special is not None:
        return special
    magnitude = abs(value)
    # repr is the shortest text that reads back as the value: only its length is used.
    shortest = len(_significant_digits(decimal.Decimal(repr(magnitude))))
    digits, exponent = _closest_decimal(magnitude, max(shortest, 2), _reads_back_as_double)  # type: ignore[misc]
    return _layout(value < 0, digits, exponent)


def float_to_string(value: float) -> str:
    """``Float.toString((float) value)``: beyond the float32 range that is ``Infinity``."""
    value = to_float32(value)
    special = _special_text(value)
    if special is not None:
        return special
    magnitude = abs(value)
    shortest = next(length for length in range(1, 10)
                    if _closest_decimal(magnitude, length, _reads_back_as_float32) is not None)
    digits, exponent = _closest_decimal(magnitude, max(shortest, 2), _reads_back_as_float32)  # type: ignore[misc]
    return _layout(value < 0, digits, exponent)


def decimal_to_string(value: decimal.Decimal) -> str:
    """``BigDecimal.toString``: Python's scientific-notation rule is Java's, minus ``-0``."""
    if not value.is_finite():
        raise ValueError(f"A BigDecimal cannot be {value}")
    if value.is_zero() and value.is_signed():
        value = value.copy_abs()
    return str(value)


def _special_text(value: float) -> str | None:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    return None


def _significant_digits(number: decimal.Decimal) -> str:
    """The significant digits of a positive decimal, without trailing zeros."""
    return "".join(map(str, number.as_tuple().digits)).rstrip("0")


def _reads_back_as_double(text: decimal.Decimal, value: float) -> bool:
    return float(text) == value


def _reads_back_as_float32(text: decimal.Decimal, value: float) -> bool:
    return exact_to_float32(text) == value


def _closest_decimal(value: float, length: int,
                     reads_back: Callable[[decimal.Decimal, float], bool]) -> tuple[str, int] | None:
    """The ``length``-digit decimal closest to ``value`` that rounds back to it, if any.

    Returns its significant digits and the exponent of the first digit. The
    nearest such decimal is one of the two that bracket the value; correctly
    rounded formatting gives the nearer (ties to an even last digit, as Java),
    and the other one counts when the nearer lies outside the rounding interval.
    """
    nearest = decimal.Decimal(f"{value:.{length - 1}e}")
    if not reads_back(nearest, value):
        step = decimal.Decimal(1).scaleb(nearest.adjusted() - length + 1)
        below = nearest < decimal.Decimal(value)
        nearest = nearest + step if below else nearest - step
        if not reads_back(nearest, value):
            return None
    digits = _significant_digits(nearest) or "0"
    return digits, nearest.adjusted()


def _layout(negative: bool, digits: str, exponent: int) -> str:
    """Plain notation for 1e-3 <= |x| < 1e7, else ``d.dddE<n>``; a digit after the point always."""
    sign = "-" if negative else ""
    if -3 <= exponent < 7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            fraction = digits[exponent + 1:] or "0"
        else:
            whole, fraction = "0", "0" * (-exponent - 1) + digits
        return f"{sign}{whole}.{fraction}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"
