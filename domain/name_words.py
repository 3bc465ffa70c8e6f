"""What a name is: the one rule every part of the product asks, from maintained data.

A capitalised word may be a name or a word capitalised by grammar ("Lunch at Uchi.", "Will you
come?"); a lower-case word may still be a name ("lunch with caroline"). This module decides, for the
offline reader of plain sentences (planners/text_entities.py), the grounding of claims (domain/claims.py
and domain/opening_names.py), recall's names in a question (domain/recall.py) and the name key's
frequency tests (domain/name_key.py), from:

- **word frequencies**: wordfreq's Zipf frequency of the word in English (its word lists ship inside
  the package), read against one set of thresholds (`RARE_ZIPF` … `VERY_COMMON_ZIPF` below);
- **first names**: the dictionary of first names by Jörg Michael shipped in the `gender-guesser`
  package (about 45,000 names of 50+ countries, each with its frequency per country on a log scale);
  and its table of equivalent names, with the hand-curated `nicknames` package, for nicknames;
- **closed-class words** (domain/closed_class.py): never names;
- **what the scope already knows** (`KnownNames`: its pages' titles and aliases, its open mentions,
  the speakers of its conversations), passed in by the caller: a known name is a name wherever it
  stands.

A first name that is also a common word (Will, May, Hope, Summer, Art) is told from the word by
comparing how often English text uses the word with how often people bear the name (`name_prior`):
"John" (a name borne by about 2 % of people, Zipf 5.4) reads as a name, "Will" (Zipf 6.5, a modal
verb) as a word unless where it stands says someone ("Will's bike", "with Will", "Will said").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.resources import files
from typing import Literal

from domain.aliases import normalize_alias
from domain.closed_class import (
    AUXILIARIES,
    COMPANY_PREPOSITIONS,
    DETERMINERS,
    FUNCTION_WORDS,
    MONTHS,
    PARTICLES,
    PRONOUNS,
    is_closed_class,
)

# ------------------------------------------------------------------------ the one set of thresholds
# Zipf is log10 of a word's frequency per billion words: 3 is once per million words.

# Below: a word English rarely uses ("Oriane" 1.4, "tostada" 1.8, "brisket" 2.9): a name wherever it
# stands, unless grammar says otherwise.
RARE_ZIPF = 3.0
# Below: a term no reader takes for an English word ("GmbH", "NV": the legal forms a name key drops).
UNCOMMON_ZIPF = 3.5
# From: an ordinary word when grammar capitalises it at a clause start ("Lunch" 4.7, "Booked" 4.1).
COMMON_ZIPF = 4.0
# From: a word too familiar to be a title before a name ("Host", "Lady"; "Chef" 4.4 and "Prof" stay titles).
FAMILIAR_ZIPF = 4.5
# From: a word even when it acts like someone ("Everyone said"), and too common to look a page up by.
VERY_COMMON_ZIPF = 5.0
# A first name reads as a name when English uses the word at most this much more (in Zipf) than the
# name's bearers would make it ("Mark" +0.15, "Rose" +0.4 are names; "Bill" +1.0, "Will" +1.6 words).
WORD_EXCESS_ZIPF = 0.6


@functools.lru_cache(maxsize=131_072)
def zipf(word: str) -> float:
    """wordfreq's Zipf frequency of the word in English (0 for a word it has never seen)."""
    from wordfreq import zipf_frequency  # its word lists load on first use only

    return float(zipf_frequency(word, "en"))


def is_rare(word: str) -> bool:
    return zipf(word.lower()) < RARE_ZIPF


def is_uncommon(word: str) -> bool:
    return zipf(word.lower()) < UNCOMMON_ZIPF


def is_common(word: str) -> bool:
    return zipf(word.lower()) >= COMMON_ZIPF


def is_familiar(word: str) -> bool:
    return zipf(word.lower()) >= FAMILIAR_ZIPF


def is_very_common(word: str) -> bool:
    return zipf(word.lower()) >= VERY_COMMON_ZIPF


# ------------------------------------------------------------------------------------ first names

# The countries of the dictionary whose names English text is written about most: Great Britain,
# Ireland, the U.S.A. (its first three frequency columns).
_ENGLISH_COLUMNS = 3
_FREQUENCY_COLUMN = 30


@dataclass(frozen=True)
class FirstName:
    english: int  # 0-13: the name's frequency in Great Britain, Ireland and the U.S.A. (0: not used there)
    anywhere: int  # 0-13: its highest frequency in any country of the dictionary


def _frequency(digit: str) -> int:
    return int(digit, 16) if digit.strip() else 0


