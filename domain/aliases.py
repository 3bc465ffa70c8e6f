"""Alias normalisation, slugs and default headings.

An alias is the key the compiler matches page names on ("Chef João" in one memory, "chef joao" in
another); a slug is the page's URL-safe identity within (tenant, owner, type).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter

SLUG_MAX_LENGTH = 120

_WHITESPACE_RUN = re.compile(r"\s+")
_SLUG_DISALLOWED = re.compile(r"[^a-z0-9\s-]+")
_DASH_RUN = re.compile(r"-+")
_HEADING_SEPARATORS = re.compile(r"[_-]+")
# The combining diacritics block: after NFKD an accented letter is its base letter plus one of these.
_COMBINING_DIACRITICS = re.compile("[\u0300-\u036f]")


def _fold_diacritics(text: str) -> str:
    # Decompose, drop every combining mark, recompose: "joão" -> "joao", "i̇stanbul" -> "istanbul".
    # Recomposing keeps scripts whose letters decompose without marks (Hangul) in their usual form.
    decomposed = unicodedata.normalize("NFKD", text)
    unmarked = "".join(ch for ch in decomposed if not unicodedata.category(ch).startswith("M"))
    return unicodedata.normalize("NFC", unmarked)


def _is_alias_char(ch: str) -> bool:
    return ch.isalpha() or unicodedata.category(ch).startswith("N") or ch.isspace() or ch in "'-"


# Pure and called for every name of every candidate page on each batch: memoised.
@functools.lru_cache(maxsize=65_536)
def normalize_alias(raw: str) -> str:
    """The matching key of a name.

    NFKC, lowercase, fold diacritics, keep letters, digits, whitespace, `'` and `-` (anything else
    becomes a space), collapse whitespace, trim. Diacritics are folded, so a name matches with or
    without its accents: "Chef João" -> "chef joao", "İstanbul" -> "istanbul".
    """
    folded = _fold_diacritics(unicodedata.normalize("NFKC", raw).lower())
    kept = "".join(ch if _is_alias_char(ch) else " " for ch in folded)
    return _WHITESPACE_RUN.sub(" ", kept).strip()


def seed_aliases_for_title(title: str) -> list[str]:
    """The aliases every page gets from its own title: its normalised form, if not empty."""
    primary = normalize_alias(title)
    return [primary] if primary else []


def slugify_title(title: str) -> str:
    """URL-safe slug of a title, by one fixed algorithm: a page's URL must not move between compiles.

    NFKD, drop U+0300–U+036F, lowercase, runs of characters outside `[a-z0-9\\s-]` become a space,
    trim, whitespace runs become `-`, dash runs collapse, edge dashes go, then cut at 120 characters
    (after the dash trim, so a cut can end on a dash). "Straße" -> "stra-e"; "東京" -> "" (the caller
    then falls back to the planner's slug).
    """
    slug = _COMBINING_DIACRITICS.sub("", unicodedata.normalize("NFKD", title)).lower()
    slug = _SLUG_DISALLOWED.sub(" ", slug).strip()
    slug = _DASH_RUN.sub("-", _WHITESPACE_RUN.sub("-", slug)).strip("-")
    return slug[:SLUG_MAX_LENGTH]


def title_in_city(title: str, city: str) -> str:
    """A place's title beside a namesake in another city: its name and its city ("Piari Coffee
    (Tucson)"), one form for the planner that proposes it and the resolver that meets it."""
    return f"{title} ({city})"


def format_heading_from_slug(slug: str) -> str:
    """Heading for a section created without one.

    Split on runs of `_`/`-`, upper-case the first character of each part, join with spaces:
    "visits" -> "Visits", "parks-and_outdoors" -> "Parks And Outdoors" (not the template's heading).
    """
    parts = _HEADING_SEPARATORS.split(slug)
    return " ".join(part[:1].upper() + part[1:] for part in parts)


# pg_trgm's word split: runs of letters and digits (Unicode-aware, like pg_trgm in a UTF-8 database).
_TRIGRAM_WORD = re.compile(r"[^\W_]+")


@functools.lru_cache(maxsize=65_536)
def trigrams(text: str) -> frozenset[str]:
    """pg_trgm's trigram set: lowercase, split into alphanumeric words, pad each as "  word "."""
    grams: set[str] = set()
    for word in _TRIGRAM_WORD.findall(text.lower()):
        padded = f"  {word} "
        grams.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return frozenset(grams)


def trigram_similarity(a: str, b: str) -> float:
    """pg_trgm's `similarity(a, b)`: shared trigrams over all distinct trigrams of both.

    Lets the resolver compare two proposals of one plan the way it compares a proposal with the
    stored aliases (where Postgres computes it).
    """
    left, right = trigrams(a), trigrams(b)
    union = left | right
    return len(left & right) / len(union) if union else 0.0


@functools.lru_cache(maxsize=65_536)  # pure; asked for every spelling of a subject each time its title is read
def is_properly_cased(name: str) -> bool:
    """Whether a name is written with both capitals and small letters ("Contramar", "iPhone"), not
    shouted ("CONTRAMAR") nor typed in lower case ("zilker park"). A name without cased letters
    ("東京") has no casing to get wrong."""
    cased = [ch for ch in name if ch.isalpha() and ch.upper() != ch.lower()]
    if not cased:
        return True
    return any(ch.isupper() for ch in cased) and any(ch.islower() for ch in cased)


def best_attested(spellings: list[str]) -> str:
    """The form a page takes among the spellings its memories use: the most frequent properly cased
    one; only when none is properly cased, the most frequent of all. Ties go to the first seen."""
    proper = [spelling for spelling in spellings if is_properly_cased(spelling)]
    counts = Counter(proper or spellings)
    # Counter keeps first-seen order and max() keeps the first of equals.
    return max(counts, key=counts.__getitem__) if counts else ""


def attested_title(title: str, attested: list[tuple[str, int]]) -> str:
    """The title a page takes from the spellings of its name that its cited memories use, as
    (spelling, how many memories write it), first seen first: the most frequent properly cased one,
    the first seen of equals. The title stays when no properly cased spelling is attested, so a page
    is never re-titled into a shouted or lower-case form by the evidence."""
    proper = [(spelling, count) for spelling, count in attested if spelling and is_properly_cased(spelling)]
    if not proper:
        return title
    # max() keeps the first of equals: the spelling seen first.
    return max(proper, key=lambda pair: pair[1])[0]
