"""The names a reader finds in plain memory text, for the simulated planner (not the product's rule).

A model reads names off sentences: a run of capitalised words inside a sentence is a name ("lunch
with Lena at Franklin Barbecue"); a capitalised word opening a sentence is a name only when the
batch also writes it capitalised inside a sentence, when it is rare as a word (English word
frequencies, the `wordfreq` package) or a first name (the `gender-guesser` package's list of first
names) not common as a word, and no word of the English lexicon (`lemminflect`'s: "Realizing",
"Cherish" and "Lucky" open sentences as words), or when it leads a speaker's turn ("Caroline: ..."). Words
that are capitalised by convention and name nothing a wiki keeps a page for (the pronoun "I", days,
months) are never names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import gender_guesser.detector
from lemminflect import getAllLemmas
from wordfreq import zipf_frequency

_TOKEN = re.compile(r"[^\W\d_][\w'’&.-]*[\w]|[^\W\d_]|\d[\w.,:/-]*|[^\w\s]", re.UNICODE)
_SENTENCE_END = frozenset(".!?;")
_CONNECTORS = frozenset({"of", "de", "la", "del", "da", "du", "des", "di", "van", "von", "the", "&", "y", "le"})
_NEVER = frozenset(["i", "i'm", "i've", "i'd", "i'll", "im", "ok", "okay", "mr", "mrs", "ms", "dr", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december", "today", "tomorrow", "yesterday", "hey", "hi", "hello", "wow", "oh", "yeah", "yes", "no", "thanks"])
# A one-word opening rarer than this (Zipf scale) is taken as a name even when seen only there.
RARE_WORD_ZIPF = 3.0
# A first name as common as a word from this Zipf value on ("Will", "May", "Hope") opens a sentence as a word.
FIRST_NAME_WORD_ZIPF = 5.0
_FIRST_NAMES = gender_guesser.detector.Detector()


def is_first_name(word: str) -> bool:
    """A first name by the list, and not as common as the words it might also be."""
    return _FIRST_NAMES.get_gender(word) != "unknown" and zipf_frequency(word.lower(), "en") < FIRST_NAME_WORD_ZIPF


def _tokens(text: str) -> list[str]:
    return [token.rstrip(".") if token.endswith(".") and len(token) > 1 else token for token in _TOKEN.findall(text)]


def _is_capitalised(token: str) -> bool:
    return token[:1].isupper() and not token[:1].isdigit()


def _bare(token: str) -> str:
    for suffix in ("'s", "’s"):
        if token.endswith(suffix):
            return token[: -len(suffix)]
    return token


def inner_capitalised(texts: Iterable[str]) -> set[str]:
    """The words the texts write capitalised inside a sentence (folded to lower case)."""
    found: set[str] = set()
    for text in texts:
        opening = True
        for token in _tokens(text):
            if not token[:1].isalnum():
                opening = opening or token in _SENTENCE_END or token == ":"
                continue
            if _is_capitalised(token) and not opening:
                found.add(_bare(token).lower())
            opening = False
    return found


def names_in(text: str, known: set[str]) -> list[str]:
    """The names `text` writes, in order, each once. `known`: words the batch writes capitalised
    inside a sentence (`inner_capitalised`)."""
    tokens = _tokens(text)
    found: list[str] = []
    index, opening = 0, True
    while index < len(tokens):
        token = tokens[index]
        if not token[:1].isalnum():
            opening = opening or token in _SENTENCE_END
            index += 1
            continue
        if not _is_capitalised(token):
            opening = False
            index += 1
            continue
        run = [token]
        end = index + 1
        while end < len(tokens):
            following = tokens[end]
            if _is_capitalised(following):
                run.append(following)
                end += 1
            elif (following.lower() in _CONNECTORS and end + 1 < len(tokens) and _is_capitalised(tokens[end + 1])
                  and following.lower() != "the"):
                run += [following, tokens[end + 1]]
                end += 2
            else:
                break
        speaker = index == 0 and end < len(tokens) and tokens[end] == ":"
        words = [_bare(word) for word in run]
        while words and words[0].lower() in _NEVER | {"the", "a", "an"} and not speaker:
            words = words[1:]
        while words and words[-1].lower() in _NEVER:
            words = words[:-1]
        if words:
            name = " ".join(words)
            # "Realizing I ..." is one opening word once the pronoun is set aside
            single_opening = opening and len(words) == 1 and not speaker
            named = not single_opening or name.lower() in known or (
                not getAllLemmas(name.lower()) and (zipf_frequency(name.lower(), "en") < RARE_WORD_ZIPF
                                                    or is_first_name(name)))
            if named and name not in found:
                found.append(name)
        opening = False
        index = end
    return found


def first_sentence(text: str) -> str:
    """A memory's first sentence, as a reader would quote it (whitespace runs made single)."""
    flat = " ".join(text.split())
    match = re.search(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“(])", flat)
    return (flat[:match.start()] if match else flat).strip()
