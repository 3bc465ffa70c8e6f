"""The name key: one spelling for the ways people write one name, built from maintained tables.

`name_key(raw)` turns a name into lower-case ASCII words in which the variations people write
without meaning anything else are gone. Step by step (each step's table comes from a library):

1. Transliteration to ASCII (`unidecode`): "Москва" -> "moskva", "Ψαράς" -> "psaras", "Straße" ->
   "strasse", "João" -> "joao".
2. Connectives and punctuation: "&" and "+" are "and"; an apostrophe joins ("Birdie's" -> "birdies",
   "Sant'Eustachio" -> "santeustachio"); any other punctuation splits words ("St.Louis" -> "st louis").
3. Numbers written as words (`num2words` builds the table, English, French, Spanish, German and
   Italian, cardinals and ordinals one to a hundred): "Fifth" -> "5", "5th" -> "5", "twenty-one" -> "21".
4. Postal abbreviations (`scourgify`'s tables of USPS Publication 28): every written form of a
   street or place type takes its one long form, "St"/"Str"/"Street" -> "street", "Ave" -> "avenue",
   "Spgs" -> "springs", "NE" -> "northeast"; "St", "Mt", "Ft" opening a name are "saint", "mount",
   "fort" ("St. Jude", "Mt. Bonnell"). A type follows the name it types: an opening word is read as
   one only when it is a directional ("NE Lamar"), and an article only at the end ("Sunset La").
5. Articles and the connective "and" in the languages memories are written in (a table below: a
   closed class, not a list of seen names) are dropped wherever they stand: "The Driskill" ->
   "driskill", "Le Comptoir du Relais" -> "comptoir du relais", "Emmer and Rye" -> "emmer rye".
6. A trailing legal form (`cleanco`'s terms, those that are not also common English words by
   `wordfreq`) is dropped: "Harbor Hardware LLC" -> "harbor hardware".
7. A person's title and post-nominal letters (`nameparser`'s constants) are dropped at the edges,
   a generational suffix ("Jr", "III") is kept: "Dr. Ngozi Okafor PhD" -> "ngozi okafor".

A step never empties a name: the word it would drop is kept when it is the only one left.
Initials stay letters in their order ("J. R. Smith" -> "j r smith"), so swapped initials differ.

Besides the key, `blocking_keys` gives what the resolver looks stored names up by (the key, its
letters without spaces, each significant word, the initials of a multi-word name, a phonetic code
by `jellyfish`'s Metaphone), and `acronym` / `abbreviates` name two relations the ladder asks the
judge about.
"""

from __future__ import annotations

import functools
import re

import jellyfish
from cleanco.termdata import terms_by_type
from nameparser.config import CONSTANTS as NAME_CONSTANTS
from num2words import num2words
from rapidfuzz.distance import OSA
from scourgify.address_constants import (
    CITY_ABBRS,
    DIRECTIONAL_REPLACEMENTS,
    LONGHAND_STREET_TYPES,
    STREET_TYPE_ABBREVIATIONS,
)
from unidecode import unidecode

from domain.closed_class import ARTICLES, CONNECTIVES
from domain.name_words import is_familiar, is_uncommon, is_very_common

# ------------------------------------------------------------------------------------------ tables

NUMBER_LANGUAGES = ("en", "fr", "es", "de", "it")
NUMBERS_UP_TO = 100


def _number_words() -> dict[str, str]:
    words: dict[str, str] = {}
    for lang in NUMBER_LANGUAGES:
        for number in range(1, NUMBERS_UP_TO + 1):
            for form in ("cardinal", "ordinal"):
                try:
                    written = num2words(number, lang=lang, to=form)
                except (NotImplementedError, OverflowError):
                    continue
                key = _plain(written).replace(" ", "")
                # A word that is also an article or a common word of another language ("un", "una",
                # "uno", "one" stay numbers only in English): skip the short ambiguous ones.
                if key and (lang == "en" or len(key) > 4):
                    words.setdefault(key, str(number))
    return words


