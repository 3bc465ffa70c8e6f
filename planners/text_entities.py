"""The names a plain sentence mentions, read offline: what a memory without `metadata.entities` is about.

A memory written as people write ("Lunch at Franklin Barbecue with Lena: brisket again.") names its
things with capitalised words. The reader proposes each capitalised name span with a kind, from the
span's own words and the words around it, in the same shape as a metadata entity
(`{"name", "type", "kind"}`), so the scripted planner treats it as it treats metadata.

How a span is read, sentence by sentence (domain/sentences.py: "Dr." and "St." end none):
- Name tokens are words starting with an upper-case letter (any script with case, `regex`'s \\p{Lu});
  a span is a run of them, joined across connectors when a name token follows ("Bank of America",
  "Church of the Holy Cross"), led by a title when there is one ("Dr. Patel"), cut at a possessive
  ("Lena's" → "Lena"). A leading article is dropped ("the Driskill" → "Driskill").
- A word that starts a sentence or a clause is capitalised whatever it is: it starts a name only when
  it is a rare word (wordfreq's English frequency, shipped inside its package), is not shaped like a
  verb or adverb ("Walked", "Finally"), or is written capitalised elsewhere in the same memory away
  from a clause start. Calendar words and "I" are never names.
- The kind, first hint wins: a title → person; a word of the span that says what it is (Bank →
  organisation, Barbecue → restaurant, Pool → pool, Festival → event, City → city); a word next to it
  ("the café Nido", "Kyoto trip", "my sister Ana", "Nido, a café"); how it is used (with/met/called
  someone, someone said, a possessive, a list that continues a person "with Lena and Marco"); the
  preposition before it (in/at/to/from/near → place). With no hint the kind is left empty.

Deterministic: no clock, no randomness, names in order of first appearance, one entry per name.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import regex

from domain.aliases import normalize_alias
from domain.sentences import split_sentences

# A token: a word (letters, marks, digits, inner apostrophes, hyphens and ampersands, and one trailing
# period kept for abbreviations), or one punctuation character.
_TOKEN = regex.compile(r"[\p{L}\p{N}][\p{L}\p{M}\p{N}'’\-&]*\.?|[^\s\p{L}\p{N}]")
_STARTS_UPPER = regex.compile(r"^\p{Lu}")
_HAS_LOWER_OR_IS_SHORT_CAPS = regex.compile(r"\p{Ll}|^\p{Lu}{2,5}$")
_POSSESSIVE = regex.compile(r"['’]s?$")

TITLES = frozenset({"dr", "mr", "mrs", "ms", "mx", "prof", "sir", "dame", "rev", "fr", "sr", "jr"})
CONNECTORS = frozenset({"of", "de", "del", "della", "di", "da", "la", "le", "les", "du", "des", "van", "von",
                        "der", "den", "y", "e", "the", "&"})
ARTICLES = frozenset({"the", "a", "an"})
NEVER_NAMES = frozenset({
    "i", "i'm", "i've", "i'd", "i'll", "ok", "okay", "tv", "am", "pm",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "mon", "tue", "wed", "thu", "fri", "sat", "sun", "jan", "feb", "mar", "apr",
    "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
})
# A clause-initial word at or above this Zipf frequency is taken as an ordinary word ("Lunch" 4.7,
# "Booked" 4.1), below it as a name ("Lena" 3.6, "Kyoto" 3.4).
COMMON_WORD_ZIPF = 4.0
# Above this even a clause-initial word followed by "said" or a possessive is a word ("Everyone said").
COMMON_NAME_ZIPF = 5.0

# Words inside a span (its own words) that say what it names.
_OWN_WORD_KINDS: dict[str, str] = {
    **dict.fromkeys(("bank", "university", "college", "inc", "corp", "corporation", "ltd", "llc", "company",
                     "co", "labs", "lab", "group", "foundation", "institute", "agency", "partners", "capital",
                     "ventures", "airlines", "airways", "hospital", "clinic", "school", "academy", "society",
                     "association", "council", "ministry", "department", "bureau", "studios", "records",
                     "press", "media", "systems", "technologies", "bros"), "organisation"),
    **dict.fromkeys(("barbecue", "bbq", "grill", "kitchen", "steakhouse", "ramen", "sushi", "noodle",
                     "noodles", "trattoria", "osteria", "brasserie", "cantina", "restaurant"), "restaurant"),
    **dict.fromkeys(("café", "cafe", "coffee", "espresso", "roasters", "tea"), "cafe"),
    **{word: word for word in ("bar", "pub", "tavern", "brewery", "winery", "bakery", "pizzeria", "taqueria",
                               "diner", "bistro", "hotel", "museum", "gallery", "library", "park", "pool",
                               "garden", "beach", "trail", "market", "theater", "theatre", "gym", "club",
                               "studio", "bookstore", "shop", "store", "lounge", "station", "airport",
                               "stadium", "arena", "church", "temple", "shrine", "castle", "palace",
                               "lake", "river", "mountain", "island", "bay", "falls", "canyon", "zoo")},
    **dict.fromkeys(("gardens",), "garden"), **dict.fromkeys(("springs",), "park"),
    **dict.fromkeys(("inn", "hostel", "resort", "lodge"), "hotel"),
    **dict.fromkeys(("street", "st", "avenue", "ave", "road", "rd", "boulevard", "blvd", "lane", "square",
                     "plaza", "way", "drive"), "street"),
    **dict.fromkeys(("city", "town", "village", "county"), "city"),
    **dict.fromkeys(("conference", "festival", "summit", "meetup", "marathon", "wedding", "retreat", "review",
                     "meeting", "party", "launch", "offsite", "hackathon", "concert", "expo", "gala", "reunion",
                     "ceremony", "fair", "workshop", "standup", "sync", "kickoff", "cup", "championship",
                     "tournament", "olympics", "day", "week", "eve"), "event"),
}
# Lower-case words next to a span that say what it names ("the café Nido", "Kyoto trip", "my sister Ana").
_NEAR_WORD_KINDS: dict[str, str] = {
    **{word: kind for word, kind in _OWN_WORD_KINDS.items() if kind != "event"},
    **dict.fromkeys(("friend", "sister", "brother", "mother", "father", "mom", "dad", "aunt", "uncle", "cousin",
                     "neighbor", "neighbour", "colleague", "coworker", "boss", "wife", "husband", "partner",
                     "son", "daughter", "niece", "nephew", "grandmother", "grandfather", "grandma", "grandpa",
                     "roommate", "manager", "teacher", "doctor", "dentist", "therapist", "chef", "coach",
                     "boyfriend", "girlfriend", "fiancé", "fiancée", "client", "mentor", "landlord"), "person"),
    **dict.fromkeys(("dog", "cat", "puppy", "kitten", "pet", "horse", "parrot", "rabbit"), "pet"),
    **dict.fromkeys(("trip", "vacation", "holiday", "visit", "flight"), "place"),
    **dict.fromkeys(("meeting", "conference", "festival", "party", "wedding", "retreat", "offsite", "concert",
                     "launch", "workshop", "call", "sync", "standup", "kickoff"), "event"),
    **dict.fromkeys(("company", "startup", "firm", "team", "client", "employer", "bank", "agency"), "organisation"),
}
# Words before a span that say it is someone ("with Lena", "met Marco", "told Sam").
_PERSON_BEFORE = frozenset({"with", "met", "meet", "meeting", "called", "call", "texted", "text", "emailed",
                            "email", "messaged", "asked", "ask", "told", "tell", "thanked", "helped", "invited",
                            "hugged", "visiting", "married", "dating", "by", "for", "and", "introduced",
                            "congratulated", "phoned", "joined", "saw", "see", "thank", "hired", "interviewed"})
# Words after a span that say it is someone ("Lena said", "Marco and I").
_PERSON_AFTER = frozenset({"said", "says", "told", "asked", "thinks", "thought", "wants", "wanted", "agreed",
                           "suggested", "recommended", "loves", "loved", "likes", "liked", "and", "mentioned",
                           "called", "texted", "invited", "brought", "cooked", "baked", "joined", "prefers",
                           "hates", "laughed", "smiled", "arrived", "decided", "signed", "visited", "met",
                           "flew", "drove", "bought", "booked", "ordered", "hiked", "paid", "gave", "sent",
                           "wrote", "moved", "started", "finished", "won", "picked", "emailed", "promised"})
# Prepositions before a span that say it is somewhere ("in Kyoto", "at Franklin Barbecue").
_PLACE_BEFORE = frozenset({"in", "at", "to", "from", "near", "around", "across", "through", "into", "toward",
                           "towards", "outside", "inside", "visited", "visit", "visiting", "via", "past"})
# Verbs after which "to X" is someone ("talked to Sam"), not somewhere.
_PERSON_VERBS_BEFORE_TO = frozenset({"talked", "spoke", "speak", "talk", "wrote", "write", "sent", "send",
                                     "gave", "give", "said", "say", "introduced", "listened", "replied",
                                     "lent", "explained", "showed", "waved", "apologized", "apologised"})
_CLAUSE_OPENERS = frozenset({":", ";", "(", "\"", "“", "—", "–", "-", "[", "•", "*"})
_VERB_OR_ADVERB_ENDINGS = ("ed", "ing", "ly")
MAX_SPAN_TOKENS = 6
MAX_NAMES_PER_MEMORY = 24


@dataclass(frozen=True)
class _Token:
    text: str  # the word without an abbreviation's or the sentence's closing period
    raw: str
    is_word: bool

    @property
    def lower(self) -> str:
        return self.text.lower()

    @property
    def is_title(self) -> bool:
        return self.is_word and self.lower in TITLES and _STARTS_UPPER.match(self.text) is not None

    @property
    def is_capitalised(self) -> bool:
        return (self.is_word and _STARTS_UPPER.match(self.text) is not None
                and _HAS_LOWER_OR_IS_SHORT_CAPS.search(self.text) is not None)

    @property
    def is_possessive(self) -> bool:
        return self.is_word and len(self.text) > 2 and _POSSESSIVE.search(self.text) is not None

    @property
    def bare(self) -> str:
        return _POSSESSIVE.sub("", self.text) if self.is_possessive else self.text


@dataclass
class _Span:
    tokens: list[_Token]
    start: int  # index of its first token in the sentence
    end: int  # index after its last token
    possessive: bool

    @property
    def name(self) -> str:
        words = [t.raw if t.is_title else t.text for t in self.tokens]
        words[-1] = self.tokens[-1].bare
        return " ".join(words).replace(" & ", " & ")


def _tokens(sentence: str) -> list[_Token]:
    tokens = []
    for match in _TOKEN.finditer(sentence):
        raw = match.group(0)
        is_word = bool(regex.match(r"[\p{L}\p{N}]", raw))
        # The period goes from the word either way ("Dr." reads "Dr", "Barbecue." reads "Barbecue");
        # `raw` keeps it for a title, which is written as it was.
        text = raw[:-1] if is_word and raw.endswith(".") else raw
        tokens.append(_Token(text=text, raw=raw, is_word=is_word))
    return tokens


@functools.lru_cache(maxsize=65_536)
def _zipf(word: str) -> float:
    from wordfreq import zipf_frequency  # its word lists load on first use only

    return zipf_frequency(word, "en")


def _is_ordinary_word(word: str) -> bool:
    lower = word.lower()
    if len(lower) > 4 and lower.endswith(_VERB_OR_ADVERB_ENDINGS):
        return True
    return _zipf(lower) >= COMMON_WORD_ZIPF


def _clause_start(tokens: list[_Token], index: int) -> bool:
    previous = next((t for t in reversed(tokens[:index]) if True), None)
    return previous is None or (not previous.is_word and previous.raw in _CLAUSE_OPENERS)


def _spans(tokens: list[_Token], mid_sentence_names: set[str]) -> list[_Span]:
    spans: list[_Span] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if not (token.is_capitalised or token.is_title) or token.lower in NEVER_NAMES:
            index += 1
            continue
        start = index
        taken = [token]
        index += 1
        while index < len(tokens) and len(taken) < MAX_SPAN_TOKENS and not taken[-1].is_possessive:
            current = tokens[index]
            if current.is_capitalised and current.lower not in NEVER_NAMES:
                taken.append(current)
                index += 1
                continue
            if (current.is_word or current.raw == "&") and current.lower in CONNECTORS:
                after = index + 1
                while after < len(tokens) and tokens[after].lower in CONNECTORS and after - index < 2:
                    after += 1
                if after < len(tokens) and tokens[after].is_capitalised:
                    taken.extend(tokens[index:after])
                    index = after
                    continue
            break
        span = _Span(tokens=taken, start=start, end=index, possessive=taken[-1].is_possessive)
        span = _trim_clause_start(tokens, span, mid_sentence_names)
        if span is not None:
            spans.append(span)
    return spans


def _acts_like_someone(tokens: list[_Token], span: _Span) -> bool:
    """A clause-initial word that is a name in all likelihood though it is also a word ("Sam said",
    "Sam's bike", "Sam and I"): not a very common word, nor shaped like a verb or adverb."""
    word = span.tokens[0].bare.lower()
    if _zipf(word) >= COMMON_NAME_ZIPF or (len(word) > 4 and word.endswith(_VERB_OR_ADVERB_ENDINGS)):
        return False
    after = tokens[span.end:span.end + 2]
    if span.possessive:
        return True
    if after and after[0].lower in _PERSON_AFTER and after[0].lower != "and":
        return True
    return len(after) == 2 and after[0].lower == "and" and after[1].text in {"I", "me"}


def _trim_clause_start(tokens: list[_Token], span: _Span, mid_sentence_names: set[str]) -> _Span | None:
    """Drop what is capitalised only for starting a clause, and a leading article."""
    while span.tokens:
        first = span.tokens[0]
        if first.is_title:
            break
        at_clause_start = _clause_start(tokens, span.start)
        if first.lower in ARTICLES or (
            at_clause_start and first.lower not in mid_sentence_names and _is_ordinary_word(first.bare)
            and not (len(span.tokens) == 1 and _acts_like_someone(tokens, span))
        ):
            span.tokens = span.tokens[1:]
            span.start += 1
            while span.tokens and span.tokens[0].lower in CONNECTORS:
                span.tokens = span.tokens[1:]
                span.start += 1
            continue
        break
    if not span.tokens or (len(span.tokens) == 1 and span.tokens[0].is_title):
        return None
    return span


def _word_before(tokens: list[_Token], index: int, skip_articles: bool = True) -> _Token | None:
    position = index - 1
    while position >= 0 and skip_articles and tokens[position].lower in ARTICLES | {"my", "our", "his", "her",
                                                                                   "their", "your"}:
        position -= 1
    return tokens[position] if position >= 0 else None


def _kind(tokens: list[_Token], span: _Span, previous_kind: str | None) -> str:
    words = [t.lower.rstrip(".") for t in span.tokens]
    if span.tokens[0].is_title:
        return "person"
    for word in reversed(words):
        if (kind := _OWN_WORD_KINDS.get(word)) is not None and len(words) > 1:
            return kind
    after = tokens[span.end] if span.end < len(tokens) else None
    before = _word_before(tokens, span.start)
    for near in (after, before):
        if (near is not None and near.is_word and not near.is_capitalised
                and (kind := _NEAR_WORD_KINDS.get(near.lower)) is not None):
            return kind
    # An appositive: "Nido, a café"; "Ana, my sister".
    if after is not None and after.raw == "," and span.end + 1 < len(tokens):
        for near in tokens[span.end + 1:span.end + 4]:
            if (kind := _NEAR_WORD_KINDS.get(near.lower)) is not None and near.is_word:
                return kind
    if span.possessive and len(span.tokens) == 1:
        return "person"
    # A list that goes on from a person: "with Lena, Marco and Sam".
    adjacent = tokens[span.start - 1] if span.start > 0 else None
    if previous_kind == "person" and adjacent is not None and (adjacent.raw == "," or adjacent.lower == "and"):
        return "person"
    position = span.start - 1
    while position >= 0 and tokens[position].lower in ARTICLES:
        position -= 1
    direct_before = tokens[position] if position >= 0 else None
    if direct_before is not None and direct_before.is_word:
        if direct_before.lower == "to":
            verb = tokens[position - 1] if position > 0 else None
            return "person" if verb is not None and verb.lower in _PERSON_VERBS_BEFORE_TO else "place"
        if direct_before.lower in _PERSON_BEFORE and direct_before.lower != "and":
            return "person"
        if direct_before.lower in _PLACE_BEFORE:
            return "place"
    if after is not None and after.is_word and after.lower in _PERSON_AFTER and len(span.tokens) <= 3:
        return "person"
    return ""


def _mid_sentence_names(sentences: list[list[_Token]]) -> set[str]:
    """Lower-cased words the memory writes capitalised where no clause starts: its names for sure."""
    names = set()
    for tokens in sentences:
        for index, token in enumerate(tokens):
            if token.is_capitalised and not _clause_start(tokens, index):
                names.add(token.bare.lower())
    return names


@functools.lru_cache(maxsize=16_384)
def _extract(text: str) -> tuple[tuple[str, str], ...]:
    sentences = [_tokens(sentence) for sentence in split_sentences(" ".join(text.split()))]
    known = _mid_sentence_names(sentences)
    found: dict[str, tuple[str, str]] = {}
    for tokens in sentences:
        previous_kind: str | None = None
        for span in _spans(tokens, known):
            name = span.name.strip(" -'’&")
            key = normalize_alias(name)
            kind = _kind(tokens, span, previous_kind)
            previous_kind = kind
            if not key or len(key) < 2 or key in NEVER_NAMES:
                continue
            if key not in found:
                found[key] = (name, kind)
            elif not found[key][1] and kind:
                found[key] = (found[key][0], kind)
            if len(found) >= MAX_NAMES_PER_MEMORY:
                break
    return tuple(found.values())


def extract_entities(text: str) -> list[dict[str, Any]]:
    """The entities a plain text names, as metadata would list them: `{"name", "type", "kind"}` each."""
    if not isinstance(text, str) or not text.strip():
        return []
    return [{"name": name, "type": "entity", "kind": kind} for name, kind in _extract(text)]


def names_entities(metadata: dict[str, Any] | None) -> bool:
    """Whether a memory's metadata lists its entities itself (then nothing is read from its text)."""
    entities = (metadata or {}).get("entities")
    return isinstance(entities, list) and any(isinstance(e, dict) for e in entities)
