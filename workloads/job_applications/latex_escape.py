"""Escaping text for pdflatex in one pass, with a fallback for characters T1/TS1 cannot print."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["Latex", "escape_latex", "latex_url", "printable"]

# One regex pass: a backslash escaped first and `{`/`}` later would escape the escape itself.
_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    # Brackets are safe as text, but not right after \item or \\ (an optional argument).
    "[": "{[}",
    "]": "{]}",
}
_PATTERN = re.compile(r"[\\&%$#_{}~^<>\[\]]|[^\x20-\x7e]")

# Code points that pdflatex with inputenc utf8, T1 + TS1 encodings and lmodern prints: the
# union of t1enc.dfu, ts1enc.dfu, omsenc.dfu and ot1enc.dfu (TeX Live 2022), each compiled and
# checked. Anything else would stop the build with "Unicode character … not set up".
# fmt: off
_PRINTABLE_RANGES = (
    (0x00A0, 0x0125), (0x0128, 0x0137), (0x0139, 0x013E), (0x0141, 0x0148), (0x014A, 0x0165),
    (0x0168, 0x017E), (0x0192, 0x0192), (0x01C4, 0x01D4), (0x01E2, 0x01E3), (0x01E6, 0x01EB),
    (0x01F0, 0x01F0), (0x01F4, 0x01F5), (0x0218, 0x021B), (0x0232, 0x0233), (0x0237, 0x0237),
    (0x02C7, 0x02C7), (0x02D8, 0x02D9), (0x02DB, 0x02DB), (0x02DD, 0x02DD), (0x0E3F, 0x0E3F),
    (0x1E02, 0x1E03), (0x1E0D, 0x1E0D), (0x1E1E, 0x1E21), (0x1E25, 0x1E25), (0x1E30, 0x1E31),
    (0x1E37, 0x1E37), (0x1E43, 0x1E43), (0x1E45, 0x1E45), (0x1E47, 0x1E47), (0x1E5B, 0x1E5B),
    (0x1E63, 0x1E63), (0x1E6D, 0x1E6D), (0x1E8E, 0x1E91), (0x1E9E, 0x1E9E), (0x1EF2, 0x1EF3),
    (0x2010, 0x2016), (0x2018, 0x201A), (0x201C, 0x201E), (0x2020, 0x2022), (0x2026, 0x2026),
    (0x2030, 0x2031), (0x2039, 0x203B), (0x203D, 0x203D), (0x2044, 0x2044), (0x204E, 0x204E),
    (0x2052, 0x2052), (0x20A1, 0x20A1), (0x20A4, 0x20A4), (0x20A6, 0x20A6), (0x20A9, 0x20A9),
    (0x20AB, 0x20AC), (0x20B1, 0x20B1), (0x2103, 0x2103), (0x2116, 0x2117), (0x211E, 0x211E),
    (0x2120, 0x2120), (0x2122, 0x2122), (0x2126, 0x2127), (0x212E, 0x212E), (0x2190, 0x2193),
    (0x2329, 0x232A), (0x2422, 0x2423), (0x25E6, 0x25E6), (0x25EF, 0x25EF), (0x266A, 0x266A),
    (0x27E8, 0x27E9), (0x3008, 0x3009), (0xFB00, 0xFB06),
)
# fmt: on
PRINTABLE = frozenset(chr(code) for low, high in _PRINTABLE_RANGES for code in range(low, high + 1))

# Common characters outside that set, replaced by their nearest printable look-alike.
_LOOKALIKES = {
    "\u2212": "-",  # minus sign
    "\u2032": "'",  # prime
    "\u2033": "''",
    "\u2009": " ",  # thin space
    "\u202f": " ",  # narrow no-break space
    "\u2003": " ",
    "\u2002": " ",
    "\u2028": " ",
    "\u00ad": "",  # soft hyphen: T1 prints it as a visible hyphen
}


def printable(char: str) -> str:
    """`char` if pdflatex can print it, else a look-alike, its accent-less letters, or `?`."""
    if char in _LOOKALIKES:
        return _LOOKALIKES[char]
    if char in PRINTABLE or " " <= char <= "~":
        return char
    if char in "\t\n\r\f\v":
        return " "
    folded = "".join(
        c for c in unicodedata.normalize("NFKD", char) if c in PRINTABLE or " " <= c <= "~"
    )
    if folded:
        return folded
    # Emoji, zero-width and control characters carry nothing a CV needs; drop them quietly.
    category = unicodedata.category(char)
    return "" if category[0] in "CSM" else "?"


class Latex(str):
    """Text that is already LaTeX (built here from escaped parts): the escaper passes it on."""


def escape_latex(value: object) -> str:
    """`str(value)` safe to paste into LaTeX body text; every special and unicode handled once."""
    if isinstance(value, Latex):
        return value
    return _PATTERN.sub(_replace, str(value))


# A URL breaks across lines only after a slash: each piece up to a slash is an \mbox (no
# hyphenation, no break at "-" or "."), with a break allowed between pieces. "//" stays whole.
_URL_PIECES = re.compile(r"(?<=/)(?!/)")
# T1 fonts join "--" into a dash and "''" or "!`" into quotes: an empty group keeps them apart.
_LIGATURE_STARTS = re.compile(r"([-'`!?,<>])(?=[-'`])")


def latex_url(url: object) -> Latex:
    """`url` as LaTeX that prints every character as is and breaks only after a '/'."""
    pieces = [_LIGATURE_STARTS.sub(r"\1{}", escape_latex(piece))
              for piece in _URL_PIECES.split(str(url).strip()) if piece]
    return Latex(r"\allowbreak{}".join(rf"\mbox{{{piece}}}" for piece in pieces))


def _replace(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _SPECIALS:
        return _SPECIALS[char]
    # A fallback may be ASCII with specials of its own (fullwidth ＄ folds to $): escape it too.
    return "".join(_SPECIALS.get(c, c) for c in printable(char))