@functools.cache
def _dictionary() -> tuple[dict[str, FirstName], tuple[tuple[str, str], ...]]:
    """The first names (lower-case) with their frequencies, and the equivalent names ("= Mel Melanie")."""
    text = files("gender_guesser").joinpath("data/nam_dict.txt").read_text(encoding="utf-8")
    names: dict[str, FirstName] = {}
    equivalents: list[tuple[str, str]] = []
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        if line[0] == "=":
            parts = line[1:_FREQUENCY_COLUMN].split()
            if len(parts) == 2:
                equivalents.append((parts[0].lower(), parts[1].lower()))
            continue
        if len(line) > _FREQUENCY_COLUMN - 1 and line[_FREQUENCY_COLUMN - 1] == "+":
            continue  # the same name again with its umlauts spelled out (the dictionary's own advice)
        # One hexadecimal digit per country, a space where the name is not used: in ASCII " " < "1" <
        # … < "9" < "A" < … < "D", so the highest character is the highest frequency.
        values = line[_FREQUENCY_COLUMN:-1]
        english = _frequency(max(values[:_ENGLISH_COLUMNS], default=" "))
        anywhere = _frequency(max(values, default=" "))
        raw = line[3:_FREQUENCY_COLUMN - 1].strip().lower()
        for name in {raw.replace("+", ""), raw.replace("+", "-")} if "+" in raw else {raw}:
            known = names.get(name)
            if known is None or (english, anywhere) > (known.english, known.anywhere):
                names[name] = FirstName(english=max(english, known.english if known else 0),
                                        anywhere=max(anywhere, known.anywhere if known else 0))
    return names, tuple(equivalents)


def first_names() -> dict[str, FirstName]:
    """Every first name of the dictionary (lower-case) with its frequencies."""
    return _dictionary()[0]


def first_name(word: str) -> FirstName | None:
    """The word as a first name of the dictionary, or None."""
    return _dictionary()[0].get(word.lower())


@functools.cache
def _nickname_table() -> dict[str, frozenset[str]]:
    """Every first name -> the names it may stand for or be stood for by: the `nicknames` package
    (canonical names and their nicknames, English and Spanish forms) and the dictionary's equivalents."""
    from nicknames import NickNamer

    table: dict[str, set[str]] = {}
    for canonical, nicks in NickNamer().nickname_lookup.items():
        for nick in nicks:
            table.setdefault(canonical, set()).add(nick)
            table.setdefault(nick, set()).add(canonical)
    for short, long in _dictionary()[1]:
        table.setdefault(short, set()).add(long)
        table.setdefault(long, set()).add(short)
    return {name: frozenset(others - {name}) for name, others in table.items()}


def nickname_forms(name: str) -> frozenset[str]:
    """The first names a first name may be another form of ("mel" -> melanie, melvin, ...; "bob" ->
    robert). A candidate only: two people may bear the two forms."""
    return _nickname_table().get(name.lower(), frozenset())


def are_nicknames(a: str, b: str) -> bool:
    """Whether two different first names are one a nickname (or translation) of the other."""
    a, b = a.lower(), b.lower()
    return a != b and b in nickname_forms(a)


Prior = Literal["closed", "first_name", "word_name", "rare", "uncommon", "common", "very_common"]


@functools.lru_cache(maxsize=65_536)
def name_prior(word: str) -> Prior:
    """What a word is most likely to be, before reading where it stands:
    - `closed`: a closed-class word or an interjection (domain/closed_class.py): never a name;
    - `first_name`: a first name that English uses mostly as one (John, Caroline, Mark, Priya);
    - `word_name`: a first name that English uses mostly as a word (Will, May, Hope, Summer, Art), and
      the months that are names (May, June, April, August);
    - otherwise by frequency alone: `rare` (< RARE_ZIPF), `uncommon` (< COMMON_ZIPF), `common`,
      `very_common` (>= VERY_COMMON_ZIPF)."""
    lower = word.lower().strip(".'’")
    known = first_name(lower)
    if not lower or (is_closed_class(lower) and not (
            lower in AUXILIARIES and known is not None and known.english > 0)):  # "Will", "May"
        return "closed"
    frequency = zipf(lower)
    if known is not None:
        if lower in MONTHS:
            return "word_name"
        # A nickname is borne by fewer people than the dictionary lists for it ("Sam", "Ben"): its
        # full forms count for it, one step down.
        english = max([known.english, *(f.english - 1 for other in nickname_forms(lower)
                                          if (f := first_name(other)) is not None)])
        if english > 0:
            # The Zipf a name borne by this share of people has in English text (fitted on names that
            # are no words: John, David, Sarah, Emily, Melanie, Lena).
            expected = 2.9 + 0.25 * english
            return "first_name" if frequency - expected <= WORD_EXCESS_ZIPF else "word_name"
        if frequency < RARE_ZIPF and known.anywhere >= 2:
            # A name of other countries that English text rarely uses otherwise (Priya, Hiroshi, Ngozi);
            # one English also uses as a word ("Tuna", "Bent", "Lone") is read by frequency alone.
            return "first_name"
    if lower in MONTHS:
        return "closed"
    if frequency < RARE_ZIPF:
        return "rare"
    if frequency < COMMON_ZIPF:
        return "uncommon"
    return "common" if frequency < VERY_COMMON_ZIPF else "very_common"


