"""``java.util.regex`` patterns and replacement strings, translated to Python's ``re``."""

from __future__ import annotations

import re

# ======================================================================================
# java.util.regex patterns and replacements
# ======================================================================================

_POSIX_CLASSES = {
    "Lower": "a-z", "Upper": "A-Z", "ASCII": "\\x00-\\x7f", "Alpha": "a-zA-Z", "Digit": "0-9",
    "Alnum": "a-zA-Z0-9", "Punct": "!-/:-@\\[-`{-~", "Graph": "!-~", "Print": " -~",
    "Blank": " \\t", "Cntrl": "\\x00-\\x1f\\x7f", "XDigit": "0-9a-fA-F", "Space": " \\t\\n\\x0b\\f\\r",
    "javaLowerCase": "a-z", "javaUpperCase": "A-Z", "javaWhitespace": " \\t\\n\\x0b\\f\\r\\x1c-\\x1f",
    "L": "a-zA-Z", "IsL": "a-zA-Z", "IsLetter": "a-zA-Z", "IsAlphabetic": "a-zA-Z",
    "Lu": "A-Z", "IsLu": "A-Z", "IsUppercase": "A-Z", "Ll": "a-z", "IsLl": "a-z", "IsLowercase": "a-z",
    "N": "0-9", "Nd": "0-9", "IsDigit": "0-9", "IsWhite_Space": " \\t\\n\\x0b\\f\\r",
    "IsPunctuation": "!-/:-@\\[-`{-~", "InBasicLatin": "\\x00-\\x7f",
}
# Java's horizontal and vertical whitespace (\h, \v), which Python's re lacks.
_HORIZONTAL_SPACE = " \\t\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000"
_VERTICAL_SPACE = "\\n\\x0b\\f\\r\\x85\\u2028\\u2029"
# Escapes whose translation is the same text wherever they stand.
_FIXED_ESCAPES = {
    "z": "\\Z",
    "Z": "(?=[\\n\\r\\x85\\u2028\\u2029]?\\Z)",
    "h": f"[{_HORIZONTAL_SPACE}]",
    "H": f"[^{_HORIZONTAL_SPACE}]",
    "v": f"[{_VERTICAL_SPACE}]",
    "V": f"[^{_VERTICAL_SPACE}]",
    "R": f"(?:\\r\\n|[{_VERTICAL_SPACE}])",
    "e": "\\x1b",
}
_JAVA_FLAGS = {"i": "i", "m": "m", "s": "s", "x": "x", "u": "", "U": "", "d": ""}
_QUANTIFIER = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")


class JavaRegexError(ValueError):
    """A pattern ``java.util.regex.Pattern`` would reject, or one that cannot be translated."""


