"""What a name says: its core, what people add around it, and what kind of thing it names.

A name is parsed into a core name and what people add around it:

- a qualifier: "Uchi (Austin)", "Paris, Texas", "Contramar, Mexico City" (state and a few country
  codes spelt out, so "TX" and "Texas" are one qualifier);
- a leading article: "The Hotel San José";
- a descriptive appositive: "Biscuit the dog", "Biscuit, our dog", "our dog Biscuit", "Dr. Okafor".

A page's kind (a person, a pet, a venue, a region, a trip, a project, a decision) is read from its
type, its names' descriptors and its summary's first words. The resolution ladder
(domain/resolution.py) compares parsed names; the merge judges read kinds and places.
"""

from __future__ import annotations

import functools
import re

from nameparser import HumanName
from pydantic import BaseModel, ConfigDict

from domain.aliases import normalize_alias
from domain.closed_class import ENGLISH_ARTICLES, HONORIFICS, POSSESSIVE_DETERMINERS
from domain.kinds import Kind, kind_of_word
from domain.name_key import name_key

# ----------------------------------------------------------------------------------------- kinds
# The words that say what a page is about, by class, are domain/kinds.py's vocabulary. Two pages whose
# kinds are of different classes are different things whatever their names; sub-kinds (a hotel, a
# bar) only inform the judge.
_SUMMARY_WORDS_READ = 12


@functools.lru_cache(maxsize=65_536)
def infer_kind(page_type: str, summary: str | None, descriptors: tuple[str, ...] = ()) -> Kind | None:
    """What a page is about, from its type, its summary's first words and its names' descriptors
    ("Biscuit the dog"); None when nothing says."""
    if page_type == "decision":
        return Kind(cls="decision", word="decision")
    for descriptor in descriptors:
        for word in descriptor.split():
            if (kind := kind_of_word(word)) is not None:
                return kind
    for word in normalize_alias(summary or "").split()[:_SUMMARY_WORDS_READ]:
        if (kind := kind_of_word(word)) is not None:
            return kind
    return None


def kinds_conflict(a: Kind | None, b: Kind | None) -> bool:
    return a is not None and b is not None and a.cls != b.cls


# ----------------------------------------------------------------------------------- qualifiers

_US_STATES = {
    "al": "alabama", "ak": "alaska", "az": "arizona", "ar": "arkansas", "ca": "california", "co": "colorado",
    "ct": "connecticut", "de": "delaware", "fl": "florida", "ga": "georgia", "hi": "hawaii", "id": "idaho",
    "il": "illinois", "in": "indiana", "ia": "iowa", "ks": "kansas", "ky": "kentucky", "la": "louisiana",
    "me": "maine", "md": "maryland", "ma": "massachusetts", "mi": "michigan", "mn": "minnesota",
    "ms": "mississippi", "mo": "missouri", "mt": "montana", "ne": "nebraska", "nv": "nevada",
    "nh": "new hampshire", "nj": "new jersey", "nm": "new mexico", "ny": "new york", "nc": "north carolina",
    "nd": "north dakota", "oh": "ohio", "ok": "oklahoma", "or": "oregon", "pa": "pennsylvania",
    "ri": "rhode island", "sc": "south carolina", "sd": "south dakota", "tn": "tennessee", "tx": "texas",
    "ut": "utah", "vt": "vermont", "va": "virginia", "wa": "washington", "wv": "west virginia",
    "wi": "wisconsin", "wy": "wyoming", "dc": "district of columbia",
}
_OTHER_PLACES = {
    "uk": "united kingdom", "gb": "united kingdom", "england": "united kingdom", "us": "united states",
    "usa": "united states", "u s a": "united states", "cdmx": "mexico city", "on": "ontario", "qc": "quebec",
    "bc": "british columbia",
}
_QUALIFIER_NAMES = {**_US_STATES, **_OTHER_PLACES}
_SHORT_FORMS: dict[str, list[str]] = {}
for _short, _full in _QUALIFIER_NAMES.items():
    _SHORT_FORMS.setdefault(_full, []).append(_short)


def canonical_qualifier(qualifier: str) -> str:
    """A qualifier's one spelling: state and a few country codes spelt out ("TX" -> "texas")."""
    key = normalize_alias(qualifier)
    return _QUALIFIER_NAMES.get(key, key)


def qualifier_forms(qualifier: str) -> list[str]:
    """Every way the qualifier may be written in evidence: "texas" -> ["texas", "tx"]."""
    full = canonical_qualifier(qualifier)
    return [full, *_SHORT_FORMS.get(full, [])] if full else []


