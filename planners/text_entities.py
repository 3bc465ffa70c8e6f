"""The names a plain sentence mentions, read offline: what a memory without `metadata.entities` is about.

A memory written as people write ("Lunch at Franklin Barbecue with Lena: brisket again.") names its
things with capitalised words. The reader proposes each name span with a kind, from the span's own
words and the words around it, in the same shape as a metadata entity (`{"name", "type", "kind"}`),
so the scripted planner treats it as it treats metadata. Whether a word is a name at all is
domain/name_words.py's to say (first names, word frequencies, closed-class words, what the scope
knows); the words that give a kind are domain/kinds.py's.

How a span is read, sentence by sentence (domain/sentences.py: "Dr." and "St." end none):
- Name tokens are words starting with an upper-case letter (any script with case, `regex`'s \\p{Lu});
  a span is a run of them, joined across connectors when a name token follows ("Bank of America",
  "Church of the Holy Cross"), led by a title when there is one ("Dr. Patel"), cut at a possessive
  ("Lena's" → "Lena"). A leading article is dropped ("the Driskill" → "Driskill"). A word in lower
  case is a name when the scope knows it, or when it is a first name right after a word that
  introduces someone ("lunch with caroline"); a sentence written in capitals reads only its first
  names, rare words and known names as names.
- A word that starts a sentence or clause is capitalised whatever it is: `reads_as_name` decides
  ("John went to the gym." reads John; "Will you come?" reads nothing; "Bummer!" is no name).
- Greetings, thanks and interjections are never names ("Hey", "Aww", "Hahaha"); a name they lead
  ("Hey Mel!", "Thanks, Jon!") or a name set off at a clause's edge ("Wow, that's cool, Caroline!") is
  the **addressee**: read, but not what the sentence is about.
- The kind, first hint wins: a title → person; a word of the span that says what it is (Bank →
  organisation, Barbecue → restaurant, Pool → pool, Festival → event, City → city); a word next to it
  ("the café Nido", "Kyoto trip", "my sister Ana", "Nido, a café"); how it is used (with/met/called
  someone, someone said, a possessive, a list that continues a person "with Lena and Marco"); the
  preposition before it (in/at/to/from/near → place), unless the span only qualifies what follows an
  indefinite article ("an LGBTQ support group": LGBTQ is no place). With no hint the kind is empty.

Deterministic: no clock, no randomness, names in order of first appearance, one entry per name.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import regex

from domain.aliases import normalize_alias
from domain.closed_class import (
    AFFIRMATIONS,
    ENGLISH_ARTICLES,
    GREETINGS,
    HONORIFICS,
    NAME_CONNECTORS,
    PLACE_PREPOSITIONS,
    POSSESSIVE_DETERMINERS,
    REACTION_WORDS,
    THANKS,
    TIME_ADVERBS,
    is_closed_class,
    is_interjection,
)
from domain.kinds import kind_beside, kind_inside
from domain.name_words import (
    NO_NAMES,
    PERSON_INTRODUCERS,
    SPEECH_VERBS,
    KnownNames,
    Where,
    name_prior,
    reads_as_lower_case_name,
    reads_as_name,
)
from domain.sentences import split_sentences

# A token: a word (letters, marks, digits, inner apostrophes, hyphens and ampersands, and one trailing
# period kept for abbreviations), or one punctuation character.
_TOKEN = regex.compile(r"[\p{L}\p{N}][\p{L}\p{M}\p{N}'’\-&]*\.?|[^\s\p{L}\p{N}]")
_STARTS_UPPER = regex.compile(r"^\p{Lu}")
_HAS_LOWER_OR_IS_SHORT_CAPS = regex.compile(r"\p{Ll}|^\p{Lu}{2,5}$")
_ALL_CAPS = regex.compile(r"^\p{Lu}[\p{Lu}'’\-]+$")
_POSSESSIVE = regex.compile(r"['’]s?$")

# Words after a span that say it is someone ("Lena said", "Marco and I").
_PERSON_AFTER = SPEECH_VERBS | frozenset({
    "recommended", "loves", "loved", "likes", "liked", "and", "called", "texted", "invited", "brought", "cooked",
    "baked", "joined", "prefers", "hates", "laughed", "smiled", "arrived", "decided", "signed", "visited", "met",
    "flew", "drove", "bought", "booked", "ordered", "hiked", "paid", "gave", "sent", "wrote", "moved", "started",
    "finished", "won", "picked", "emailed", "promised"})
# Words before a span that put it somewhere ("in Kyoto", "visited Lisbon").
_PLACE_BEFORE = PLACE_PREPOSITIONS | frozenset({"visited", "visit", "visiting"})
# Verbs after which "to X" is someone ("talked to Sam"), not somewhere.
_PERSON_VERBS_BEFORE_TO = frozenset({"talked", "spoke", "speak", "talk", "wrote", "write", "sent", "send",
                                     "gave", "give", "said", "say", "introduced", "listened", "replied",
                                     "lent", "explained", "showed", "waved", "apologized", "apologised"})
_CLAUSE_OPENERS = frozenset({":", ";", "(", "\"", "“", "—", "–", "-", "[", "•", "*"})
_CLAUSE_ENDS = frozenset({",", "!", "?", ".", ";", ":", "…", ")", "—", "–"})
_ADDRESS_ENDS = frozenset({"!", "?", ".", "…"})
MAX_SPAN_TOKENS = 6
MAX_NAMES_PER_MEMORY = 24


@dataclass(frozen=True)
class NameRead:
    """One name a text gives: as written (best cased), its kind, and whether it is only the addressee
    of a sentence ("Hey Mel!")."""

    name: str
    kind: str
    addressee: bool = False


@dataclass(frozen=True)
class _Token:
    text: str  # the word without an abbreviation's or the sentence's closing period
    raw: str
    is_word: bool
    capitalised: bool  # counts as a capitalised word where it stands (see `_tokens`)

    @property
    def lower(self) -> str:
        return self.text.lower()

    @property
    def is_title(self) -> bool:
        return self.is_word and self.lower in HONORIFICS and _STARTS_UPPER.match(self.text) is not None

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
        words = [t.raw if t.is_title else _display(t.text) if t.capitalised else t.text for t in self.tokens]
        last = self.tokens[-1]
        words[-1] = _display(last.bare) if last.capitalised else last.bare
        return " ".join(words)


def _display(word: str) -> str:
    """A name written in lower case or shouted in capitals, as a name is written ("caroline" and
    "CAROLINE" -> "Caroline"); an acronym or a name with its own case is kept."""
    if word.islower():
        return word[:1].upper() + word[1:]
    return word


def _tokens(sentence: str, known: KnownNames) -> list[_Token]:
    raw_tokens = [match.group(0) for match in _TOKEN.finditer(sentence)]
    words = [raw for raw in raw_tokens if regex.match(r"[\p{L}\p{N}]", raw)]
    # A sentence shouted in capitals ("JOHN WENT TO THE GYM"): only its names count as capitalised.
    shouted = len(words) >= 3 and sum(1 for w in words if _ALL_CAPS.match(w.rstrip("."))) * 5 >= len(words) * 4
    tokens: list[_Token] = []
    for raw in raw_tokens:
        is_word = bool(regex.match(r"[\p{L}\p{N}]", raw))
        # The period goes from the word either way ("Dr." reads "Dr", "Barbecue." reads "Barbecue");
        # `raw` keeps it for a title, which is written as it was.
        text = raw[:-1] if is_word and raw.endswith(".") else raw
        capitalised = (is_word and _STARTS_UPPER.match(text) is not None
                       and _HAS_LOWER_OR_IS_SHORT_CAPS.search(text) is not None)
        if shouted and is_word:
            bare = _POSSESSIVE.sub("", text).lower()
            capitalised = known.knows(bare) or name_prior(bare) in ("first_name", "rare")
            text = text[:1] + text[1:].lower() if capitalised else text.lower()
        elif is_word and not capitalised and text.islower():
            previous = tokens[-1].lower if tokens else ""
            capitalised = reads_as_lower_case_name(_POSSESSIVE.sub("", text), previous, known)
        tokens.append(_Token(text=text, raw=raw, is_word=is_word, capitalised=capitalised))
    return tokens


def _clause_start(tokens: list[_Token], index: int) -> bool:
    """The first word of a sentence or clause, past any interjection that opens it ("Hey Mel" is
    not; "Wow, that's" is)."""
    previous = tokens[index - 1] if index > 0 else None
    return previous is None or (not previous.is_word and previous.raw in _CLAUSE_OPENERS)


def _where(tokens: list[_Token], span: _Span, known: set[str]) -> Where:
    first = span.tokens[0]
    after = [t for t in tokens[span.start + 1:span.start + 3]]
    next_token = after[0] if after else None
    clause_start = _clause_start(tokens, span.start)
    previous = tokens[span.start - 1] if span.start > 0 else None
    return Where(
        clause_start=clause_start,
        previous_word=previous.lower if previous is not None and previous.is_word else "",
        next_word=next_token.lower if next_token is not None and next_token.is_word else "",
        word_after=after[1].lower if len(after) > 1 and after[1].is_word else "",
        next_capitalised=len(span.tokens) > 1,
        stands_alone=clause_start and len(span.tokens) == 1 and (
            next_token is None or (not next_token.is_word and next_token.raw in _CLAUSE_ENDS)),
        possessive=first.is_possessive,
        known=first.bare.lower() in known,
    )


def _spans(tokens: list[_Token], known: set[str]) -> list[_Span]:
    spans: list[_Span] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if not (token.capitalised or token.is_title) or (is_closed_class(token.bare) and not token.is_title
                                                          and name_prior(token.bare) != "word_name"):
            index += 1
            continue
        start = index
        taken = [token]
        index += 1
        while index < len(tokens) and len(taken) < MAX_SPAN_TOKENS and not taken[-1].is_possessive:
            current = tokens[index]
            if current.capitalised and not is_interjection(current.text):
                taken.append(current)
                index += 1
                continue
            if (current.is_word or current.raw == "&") and current.lower in NAME_CONNECTORS:
                after = index + 1
                while after < len(tokens) and tokens[after].lower in NAME_CONNECTORS and after - index < 2:
                    after += 1
                if after < len(tokens) and tokens[after].capitalised:
                    taken.extend(tokens[index:after])
                    index = after
                    continue
            break
        trimmed = _trim(tokens, _Span(tokens=taken, start=start, end=index,
                                      possessive=taken[-1].is_possessive), known)
        if trimmed is not None:
            spans.append(trimmed)
    return spans


def _trim(tokens: list[_Token], span: _Span, known: set[str]) -> _Span | None:
    """Drop what is capitalised only for starting a clause, a leading article or interjection."""
    while span.tokens:
        first = span.tokens[0]
        if first.is_title:
            break
        if first.lower in ENGLISH_ARTICLES or is_interjection(first.bare) or not reads_as_name(
                first.bare, _where(tokens, span, known)):
            span.tokens = span.tokens[1:]
            span.start += 1
            while span.tokens and span.tokens[0].lower in NAME_CONNECTORS:
                span.tokens = span.tokens[1:]
                span.start += 1
            continue
        break
    if not span.tokens or (len(span.tokens) == 1 and span.tokens[0].is_title):
        return None
    return span


def _word_before(tokens: list[_Token], index: int) -> _Token | None:
    position = index - 1
    while position >= 0 and tokens[position].lower in ENGLISH_ARTICLES | POSSESSIVE_DETERMINERS:
        position -= 1
    return tokens[position] if position >= 0 else None


def _qualifies_what_follows(tokens: list[_Token], span: _Span) -> bool:
    """"an LGBTQ support group", "the LGBTQ community", "a Tesla charger": a name followed by a lower-case
    noun only says what sort of thing that noun is (a word of time, a verb or adverb form, or a
    closed-class word after it ends the phrase instead: "at Zilker Park yesterday", "in Kyoto visiting")."""
    after = tokens[span.end] if span.end < len(tokens) else None
    return (after is not None and after.is_word and not after.capitalised and after.text.islower()
            and not is_closed_class(after.text) and after.lower not in TIME_ADVERBS
            and not after.lower.endswith(("ed", "ing", "ly")) and not span.possessive)


def _kind(tokens: list[_Token], span: _Span, previous_kind: str | None) -> str:
    words = [t.lower.rstrip(".") for t in span.tokens]
    if span.tokens[0].is_title:
        return "person"
    for word in reversed(words):
        if (kind := kind_inside(word)) is not None and len(words) > 1:
            return kind
    after = tokens[span.end] if span.end < len(tokens) else None
    before = _word_before(tokens, span.start)
    if span.possessive and len(span.tokens) == 1:
        return "person"  # "Lena's café": whatever follows is Lena's
    for near in (after, before):
        if (near is not None and near.is_word and not near.capitalised
                and (kind := kind_beside(near.lower)) is not None):
            return kind
    # An appositive: "Nido, a café"; "Ana, my sister".
    if after is not None and after.raw == "," and span.end + 1 < len(tokens):
        for near in tokens[span.end + 1:span.end + 4]:
            if near.is_word and (kind := kind_beside(near.lower)) is not None:
                return kind
    # A list that goes on from a person: "with Lena, Marco and Sam".
    adjacent = tokens[span.start - 1] if span.start > 0 else None
    if previous_kind == "person" and adjacent is not None and (adjacent.raw == "," or adjacent.lower == "and"):
        return "person"
    position = span.start - 1
    while position >= 0 and tokens[position].lower in ENGLISH_ARTICLES:
        position -= 1
    direct_before = tokens[position] if position >= 0 else None
    if direct_before is not None and direct_before.is_word and not (
            direct_before.lower in _PLACE_BEFORE and _qualifies_what_follows(tokens, span)):
        if direct_before.lower == "to":
            verb = tokens[position - 1] if position > 0 else None
            return "person" if verb is not None and verb.lower in _PERSON_VERBS_BEFORE_TO else "place"
        if direct_before.lower in PERSON_INTRODUCERS and direct_before.lower != "and":
            return "person"
        if direct_before.lower in _PLACE_BEFORE:
            return "place"
    if after is not None and after.is_word and after.lower in _PERSON_AFTER and len(span.tokens) <= 3:
        return "person"
    if name_prior(span.tokens[0].bare) == "first_name" and len(span.tokens) <= 2:
        return "person"
    return ""


def _addressed(tokens: list[_Token], span: _Span, known: set[str]) -> bool:
    """A name the sentence speaks to: led by a greeting or thanks ("Hey Mel!", "Thanks, Jon!"), or a
    person's name set off by a comma after an interjection or at a clause's edge ("Woah, Maria, that
    sounds cool!", "Wow, that's cool, Caroline!", "Caroline, did you go?")."""
    if len(span.tokens) > 2:
        return False
    before = [t for t in tokens[:span.start] if t.raw != ","]
    greeter = before[-1] if before else None
    if greeter is not None and greeter.is_word and greeter.lower in GREETINGS | THANKS:
        return True
    first = span.tokens[0].bare.lower()
    if not (name_prior(first) in ("first_name", "word_name") or first in known):
        return False
    previous = tokens[span.start - 1] if span.start > 0 else None
    after = tokens[span.end] if span.end < len(tokens) else None
    if greeter is not None and previous is not None and previous.raw == "," and (
            is_interjection(greeter.text) or greeter.lower in AFFIRMATIONS | REACTION_WORDS) and span.start <= 3:
        return True
    ends_clause = after is None or (not after.is_word and after.raw in _ADDRESS_ENDS)
    set_off_before = previous is not None and previous.raw == ","
    opens = span.start == 0 and after is not None and after.raw in {",", "!"}
    return (set_off_before and ends_clause) or opens


def _mid_sentence_names(sentences: list[list[_Token]]) -> set[str]:
    """Lower-cased words the memory writes capitalised where no clause starts: its names for sure."""
    names = set()
    for tokens in sentences:
        for index, token in enumerate(tokens):
            if token.capitalised and not _clause_start(tokens, index) and not is_closed_class(token.bare):
                names.add(token.bare.lower())
    return names


@functools.lru_cache(maxsize=16_384)
def _read(text: str, known: KnownNames) -> tuple[NameRead, ...]:
    sentences = [_tokens(sentence, known) for sentence in split_sentences(" ".join(text.split()))]
    written = _mid_sentence_names(sentences) | set(known.words)
    found: dict[str, NameRead] = {}
    for tokens in sentences:
        previous_kind: str | None = None
        for span in _spans(tokens, written):
            name = span.name.strip(" -'’&")
            key = normalize_alias(name)
            kind = _kind(tokens, span, previous_kind)
            previous_kind = kind
            if not key or len(key) < 2 or name_prior(key) == "closed":
                continue
            addressee = _addressed(tokens, span, set(known.words)) and kind in ("", "person")
            if addressee:
                kind = "person"
            seen = found.get(key)
            if seen is None:
                found[key] = NameRead(name=name, kind=kind, addressee=addressee)
            else:
                found[key] = NameRead(name=seen.name, kind=seen.kind or kind, addressee=seen.addressee and addressee)
            if len(found) >= MAX_NAMES_PER_MEMORY:
                break
    return tuple(found.values())


def read_names(text: str, known: KnownNames = NO_NAMES) -> tuple[NameRead, ...]:
    """Every name a plain text gives, addressees included, in order of first appearance."""
    if not isinstance(text, str) or not text.strip():
        return ()
    return _read(text, known.within(text))


def extract_entities(text: str, known: KnownNames = NO_NAMES) -> list[dict[str, Any]]:
    """The entities a plain text names, as metadata would list them: `{"name", "type", "kind"}` each
    (the names it only speaks to are left out)."""
    return [{"name": read.name, "type": "entity", "kind": read.kind}
            for read in read_names(text, known) if not read.addressee]


def names_entities(metadata: dict[str, Any] | None) -> bool:
    """Whether a memory's metadata lists its entities itself (then nothing is read from its text)."""
    entities = (metadata or {}).get("entities")
    return isinstance(entities, list) and any(isinstance(e, dict) for e in entities)