def _plain(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", unidecode(text).lower()).strip()


# Articles, and the word "and", in English, French, Spanish, Portuguese, Italian, German and Dutch
# (domain/closed_class.py): closed classes; prepositions are kept ("du", "de", "of": "Jardin du
# Luxembourg").
# Single letters among ARTICLES / CONNECTIVES are dropped only when written as a word of the name,
# never when they are an initial ("A. B. Smith"): see `_drop_function_words`.
_SINGLE_LETTER_FUNCTION_WORDS = frozenset({"a", "o", "i", "l", "y", "e"})


def _spelled_out() -> dict[str, str]:
    """Every written form of a street or place type -> its one long form: "st", "str", "street" ->
    "street"; "spgs" -> "springs"; "mtn" -> "mountain". Long forms keep the fuzzy rungs working on
    real words ("barton spring pool" is one letter from "barton springs pool")."""
    table = {form.lower(): LONGHAND_STREET_TYPES.get(abbr, form).lower()
             for form, abbr in STREET_TYPE_ABBREVIATIONS.items()}
    # Two-letter directionals only: a single letter may be an initial ("N. Okafor").
    table.update({abbr.lower(): full.lower() for full, abbr in DIRECTIONAL_REPLACEMENTS.items() if len(abbr) == 2})
    return table


def _leading_place_words() -> dict[str, str]:
    """"St", "Mt", "Ft" before a name are "saint", "mount", "fort" ("St. Louis", "Mt. Bonnell")."""
    return {abbr.lower(): full.lower() for abbr, full in CITY_ABBRS.items() if full != "VIRGINIA"}


_LEGAL_ENGLISH = ("company", "corporation", "incorporated", "limited", "co", "corp", "inc", "ltd", "llc", "llp")


def _legal_forms() -> list[tuple[str, ...]]:
    forms: set[tuple[str, ...]] = set()
    for terms in terms_by_type.values():
        for term in terms:
            words = tuple(_plain(term).split())
            if not words:
                continue
            joined = " ".join(words)
            if joined in _LEGAL_ENGLISH or "".join(words) in _LEGAL_ENGLISH or (
                    len("".join(words)) >= 2 and is_uncommon(joined)):
                forms.add(words)
    return sorted(forms, key=len, reverse=True)


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, str], dict[str, str], list[tuple[str, ...]], frozenset[str], frozenset[str]]:
    numbers, abbreviations = _number_words(), _spelled_out()
    # Titles as people write them before a name ("Dr", "Mrs", "Prof", "Chef"): nameparser's, the short
    # ones that are no common English word (a title that is is as often a name's own word: "King
    # Soopers", "Mother Earth"), and not
    # the place words "St", "Mt", "Ft" ("St. Louis").
    place_words = {abbr.lower() for abbr in CITY_ABBRS}
    titles = frozenset(t for t in (_plain(t).replace(" ", "") for t in NAME_CONSTANTS.titles)
                       if len(t) <= 4 and t.isalpha() and t not in place_words
                       and (len(t) <= 3 or not is_familiar(t) or t == "miss"))
    # Post-nominal letters ("PhD", "MD"), not generations: "Jr", "Sr", "II" tell two people apart.
    generations = {"jr", "sr", "jnr", "snr", "junior", "senior", "i", "ii", "iii", "iv", "v", "2", "3"}
    post_nominals = frozenset(_plain(s).replace(" ", "") for s in NAME_CONSTANTS.suffix_acronyms) - generations
    return numbers, abbreviations, _legal_forms(), titles, post_nominals


# ------------------------------------------------------------------------------------------ the key

_ORDINAL_DIGITS = re.compile(r"^(\d+)(?:st|nd|rd|th|e|er|eme|o|a|º|ª)$")
_APOSTROPHES = re.compile(r"['’‘`´]")
_CONNECTIVE_SIGNS = re.compile(r"\s*[&+]\s*")


_DIRECTIONALS = frozenset(abbr.lower() for abbr in DIRECTIONAL_REPLACEMENTS.values() if len(abbr) == 2)
# Two or three capitals opening a name before a word in title case are initials: "JR Smith", "MT Lowe".
_OPENING_INITIALS = re.compile(r"^([A-Z]{2,3})(?=\s+[A-Z][a-z])")


def _spaced_initials(raw: str) -> str:
    """"JR Smith" -> "J R Smith"; a directional ("NE Lamar") is no initials."""
    return _OPENING_INITIALS.sub(lambda m: m.group(1) if m.group(1).lower() in _DIRECTIONALS
                                 else " ".join(m.group(1)), raw.strip())


@functools.lru_cache(maxsize=65_536)
def _number(word: str) -> str | None:
    """The number a word writes, misspelt by two swapped letters too ("sevneth" -> "7")."""
    numbers = _tables()[0]
    if word in numbers:
        return numbers[word]
    if len(word) >= 6 and word.isalpha():
        for written, number in numbers.items():
            if len(written) == len(word) and sorted(written) == sorted(word) and OSA.distance(written, word) == 1:
                return number
    return None


def _words(raw: str) -> list[str]:
    raw = _spaced_initials(raw)
    text = unidecode(raw).lower()
    text = _CONNECTIVE_SIGNS.sub(" and ", text)
    text = _APOSTROPHES.sub("", text)
    # A number written in two words ("twenty-first", "vingt et un" aside) is one word.
    numbers = _tables()[0]
    text = re.sub(r"\b([a-z]+)[- ]([a-z]+)\b",
                  lambda m: m.group(1) + m.group(2) if m.group(1) + m.group(2) in numbers else m.group(0), text)
    return re.sub(r"[^a-z0-9]+", " ", text).split()


def _written_single_letters(raw: str) -> set[int]:
    """Positions of one-letter words written as words, not as initials (no period after them, and
    lower case or an "A"/"O" article at the start): "A Cafe" -> {0}; "J. Smith" -> set()."""
    positions = set()
    for index, token in enumerate(unidecode(raw).replace("&", " ").replace("+", " ").split()):
        letters = re.sub(r"[^A-Za-z]", "", token)
        if len(letters) == 1 and not token.endswith(".") and (letters.islower() or index == 0):
            positions.add(index)
    return positions


def _keep_one(words: list[str], kept: list[str]) -> list[str]:
    return kept if kept else words[-1:]