def is_name_alone(word: str) -> bool:
    """Whether a word reads as a name with nothing around it, even opening a sentence: a first name
    English uses mostly as one, or a word English rarely uses ("Oriane cooked dinner.")."""
    return name_prior(word) in ("first_name", "rare")


def is_person_name(word: str) -> bool:
    """Whether a word is a first name at all (the dictionary's), mostly a name or not."""
    return name_prior(word) in ("first_name", "word_name")


# ------------------------------------------------------------------------------ what the scope knows


@dataclass(frozen=True)
class KnownNames:
    """Names the scope already holds (its pages' titles and aliases, its open mentions, the speakers of
    its conversations), as the single words a memory may call them by (see `of`), normalised."""

    words: frozenset[str] = frozenset()

    @classmethod
    def of(cls, names: Iterable[str]) -> KnownNames:
        """A one-word name as it is ("Kyoto", "Miso"); of a longer name, its first word when that is a
        first name ("Caroline" of "Caroline Hart"), since people are called by it alone; the other words
        of longer names ("Barbecue" of "Franklin Barbecue") name nothing alone."""
        words: set[str] = set()
        for name in names:
            parts = normalize_alias(name).split()
            candidates = parts if len(parts) == 1 else [parts[0]] if parts and is_person_name(parts[0]) else []
            for word in candidates:
                if len(word) >= 3 and not word.isdigit() and name_prior(word) != "closed":
                    words.add(word)
        return cls(words=frozenset(words))

    def knows(self, word: str) -> bool:
        return normalize_alias(word) in self.words

    def within(self, text: str) -> KnownNames:
        """Only the known words this text holds (a small, hashable key for a cache)."""
        present = set(normalize_alias(text).split())
        return KnownNames(words=frozenset(self.words & present))

    def __or__(self, other: KnownNames) -> KnownNames:
        return KnownNames(words=self.words | other.words)


NO_NAMES = KnownNames()

# ------------------------------------------------------------------------------ where a word stands

# A word after a name that says the name is someone's ("Sam said", "Sam and I", "Lena's").
SPEECH_VERBS = frozenset({"said", "says", "told", "tells", "asked", "asks", "replied", "thinks", "thought",
                          "wants", "wanted", "agreed", "suggested", "mentioned"})
# A word after a clause-initial capitalised word that shows it is a verb or an auxiliary, not someone:
# "Will you…", "May I…", "Mark the date", "Hope you are well", "Jack up the price". (An auxiliary after
# it shows the opposite: "Mark is", "Caroline has".)
_VERB_OBJECTS = PRONOUNS | DETERMINERS | PARTICLES | frozenset({"to", "so"})


@dataclass(frozen=True)
class Where:
    """Where a capitalised word stands in its sentence."""

    clause_start: bool  # first word of a sentence or clause: capitalised by grammar whatever it is
    previous_word: str = ""  # the word before, lower-case ("" at a clause start or after punctuation)
    next_word: str = ""  # the next word, lower-case ("" at the end)
    next_capitalised: bool = False  # the next word is capitalised too: one name of several words?
    word_after: str = ""  # the one after it
    stands_alone: bool = False  # the word is the whole clause ("Bummer!", "Yum, …")
    possessive: bool = False  # written with 's ("Lena's")
    known: bool = False  # the memory writes it capitalised where no clause starts, or the scope holds it


def _shaped_like_verb_or_adverb(word: str) -> bool:
    return len(word) > 4 and word.endswith(("ed", "ing", "ly"))


def reads_as_name(word: str, where: Where) -> bool:
    """Whether a capitalised word is a name where it stands (see the module docstring)."""
    lower = word.lower().strip(".'’")
    prior = name_prior(lower)
    if prior == "closed":
        return False
    verb_use = where.next_word in _VERB_OBJECTS and not where.possessive
    if not where.clause_start:
        # Capitalised where grammar does not ask for it: a name, except a month by a date or a
        # preposition ("in May", "May 5") and a first name that is a word used as one ("Will you").
        return not (lower in MONTHS and not _acts_like_someone(lower, where)) and not (
            prior == "word_name" and verb_use and not where.known)
    if where.known:
        return not (verb_use and prior in ("word_name", "common", "very_common"))
    if prior == "first_name":
        return not verb_use
    if prior == "word_name":
        # "Will Smith", "Art Basel": a second capitalised word makes the first one part of a name.
        return where.next_capitalised or _acts_like_someone(lower, where)
    if prior == "rare":
        return not (_shaped_like_verb_or_adverb(lower) or where.stands_alone)
    if prior == "uncommon":
        return not (_shaped_like_verb_or_adverb(lower) or where.stands_alone)
    if prior == "common":
        return _acts_like_someone(lower, where)
    return False