# ------------------------------------------------------------------------------------- parsing

_LEADS = POSSESSIVE_DETERMINERS | ENGLISH_ARTICLES  # "our dog", "the dog": a descriptor's first word
_TRAILING_PARENS = re.compile(r"^(?P<base>.*\S)\s*\((?P<inner>[^()]*)\)\s*$")


class ParsedName(BaseModel):
    model_config = ConfigDict(frozen=True)

    normalized: str
    core: str
    qualifier: str = ""  # canonical ("texas")
    descriptors: tuple[str, ...] = ()  # normalised ("our dog", "dr")
    key: str = ""  # the core's name key (domain/name_key.py): what the ladder compares

    @property
    def tokens(self) -> tuple[str, ...]:
        return tuple(self.key.split())


def _is_descriptor(text: str) -> bool:
    words = normalize_alias(text).split()
    return bool(words) and (words[0] in _LEADS or all(kind_of_word(w) for w in words))


@functools.lru_cache(maxsize=65_536)
def parse_name(raw: str) -> ParsedName:
    """A name's core, qualifier and descriptors. Works on raw names (the plan's titles and aliases)
    and, with less to go on, on stored aliases, which are normalised and have lost their brackets."""
    base, qualifier, descriptors = raw.strip(), "", []
    if (match := _TRAILING_PARENS.match(base)) is not None:
        base, inner = match.group("base"), match.group("inner")
        if _is_descriptor(inner):
            descriptors.append(normalize_alias(inner))
        else:
            qualifier = inner
    head, comma, tail = base.rpartition(",")
    if comma and head.strip() and tail.strip() and name_key(f"{head} {tail}") == name_key(head):
        base = f"{head} {tail}"  # ", Inc.": a legal form the name key drops, no qualifier
    elif comma and head.strip() and tail.strip():
        if _is_descriptor(tail):
            descriptors.append(normalize_alias(tail))
        elif not qualifier:
            qualifier = tail
        base = head
    words = base.split()
    # "our dog Biscuit", "my sister Marguerite"
    if len(words) >= 3 and words[0].lower() in POSSESSIVE_DETERMINERS and kind_of_word(normalize_alias(words[1])):
        descriptors.append(normalize_alias(" ".join(words[:2])))
        words = words[2:]
    # "Biscuit the dog": a lower-case kind word after "the" (a capitalised one is part of the name).
    if len(words) >= 3 and words[-2].lower() == "the" and words[-1].islower() and kind_of_word(words[-1]):
        descriptors.append(normalize_alias(" ".join(words[-2:])))
        words = words[:-2]
    if len(words) >= 2 and normalize_alias(words[0]) in HONORIFICS:
        descriptors.append(normalize_alias(words[0]))
        words = words[1:]
    if len(words) >= 2 and words[0].lower() == "the":
        words = words[1:]
    # "Odd Duck restaurant": a trailing kind word in lower case after a capitalised name says what it is.
    if len(words) >= 2 and words[-1].islower() and kind_of_word(words[-1]) and any(w[:1].isupper() for w in words):
        descriptors.append(words[-1])
        words = words[:-1]
    core = normalize_alias(" ".join(words))
    qualifier = canonical_qualifier(qualifier)
    return ParsedName(normalized=normalize_alias(raw), core=core, qualifier=qualifier,
                      descriptors=tuple(d for d in descriptors if d), key=name_key(" ".join(words)))


def first_last(raw: str) -> str | None:
    """A "Last, First" name in the usual order (nameparser): "Okafor, Ngozi" -> "Ngozi Okafor"; None
    when the name has no such comma."""
    head, comma, tail = raw.partition(",")
    if not comma or not head.strip() or not tail.strip() or "," in tail or _is_descriptor(tail):
        return None
    parsed = HumanName(raw)
    ordered = " ".join(part for part in (parsed.first, parsed.middle, parsed.last) if part)
    return ordered if ordered and normalize_alias(ordered) != normalize_alias(raw) else None


# -------------------------------------------------------------------------------------- places

_PLACE_IN_SUMMARY = re.compile(r"\b(?:in|at|near) ((?:[A-Z][\w'’.-]*)(?:,? [A-Z][\w'’.-]*)*)")


def places_in(summary: str | None) -> list[str]:
    """The places a summary puts a page in: "Restaurant in Austin, TX." -> ["Austin, TX"]."""
    return [match.group(1) for match in _PLACE_IN_SUMMARY.finditer(summary or "")]