@functools.lru_cache(maxsize=65_536)
def name_key(raw: str) -> str:
    """The name's key (see the module docstring); "" for a name with no letters or digits."""
    numbers, abbreviations, legal_forms, titles, post_nominals = _tables()
    words = _words(raw)
    if not words:
        return ""
    spaced = _spaced_initials(raw)
    written_letters = _written_single_letters(spaced) if len(words) == len(spaced.split()) else set()
    flagged = [(word, index in written_letters) for index, word in enumerate(words)]
    # A title opens a person's name; it goes before anything reads it as a street word ("Dr" / "Drive").
    while len(flagged) > 1 and flagged[0][0] in titles:
        flagged = flagged[1:]
    flagged = [(_number(w) or w, written) for w, written in flagged]
    flagged = [(match.group(1) if (match := _ORDINAL_DIGITS.match(w)) else w, written) for w, written in flagged]
    leading = _leading_place_words()
    # A street or place type follows the name it types ("Sunset La", "Park Ave"): a name's opening
    # word is one only when it is a directional ("NE Lamar"), and an article only when it ends the name
    # ("Sunset La", but "Casa La Nonna").
    flagged = [(leading[w] if i == 0 and w in leading and len(flagged) > 1
                else abbreviations.get(w, w)
                if (i > 0 or w in _DIRECTIONALS) and (w not in ARTICLES or i == len(flagged) - 1) else w, written)
               for i, (w, written) in enumerate(flagged)]
    # Function words go wherever they stand; a one-letter one only when written as a word.
    # A one-letter article only opens a name, written as a word before a longer one ("A Cafe"); any
    # other single letter is an initial ("a l mukuldai", a stored "A. L. Mukuldai").
    words = _keep_one([w for w, _ in flagged], [
        w for i, (w, written) in enumerate(flagged)
        if not ((w in ARTICLES or w in CONNECTIVES)
                and (len(w) > 1 or (w in _SINGLE_LETTER_FUNCTION_WORDS and written and i == 0
                                    and len(flagged) > 1 and len(flagged[1][0]) > 1)))])
    for form in legal_forms:
        if len(words) > len(form) and tuple(words[-len(form):]) == form:
            words = words[:-len(form)]
            break
    while len(words) > 1 and words[-1] in post_nominals:
        words = words[:-1]
    return " ".join(words)


def compact(key: str) -> str:
    """The key's letters without spaces: "j r smith" and "jr smith" alike."""
    return key.replace(" ", "")


# ------------------------------------------------------------------------------------ relations


def acronym(key: str) -> str:
    """The initial letters of a key of two words or more ("museum modern art" -> "mma"); "" otherwise."""
    words = key.split()
    return "".join(w[0] for w in words if not w.isdigit()) if len(words) >= 2 else ""


def acronyms(raw: str) -> set[str]:
    """A name's possible acronyms: of its key, and of all its words ("Museum of Modern Art" ->
    {"mma", "moma"})."""
    found = {acronym(name_key(raw)), acronym(" ".join(_words(raw)))}
    return {a for a in found if len(a) >= 2}


def abbreviates(short: str, full: str) -> bool:
    """Whether one word can be an abbreviation of another: at least two letters, the same first
    letter, shorter, and its letters in order within the other ("intl" / "international",
    "natl" / "national", "bros" / "brothers")."""
    if len(short) < 2 or len(short) >= len(full) or short[0] != full[0] or short.isdigit() or full.isdigit():
        return False
    position = 0
    for letter in short:
        position = full.find(letter, position)
        if position < 0:
            return False
        position += 1
    return True


# ---------------------------------------------------------------------------------- blocking keys



@functools.lru_cache(maxsize=65_536)
def phonetic(key: str) -> str:
    """Metaphone of each word, joined: "katz orange" -> "kts ornj"."""
    return " ".join(jellyfish.metaphone(word) for word in key.split() if word.isalpha()).lower()


def significant_words(key: str) -> list[str]:
    """The key's words a page may be looked up by alone: not digits, and not so common in English that
    names share them ("coffee", "park", "st": domain/name_words.py's VERY_COMMON_ZIPF)."""
    return [w for w in key.split() if len(w) >= 3 and not w.isdigit() and not is_very_common(w)]


@functools.lru_cache(maxsize=65_536)
def blocking_keys(raw: str) -> tuple[str, ...]:
    """What a name is looked up by, each prefixed with its kind: the key (`k:`), its letters without
    spaces (`c:`), each significant word (`w:`), the acronyms of a multi-word name and a one-word name
    as a possible acronym (`a:`), and the phonetic code (`p:`)."""
    key = name_key(raw)
    if not key:
        return ()
    keys = [f"k:{key}", f"c:{compact(key)}"]
    keys += [f"w:{word}" for word in significant_words(key)]
    words = key.split()
    keys += [f"a:{a}" for a in sorted(acronyms(raw))]
    if len(words) == 1 and 2 <= len(words[0]) <= 6:
        keys.append(f"a:{words[0]}")
    if code := phonetic(key):
        keys.append(f"p:{code}")
    return tuple(dict.fromkeys(keys))
