"""The resolution ladder: is a proposed page a page we already have (or another proposal) under another name?

Names are compared pairwise after parsing each into a core name and what people add around it (a
qualifier, a leading article, a descriptive appositive: domain/names.py), the core reduced to its
name key (domain/name_key.py: transliterated, number words as digits, postal and legal forms, articles
and titles gone). Every rung below reads keys.

The rungs, strongest first (`Rung`):

1. exact: the names normalise alike (domain.aliases.normalize_alias).
2. core: the same key, and the same qualifier or none ("Emmer & Rye" / "Emmer and Rye").
3. reorder: the same words in another order, or the same letters spaced otherwise ("JR Smith" /
   "J. R. Smith"); initials in another order are never this ("J. R. Smith" / "R. J. Smith").
4. typo: the same words but one, a slip of the keyboard in it: two letters swapped, or one more or
   less, in a word of seven letters or more (two such edits from ten); optimal string alignment
   distance, rapidfuzz's OSA. A replaced letter is no slip ("Soultomor" / "Soulromor").
5. similar: pg_trgm similarity of the keys >= 0.85, unless a letter is replaced or initials differ.
6. qualifier (ambiguous): the same key, qualified on one side only. A qualifier can name where a
   venue is ("Uchi (Austin)" is Uchi) or what tells two places apart ("Paris, Texas" is not Paris).
7. abbreviation (ambiguous): word for word the same but for words written short, their letters in
   order ("Intl" / "International", "J." / "John").
8. subset (ambiguous): one key's words are some of the other's ("The Driskill" / "The Driskill Bar").
9. acronym (ambiguous): one name is the other's initials ("TMM" / "Tistend Modern Museum").
10. near (ambiguous): one word a letter off ("Marian" / "Marion"), four letters or more.
11. nickname (ambiguous): a first name and another form of it, by the nickname tables of
    domain/name_words.py ("Mel" / "Melanie", "Bob Smith" / "Robert Smith", "Jon" / "John"): a candidate
    only; two people may bear the two forms, so only evidence joins them.

Ambiguous pairs go to the judge (domain/merge_questions.py: one model call per batch, the scripted
planner's judgement offline); confident ones merge. Guards before any of this: names of low
information (a single word under six letters, or a name of low character entropy) take only the
near rung, so "Uchi" never becomes "Uchiko"; different digits never merge ("Pier 39" / "Pier 38",
"Fifth" / "6th"); two different qualifiers never merge ("Uchi (Austin)" / "Uchi (Houston)"); different
page types merge only on an exact name; and two known kinds of different classes never merge
(Austin the city, Austin a person: the kind is read from the page summary, domain/names.py
`infer_kind`).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict
from rapidfuzz.distance import OSA, Levenshtein

from domain.aliases import trigram_similarity
from domain.closed_class import HONORIFICS
from domain.kinds import Kind
from domain.name_key import abbreviates, acronyms, blocking_keys, compact, name_key
from domain.name_words import are_nicknames, nickname_forms
from domain.names import ParsedName, first_last, infer_kind, kinds_conflict, parse_name

SIMILAR_THRESHOLD = 0.85
# Below these a name says too little for anything but an exact match (Graphiti gates its fuzzy
# matching the same way): a single word shorter than MIN_FUZZY_LETTERS, or low character entropy.
MIN_FUZZY_LETTERS = 6
MIN_NAME_ENTROPY = 1.5
TYPO_MIN_LETTERS = 7  # one edit
TYPO_TWO_EDITS_LETTERS = 10  # two edits
NEAR_MIN_LETTERS = 5
NICKNAME_FORMS = 12  # other forms of a first name looked up, at most
SHORT_NEAR_MIN_LETTERS = 4


class Rung(StrEnum):
    EXACT = "exact"
    CORE = "core"
    REORDER = "reorder"
    TYPO = "typo"
    SIMILAR = "similar"
    QUALIFIER = "qualifier"
    ABBREVIATION = "abbreviation"
    SUBSET = "subset"
    ACRONYM = "acronym"
    NEAR = "near"
    NICKNAME = "nickname"
    DISTINCT = "distinct"


CONFIDENT = (Rung.EXACT, Rung.CORE, Rung.REORDER, Rung.TYPO, Rung.SIMILAR)
AMBIGUOUS = (Rung.QUALIFIER, Rung.ABBREVIATION, Rung.SUBSET, Rung.ACRONYM, Rung.NEAR, Rung.NICKNAME)
_STRENGTH = {rung: index for index, rung in enumerate(Rung)}
_DIGITS = re.compile(r"\d+")


# ---------------------------------------------------------------------------------- similarity


def name_entropy(name: str) -> float:
    letters = name.replace(" ", "")
    if not letters:
        return 0.0
    counts = Counter(letters)
    return -sum(n / len(letters) * math.log2(n / len(letters)) for n in counts.values())


@functools.lru_cache(maxsize=65_536)
def is_informative(core: str) -> bool:
    """Enough information in a name for a fuzzy match: two words, or one of six letters or more,
    and not a run of few characters ("aaaa aaa")."""
    if not core:
        return False
    if len(core.split()) < 2 and len(core.replace(" ", "")) < MIN_FUZZY_LETTERS:
        return False
    return name_entropy(core) >= MIN_NAME_ENTROPY


def _one_word_apart(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, str] | None:
    if len(a) != len(b):
        return None
    different = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    return different[0] if len(different) == 1 else None


class Verdict(BaseModel):
    """How two names relate: the rung and the names it was found on."""

    model_config = ConfigDict(frozen=True)

    rung: Rung
    left: str = ""
    right: str = ""
    detail: str = ""  # qualifier (rung qualifier), the extra words (subset), the two spellings (typo, near)

    @property
    def confident(self) -> bool:
        return self.rung in CONFIDENT

    @property
    def ambiguous(self) -> bool:
        return self.rung in AMBIGUOUS

    def stronger_than(self, other: Verdict) -> bool:
        return _STRENGTH[self.rung] < _STRENGTH[other.rung]


DISTINCT = Verdict(rung=Rung.DISTINCT)


# Pure, and called for every pair of names of a proposal and its candidates (the scripted planner
# compares each subject of a batch with every candidate page): memoised.
@functools.lru_cache(maxsize=262_144)
def compare_names(a: ParsedName, b: ParsedName) -> Verdict:
    """The rung two parsed names meet on (see the module docstring)."""
    if not a.normalized or not b.normalized:
        return DISTINCT
    if a.normalized == b.normalized:
        return Verdict(rung=Rung.EXACT, left=a.normalized, right=b.normalized)
    if _DIGITS.findall(a.key) != _DIGITS.findall(b.key):
        return DISTINCT  # "Pier 39" / "Pier 38", "Fifth Street Deli" / "6th St Deli"
    qualifier_a, qualifier_b = name_key(a.qualifier), name_key(b.qualifier)
    if qualifier_a and qualifier_b and qualifier_a != qualifier_b:
        return DISTINCT
    if _descriptors_conflict(a, b):
        return DISTINCT  # "Biscuit the dog" / "Biscuit the cat", "Dr. Lowe" / "Mr. Lowe"
    rung, detail = _core_rung(a, b)
    if rung is Rung.DISTINCT:
        return DISTINCT
    qualifier = qualifier_a or qualifier_b
    if rung is Rung.SUBSET and qualifier_a != qualifier_b and not set(qualifier.split()) <= set(detail.split()):
        # "Athens, Greece" against a stored "athens georgia" (a normalised alias keeps no comma): the
        # longer name's extra words are another qualifier, not this one.
        return DISTINCT
    if qualifier_a != qualifier_b and rung in CONFIDENT:
        # One side qualified, the other not: the same core may be one place or two.
        return Verdict(rung=Rung.QUALIFIER, left=a.normalized, right=b.normalized,
                       detail=a.qualifier or b.qualifier)
    return Verdict(rung=rung, left=a.normalized, right=b.normalized, detail=detail)


def _descriptors_conflict(a: ParsedName, b: ParsedName) -> bool:
    """Two names that say what they are, differently: "the dog" / "the cat", "my sister" / "my aunt",
    or two titles, "Dr." / "Mr.". A title against a relation ("Dr. Okafor" / "Okafor, my colleague")
    is no conflict."""
    titles_a = {d for d in a.descriptors if d in HONORIFICS}
    titles_b = {d for d in b.descriptors if d in HONORIFICS}
    if titles_a and titles_b and not titles_a & titles_b:
        return True
    kind_a = infer_kind("", None, tuple(d for d in a.descriptors if d not in HONORIFICS))
    kind_b = infer_kind("", None, tuple(d for d in b.descriptors if d not in HONORIFICS))
    return kind_a is not None and kind_b is not None and kind_a != kind_b


def _initials(tokens: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(t for t in tokens if len(t) == 1 and t.isalpha())


def _abbreviated_words(a: tuple[str, ...], b: tuple[str, ...]) -> str:
    """The word pairs where one name abbreviates the other, word for word ("natl garden" / "national
    garden", "j smith" / "john smith"); "" when the names are not so related."""
    if len(a) != len(b):
        return ""
    pairs = []
    for x, y in zip(a, b, strict=True):
        if x == y:
            continue
        short, full = sorted((x, y), key=len)
        if not (abbreviates(short, full) or (len(short) == 1 and short.isalpha() and full[0] == short)):
            return ""
        pairs.append(f"{short}/{full}")
    return " ".join(pairs)


def _acronym_of(a: ParsedName, b: ParsedName) -> bool:
    """One name is a single word that is the other's acronym ("MoMA" / "Museum of Modern Art")."""
    short, full = (a, b) if len(a.tokens) <= len(b.tokens) else (b, a)
    letters = compact(short.key)
    one_word = len(short.tokens) == 1 or all(len(t) == 1 for t in short.tokens)
    return one_word and len(full.tokens) >= 2 and not full.key.startswith(short.key) and letters in acronyms(full.core)


def _core_rung(a: ParsedName, b: ParsedName) -> tuple[Rung, str]:
    if not a.key or not b.key:
        return Rung.DISTINCT, ""
    if a.key == b.key:
        return Rung.CORE, ""
    ta, tb = a.tokens, b.tokens
    if _acronym_of(a, b):
        return Rung.ACRONYM, f"{a.key}/{b.key}"
    if not (is_informative(a.key) and is_informative(b.key)):
        rung, detail = _short_rung(ta, tb)
        nickname = _nickname_of(ta, tb) if rung is Rung.DISTINCT else ""
        return (Rung.NICKNAME, nickname) if nickname else (rung, detail)
    if compact(a.key) == compact(b.key):
        return Rung.REORDER, ""  # "j r smith" / "jr smith", "sant eustachio" / "santeustachio"
    if sorted(ta) == sorted(tb):
        if _initials(ta) != _initials(tb):
            return Rung.DISTINCT, ""  # "J. R. Smith" / "R. J. Smith": initials in another order
        return Rung.REORDER, ""
    apart = _one_word_apart(ta, tb)
    if apart is not None and _is_slip(*apart):
        return Rung.TYPO, "/".join(apart)
    set_a, set_b = set(ta), set(tb)
    if set_a < set_b or set_b < set_a:
        return Rung.SUBSET, " ".join(sorted(set_a ^ set_b))
    # A letter replaced in one word is never similar enough alone ("soultomor" / "soulromor").
    replaced = apart is not None and "replace" in {op.tag for op in Levenshtein.editops(*apart)}
    if trigram_similarity(a.key, b.key) >= SIMILAR_THRESHOLD and _initials(ta) == _initials(tb) and not replaced:
        return Rung.SIMILAR, ""
    if abbreviated := _abbreviated_words(ta, tb):
        return Rung.ABBREVIATION, abbreviated
    if apart is not None:
        x, y = apart
        if min(len(x), len(y)) >= NEAR_MIN_LETTERS and OSA.distance(x, y) <= (2 if min(len(x), len(y)) >= 10 else 1):
            return Rung.NEAR, f"{x}/{y}"
    if nickname := _nickname_of(ta, tb):
        return Rung.NICKNAME, nickname
    return Rung.DISTINCT, ""


def _nickname_of(ta: tuple[str, ...], tb: tuple[str, ...]) -> str:
    """"mel/melanie" when the two names are the same but for a first name written in another form (a
    nickname or a translation), or when one is that other form of the other's first name alone."""
    if len(ta) == len(tb):
        apart = _one_word_apart(ta, tb)
        if apart is not None and ta.index(apart[0]) == 0 and are_nicknames(*apart):
            return "/".join(apart)
        return ""
    short, full = (ta, tb) if len(ta) < len(tb) else (tb, ta)
    return f"{short[0]}/{full[0]}" if len(short) == 1 and are_nicknames(short[0], full[0]) else ""


def _is_slip(x: str, y: str) -> bool:
    """A slip of the keyboard in a long word: two letters swapped ("margeurite" / "marguerite"), or one
    letter more or less ("naturall" / "natural"), in a word of TYPO_MIN_LETTERS or more; two such edits
    from TYPO_TWO_EDITS_LETTERS. A letter replaced by another is not: "soultomor" / "soulromor" may be
    two people, so that pair is the judge's (rung near)."""
    shortest = min(len(x), len(y))
    distance = OSA.distance(x, y)
    if not _no_replaced_letter(x, y):
        return False
    return (distance == 1 and shortest >= TYPO_MIN_LETTERS) or (distance == 2 and shortest >= TYPO_TWO_EDITS_LETTERS)


def _no_replaced_letter(x: str, y: str) -> bool:
    """Whether x becomes y by swaps of neighbouring letters and letters added or dropped only: when
    the edit script names a replacement, each swap that brings x closer is undone and the rest read
    again ("narpousgas" / "naprousgas" is a slip, "narpoudgas" / "naprousgas" a swap and a replaced
    letter)."""
    if "replace" not in {op.tag for op in Levenshtein.editops(x, y)}:
        return True
    distance = OSA.distance(x, y)
    for i in range(len(x) - 1):
        swapped = x[:i] + x[i + 1] + x[i] + x[i + 2:]
        if x[i] != x[i + 1] and OSA.distance(swapped, y) < distance and _no_replaced_letter(swapped, y):
            return True
    return False


def _short_rung(ta: tuple[str, ...], tb: tuple[str, ...]) -> tuple[Rung, str]:
    """Names too short for a confident fuzzy rung: only the judge may merge them, and only one word
    of four letters or more one edit apart ("Lnea" / "Lena") is put to it ("Uchi" / "Uchiko" is not)."""
    apart = _one_word_apart(ta, tb)
    if apart is None:
        return Rung.DISTINCT, ""
    x, y = apart
    if min(len(x), len(y)) >= SHORT_NEAR_MIN_LETTERS and OSA.distance(x, y) == 1:
        return Rung.NEAR, f"{x}/{y}"
    return Rung.DISTINCT, ""


# ------------------------------------------------------------------------------------ pages


class NameSet(BaseModel):
    """One side of a comparison: a proposed page or a stored one, by its names and what it is."""

    type: str
    names: list[str]  # title first; raw where known (plans), normalised for stored aliases
    summary: str | None = None

    # Read once per comparison set: a proposal is compared with every candidate.
    @functools.cached_property
    def _parsed(self) -> list[ParsedName]:
        return [p for p in (parse_name(n) for n in dict.fromkeys(self.names)) if p.normalized]

    @functools.cached_property
    def _readings(self) -> list[ParsedName]:
        # A person's "Last, First" (or a name of unknown kind) is read as "First Last" too (nameparser),
        # beside the place reading "Paris, Texas" that the comma gets otherwise.
        readings = list(self._parsed)
        if self._kind is None or self._kind.cls == "person":
            for name in dict.fromkeys(self.names):
                if (swapped := first_last(name)) is not None:
                    readings.append(parse_name(swapped))
        return readings

    def parsed(self) -> list[ParsedName]:
        return self._readings

    @functools.cached_property
    def _kind(self) -> Kind | None:
        return infer_kind(self.type, self.summary, tuple(d for p in self._parsed for d in p.descriptors))

    def kind(self) -> Kind | None:
        return self._kind


def compare(a: NameSet, b: NameSet) -> Verdict:
    """The strongest rung any name of `a` meets any name of `b` on, after the type and kind gates."""
    if kinds_conflict(a.kind(), b.kind()):
        return DISTINCT
    best = DISTINCT
    for left in a.parsed():
        for right in b.parsed():
            verdict = compare_names(left, right)
            if verdict.stronger_than(best):
                best = verdict
    if a.type != b.type and best.rung is not Rung.EXACT:
        return DISTINCT
    return best


class Match(BaseModel):
    """A candidate the ladder did not call distinct, with how it matched."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    candidate: Any  # what the caller compares against: a stored page, a page of the same plan
    verdict: Verdict


def ranked_matches(proposal: NameSet, candidates: list[tuple[Any, NameSet]]) -> list[Match]:
    """Candidates the ladder does not call distinct, best first: the stronger rung, then a page of
    the proposal's type, then the proposal's earlier name (its title before its aliases), then the
    candidate's slug."""
    order = {name: index for index, name in enumerate(p.normalized for p in proposal.parsed())}
    found = []
    for candidate, names in candidates:
        verdict = compare(proposal, names)
        if verdict.rung is not Rung.DISTINCT:
            found.append((candidate, names, verdict))
    found.sort(key=lambda m: (_STRENGTH[m[2].rung], m[1].type != proposal.type,
                              order.get(m[2].left, len(order)), str(getattr(m[0], "slug", ""))))
    return [Match(candidate=candidate, verdict=verdict) for candidate, _, verdict in found]


def search_keys(names: list[str]) -> list[str]:
    """What to look stored aliases up by to find this ladder's candidates: each name's normalised
    form and its core (the resolver's SQL also matches aliases that start with a core, for stored
    qualified names, and trigram neighbours, for typos)."""
    keys: dict[str, None] = {}
    for name in names:
        parsed = parse_name(name)
        for key in (parsed.normalized, parsed.core):
            if key:
                keys.setdefault(key, None)
        # The same name with its first name in another form ("bob smith" -> "robert smith"), for the
        # nickname rung; the resolver's SQL also finds "robert …" for a one-word "bob".
        words = parsed.core.split()
        for form in sorted(nickname_forms(words[0]))[:NICKNAME_FORMS] if words else ():
            keys.setdefault(" ".join([form, *words[1:]]), None)
    return list(keys)


def name_blocking_keys(names: list[str]) -> list[str]:
    """The blocking keys (domain/name_key.py `blocking_keys`) of each name and of its core and, for a
    "Last, First" name, of its "First Last" reading: what stored names are looked up by, so that
    every pair the ladder could call anything but distinct is met."""
    keys: dict[str, None] = {}
    for name in names:
        forms = [name, parse_name(name).core]
        if (swapped := first_last(name)) is not None:
            forms.append(swapped)
        for form in forms:
            keys.update(dict.fromkeys(blocking_keys(form)))
    return list(keys)