def _translate_java_regex(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = 0
    # For each open group: how many extra ')' to emit when it closes (scoped inline flags).
    group_stack: list[int] = []
    top_level_closers = 0
    # What the previous step emitted: "atom" (something a quantifier can follow) or "open"
    # (pattern start, a group opening, '|'), after which Java reads '{' literally.
    last_kind = "open"

    def error(message: str) -> JavaRegexError:
        return JavaRegexError(f"{message} near index {i}\n{pattern}")

    while i < n:
        c = pattern[i]
        can_repeat = last_kind == "atom"
        last_kind = "atom"
        if c == "\\":
            if i + 1 >= n:
                raise error("Unexpected internal error")
            d = pattern[i + 1]
            if d == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2:] if end < 0 else pattern[i + 2:end]
                out.append(re.escape(literal))
                i = n if end < 0 else end + 2
                continue
            if d in "pP":
                m = re.compile(r"\{(\^?)([A-Za-z_]+)\}|([A-Za-z])").match(pattern, i + 2)
                if not m:
                    raise error("Illegal/unsupported character property")
                negate_inner = bool(m.group(1))
                name = m.group(2) or m.group(3)
                if name.startswith("Is") and name[2:] in _POSIX_CLASSES and name not in _POSIX_CLASSES:
                    name = name[2:]
                if name not in _POSIX_CLASSES:
                    raise error(f"Unknown character property name {{{name}}}")
                ranges = _POSIX_CLASSES[name]
                negate = (d == "P") != negate_inner
                if in_class:
                    if negate:
                        raise error("Negated character properties inside a class are not supported")
                    out.append(ranges)
                else:
                    out.append(("[^" if negate else "[") + ranges + "]")
                i = m.end()
                continue
            if d == "k":
                m = re.compile(r"<([A-Za-z][A-Za-z0-9]*)>").match(pattern, i + 2)
                if not m:
                    raise error("\\k is not followed by '<' for named capturing group")
                out.append(f"(?P={m.group(1)})")
                i = m.end()
                continue
            if d in _FIXED_ESCAPES:
                out.append(_FIXED_ESCAPES[d])
            elif d == "c":
                if i + 2 >= n:
                    raise error("Illegal control escape sequence")
                out.append("\\x%02x" % (ord(pattern[i + 2]) ^ 64))
                i += 3
                continue
            elif d == "x" and i + 2 < n and pattern[i + 2] == "{":
                end = pattern.find("}", i + 3)
                if end < 0:
                    raise error("Unclosed hexadecimal escape sequence")
                out.append(re.escape(chr(int(pattern[i + 3:end], 16))))
                i = end + 1
                continue
            elif d == "0":
                m = re.compile(r"[0-3]?[0-7]{1,2}").match(pattern, i + 2)
                if not m:
                    raise error("Illegal octal escape sequence")
                out.append("\\x%02x" % int(m.group(0), 8))
                i = m.end()
                continue
            elif d in "GX":
                raise error(f"Escape sequence \\{d} is not supported")
            elif d.isalpha() and d not in "tnrfaswdSWDbBAuxE":
                raise error("Illegal/unsupported escape sequence")
            else:
                out.append(c + d)
            i += 2
            continue
        if in_class:
            if c == "[":
                raise error("Nested character classes are not supported")
            if c == "&" and pattern.startswith("&&", i):
                raise error("Character class intersections are not supported")
            if c == "]":
                in_class -= 1
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = 1
            out.append(c)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                # Java, like Python, takes a ']' right after '[' (or '[^') literally.
                out.append("\\]")
                i += 1
            continue
        if c == "(":
            if pattern.startswith("(?<", i) and i + 3 < n and pattern[i + 3] not in "=!":
                m = re.compile(r"\(\?<([A-Za-z][A-Za-z0-9]*)>").match(pattern, i)
                if not m:
                    raise error("capturing group name does not start with a Latin letter")
                out.append(f"(?P<{m.group(1)}>")
                last_kind = "open"
                group_stack.append(0)
                i = m.end()
                continue
            if pattern.startswith("(?P", i):
                raise error("Unknown inline modifier")
            m = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])").match(pattern, i)
            if m and (m.group(1) or m.group(2) is not None):
                on, off, closer = m.group(1), m.group(2) or "", m.group(3)
                for flag in on + off:
                    if flag not in _JAVA_FLAGS:
                        raise error("Unknown inline modifier")
                py_on = "".join(_JAVA_FLAGS[f] for f in on)
                py_off = "".join(_JAVA_FLAGS[f] for f in off)
                spec = py_on + (("-" + py_off) if py_off else "")
                if closer == ":":
                    out.append(f"(?{spec}:" if spec else "(?:")
                    group_stack.append(0)
                elif spec and not out and not group_stack and not py_off:
                    out.append(f"(?{spec})")  # flags for the whole pattern
                elif spec:
                    # Java lets inline flags switch on mid-pattern until the enclosing group
                    # ends; Python wants them scoped: open a group closed with the enclosing one.
                    out.append(f"(?{spec}:")
                    if group_stack:
                        group_stack[-1] += 1
                    else:
                        top_level_closers += 1
                last_kind = "open"
                i = m.end()
                continue
            last_kind = "open"
            group_stack.append(0)
            out.append(c)
            i += 1
            continue
        if c == ")":
            if not group_stack:
                raise error("Unmatched closing ')'")
            out.append(")" * group_stack.pop())
            out.append(")")
            i += 1
            continue
        if c == "{":
            m = _QUANTIFIER.match(pattern, i)
            if not m:
                raise error("Illegal repetition")
            if m.group(3) and int(m.group(3)) < int(m.group(1)):
                raise error("Illegal repetition range")
            if not can_repeat:
                # Java repeats an empty node where nothing precedes the braces.
                out.append("(?:)")
            out.append(m.group(0))
            i = m.end()
            continue
        if c == "|":
            last_kind = "open"
        out.append(c)
        i += 1
    if in_class:
        raise error("Unclosed character class")
    if group_stack:
        raise error("Unclosed group")
    out.append(")" * top_level_closers)
    return "".join(out)