def _acts_like_someone(lower: str, where: Where) -> bool:
    """A word that is a name in all likelihood though it is also a word ("Sam said", "Sam's bike",
    "Sam and I"): not a very common word, nor shaped like a verb or adverb."""
    is_first_name = name_prior(lower) == "word_name"
    if not is_first_name and (is_very_common(lower) or _shaped_like_verb_or_adverb(lower)):
        return False
    if where.possessive or where.next_word in SPEECH_VERBS or where.previous_word in PERSON_INTRODUCERS:
        return True
    return where.next_word == "and" and where.word_after in ("i", "me")


def reads_as_lower_case_name(word: str, previous_word: str, known: KnownNames) -> bool:
    """Whether a word written in lower case is a name: one the scope holds, or a first name English uses
    mostly as one right after a word that introduces someone ("lunch with caroline")."""
    lower = word.lower()
    prior = name_prior(lower)
    if prior in ("closed", "common", "very_common", "word_name"):
        return known.knows(lower) and prior in ("first_name", "rare", "uncommon")
    if known.knows(lower):
        return True
    return prior == "first_name" and previous_word in PERSON_INTRODUCERS


# Words before a name that say it is someone ("with Lena", "met Marco", "told Sam").
PERSON_INTRODUCERS = COMPANY_PREPOSITIONS | frozenset({
    "met", "meet", "meeting", "called", "call", "texted", "text", "emailed", "email", "messaged", "asked", "ask",
    "told", "tell", "thanked", "helped", "invited", "hugged", "visiting", "married", "dating", "and",
    "introduced", "congratulated", "phoned", "joined", "saw", "see", "hired", "interviewed"})

# ------------------------------------------------------------------------ names in a line or question

_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]", re.UNICODE)
_SENTENCE_END = frozenset(".!?;")
_DATE = re.compile(r"\b\d{4}-\d{2}(?:-\d{2})?\b")


def possessive_free(token: str) -> str:
    """A name without its possessive ending ("Melanie's" -> "Melanie")."""
    return re.sub(r"['’]s?$", "", token) if len(token) > 2 else token


def capitalised_names(text: str, *, opening: bool = True) -> list[str]:
    """The capitalised words of a text that are names, as written (claims' grounding terms): every
    capitalised word where no sentence starts, and a sentence's first word when a capitalised word
    follows it (the start of a name of several words, "Chef Bartholomew cooked") or when it reads as a
    name alone ("Oriane cooked dinner.", "John went to the gym."). "Notes on Uchi", "Waited an hour"
    name nothing by their first word. Function words are never names."""
    tokens = _TOKEN.findall(text)
    out: list[str] = []
    for n, token in enumerate(tokens):
        if not (token[:1].isalnum() or token[:1] == "_"):
            opening = opening or token in _SENTENCE_END
            continue
        if token[:1].isupper() and not token[:1].isdigit():
            following = tokens[n + 1] if n + 1 < len(tokens) else ""
            if not opening or following[:1].isupper() or is_name_alone(possessive_free(token)):
                out.append(token)
        opening = False
    return [word for word in out if normalize_alias(word) not in FUNCTION_WORDS]


def opening_words(text: str, *, opening: bool = True) -> list[str]:
    """The one-word sentence openings `capitalised_names` leaves out, normalised: each sentence's first
    word when it is capitalised, the next word is not, and it does not read as a name alone ("Waited
    an hour."). Whether one names something is the judge's to say."""
    tokens = _TOKEN.findall(_DATE.sub(" ", text))
    found: list[str] = []
    for n, token in enumerate(tokens):
        if not (token[:1].isalnum() or token[:1] == "_"):
            opening = opening or token in _SENTENCE_END
            continue
        following = tokens[n + 1] if n + 1 < len(tokens) else ""
        if opening and token[:1].isupper() and not following[:1].isupper() \
                and not is_name_alone(possessive_free(token)):
            key = normalize_alias(token)
            if key and key not in FUNCTION_WORDS and not key.isdigit():
                found.append(key)
        opening = False
    return list(dict.fromkeys(found))


_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def question_names(question: str) -> list[str]:
    """The names a question gives by capital letters, normalised: a word of three letters or more
    written with a capital where it does not open the question, or opening it when it reads as a name
    alone ("Melanie" may designate a page whose aliases are all longer, "melanie hart")."""
    words = _WORD.findall(question)
    return list(dict.fromkeys(
        normalize_alias(w) for i, w in enumerate(words)
        if w[:1].isupper() and len(w) >= 3 and (i > 0 or is_name_alone(possessive_free(w)))
        and name_prior(possessive_free(w)) != "closed"))