_REGEX_CACHE: dict[str, re.Pattern] = {}


def compile_java_regex(pattern: str) -> re.Pattern:
    """Compile a ``java.util.regex`` pattern as an equivalent Python pattern.

    Java's defaults are kept: ``\\w``, ``\\d``, ``\\s``, ``\\b`` and case folding
    are ASCII-only. Java syntax is translated (named groups ``(?<n>...)``,
    ``\\k<n>``, ``\\Q...\\E``, ``\\p{Alpha}``-style classes, ``\\z``, ``\\h``,
    inline flags in the middle of a pattern); constructs Java rejects (such as
    ``(?P<n>...)`` or ``{`` that is not a quantifier) and the few Java has but
    Python lacks (class intersection ``&&``, nested classes, ``\\G``, ``\\X``)
    raise :class:`JavaRegexError`.
    """
    if pattern is None:
        raise JavaRegexError("null pattern")
    cached = _REGEX_CACHE.get(pattern)
    if cached is not None:
        return cached
    translated = _translate_java_regex(pattern)
    try:
        compiled = re.compile(translated, re.ASCII)
    except re.error as exc:
        raise JavaRegexError(f"{exc.msg} near index {exc.pos}\n{pattern}") from None
    if len(_REGEX_CACHE) < 256:
        _REGEX_CACHE[pattern] = compiled
    return compiled


class JavaReplacement:
    """A ``Matcher.replaceFirst`` replacement string: ``$n``, ``${name}``, ``\\`` escapes.

    The template is checked against the pattern's groups up front; a template
    Java would reject raises the same error when it is used (Kafka only calls
    ``replaceFirst`` when a topic matches), via :meth:`expand`.
    """

    def __init__(self, template: str, pattern: re.Pattern):
        self.template = template
        self._parts: list[str | int] = []
        self._error: Exception | None = None
        try:
            self._parts = self._parse(template, pattern)
        except (ValueError, IndexError) as exc:
            self._error = exc

    @staticmethod
    def _parse(template: str, pattern: re.Pattern) -> list[str | int]:
        parts: list[str | int] = []
        literal: list[str] = []
        group_count = pattern.groups
        i, n = 0, len(template)
        while i < n:
            c = template[i]
            if c == "\\":
                i += 1
                if i >= n:
                    raise ValueError("character to be escaped is missing")
                literal.append(template[i])
                i += 1
            elif c == "$":
                i += 1
                if i >= n:
                    raise ValueError("Illegal group reference: group index is missing")
                if template[i] == "{":
                    i += 1
                    start = i
                    while i < n and (template[i].isascii() and template[i].isalnum()):
                        i += 1
                    if start == i:
                        raise ValueError("named capturing group has 0 length name")
                    if i >= n or template[i] != "}":
                        raise ValueError("named capturing group is missing trailing '}'")
                    name = template[start:i]
                    i += 1
                    if not name[0].isalpha():
                        raise ValueError("capturing group name {" + name + "} starts with digit character")
                    if name not in pattern.groupindex:
                        raise ValueError("No group with name {" + name + "}")
                    ref: int = pattern.groupindex[name]
                else:
                    if not template[i].isdigit() or not template[i].isascii():
                        raise ValueError("Illegal group reference")
                    ref = int(template[i])
                    i += 1
                    if ref > group_count:
                        raise IndexError(f"No group {ref}")
                    while i < n and template[i].isascii() and template[i].isdigit():
                        candidate = ref * 10 + int(template[i])
                        if candidate > group_count:
                            break
                        ref = candidate
                        i += 1
                if literal:
                    parts.append("".join(literal))
                    literal.clear()
                parts.append(ref)
            else:
                literal.append(c)
                i += 1
        if literal:
            parts.append("".join(literal))
        return parts

    def expand(self, match: re.Match) -> str:
        if self._error is not None:
            raise self._error
        return "".join(
            part if isinstance(part, str) else (match.group(part) or "") for part in self._parts
        )

    def replace_first(self, pattern: re.Pattern, text: str) -> str:
        """``matcher.replaceFirst(replacement)``: the first match (a search) is replaced."""
        match = pattern.search(text)
        if match is None:
            return text
        return text[:match.start()] + self.expand(match) + text[match.end():]
