"""Facts that change over time, read offline: which lines state (or end) the value of a single-valued
attribute, for which holder, and whether one line replaces another.

Some things a person or an event has one of at a time: where someone lives, who they work for, whom
they are married to, when a meeting is, what state a project is in, a phone number. A line stating a
new value of such an attribute replaces the older line about the same holder; a line ending a value
("no longer lives in Denver", "quit her job at Acme", "moved out of Denver", "her relationship with
Sam is over") replaces the line stating it. The attributes, their phrasings and the shape a value
must have are data (domain/fact_rules.py); this module reads lines with them.

`fact_of` reads (holder, attribute, value, ended value) from a line; `replaces` says whether one line
replaces another. Precision first: a line is read only when a phrasing of the attribute itself is
there and the value has the attribute's shape, the holder is a name, a pronoun or a thing ("the
standup"), and an ending replaces only the line whose value it names. What these rules cannot read
is left alone (both lines stay current); `confusable` names the pairs `wiki lint` shows for a look.
Which line holds when is decided from the memories' dates (domain/fact_validity.py).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from lemminflect import getAllInflections, getInflection

from domain.aliases import normalize_alias
from domain.claim_text import plain_text
from domain.closed_class import ENGLISH_ARTICLES, POSSESSIVE_DETERMINERS, PRONOUNS
from domain.fact_rules import (
    ATTRIBUTES,
    COLOR_WORDS,
    CONFUSABLE_VERBS,
    DIET_WORDS,
    FAVOURITE_SYNONYMS,
    GENERIC_CHANGES,
    GENERIC_ENDINGS,
    NOUN_CHANGES,
    OVER_NOUNS,
    STATUS_WORDS,
    AttributeRule,
)

# A date the compiler puts before a memory's own line ("- 2026-06-01: …") and a lead naming a place
# ("**Uchi**: …") are not part of what the line states.
_DATE_LEAD = re.compile(r"^\s*\d{4}-\d{2}(?:-\d{2})?\s*:\s*")
_PLACE_LEAD = re.compile(r"^[^:]{1,60}:\s+(?=[A-Z])")
# Words that stand for the page's own subject in a memory's sentence (domain/closed_class.py).
_SUBJECT_WORDS = PRONOUNS | POSSESSIVE_DETERMINERS
_ARTICLES = ENGLISH_ARTICLES | POSSESSIVE_DETERMINERS
_POSSESSIVE = "(?:" + "|".join(sorted(POSSESSIVE_DETERMINERS)) + ")"
# Between a holder and its verb (and between a verb and the rest of its phrasing): auxiliaries,
# adverbs of time, and negations (which make the line an ending).
_NEGATION = (r"no\s+longer|not|never|no\s+more|stopped|stops|stop|doesn't|does\s+not|don't|do\s+not|didn't|did\s+not|isn't|"
             r"aren't|wasn't|weren't|hasn't|haven't|won't|doesn’t|don’t|didn’t|isn’t")
_AUX = (rf"(?:(?:{_NEGATION}|has|have|had|will|would|just|now|finally|recently|officially|already|also|still|"
        r"currently|then|eventually|since|again|soon|actually|really|has\s+since|is|are|was|were|am|'s|been|"
        r"be|being|got|gets|get|can|could|may|might|must|should|started|starts|start|began|begins|begin|keeps|"
        r"kept|continues|continued|went\s+on)\s+)*")
_ADV = rf"(?:(?:{_NEGATION}|now|also|still|currently|officially|finally|just|again|recently|back)\s+)*"
_NEGATED = re.compile(rf"\b(?:{_NEGATION})\b|\banymore\b|\bany\s+more\b|\bany\s+longer\b", re.IGNORECASE)
# Where a value's words end: punctuation, or a word that starts another part of the sentence.
_CLAUSE_END = re.compile(r"[.;!?,()]|\s(?:because|since|after|before|when|while|but|and|with|for|so|as|from|"
                         r"until|starting|effective|last|this|next|on|in|at|now|anymore|again|these|by|to|"
                         r"though|although|where|who|which|that|recently|today|yesterday)\b", re.IGNORECASE)
_END_AHEAD = r"(?=\s*(?:$|[.;!?,)]|\s(?:now|again|for\s+now|as\s+of|since|today|anymore|these\s+days|for\s+good|" \
             r"this\s+\w+|at\s+last|after\s+all|and|but|too)\b))"
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_TIME = (rf"(?:\d{{1,2}}(?::\d{{2}})?\s*(?:am|pm|a\.m\.|p\.m\.|h)\b|\d{{1,2}}:\d{{2}}|noon|midnight|"
         rf"(?:every\s+other\s+)?{_WEEKDAY}s?(?:\s+(?:mornings?|afternoons?|evenings?|nights?))?"
         rf"(?:\s+at\s+\d{{1,2}}(?::\d{{2}})?\s*(?:am|pm)?)?)")
_NAME = r"[A-Z][\w.'’&-]*(?:\s+(?:(?:of|de|da|del|la|le|and|&)\s+)?[A-Z0-9][\w.'’&-]*)*"


def _words(options: Iterable[str]) -> str:
    return "|".join(re.escape(word) for word in sorted(options, key=len, reverse=True))


_SHAPES = {
    "name": rf"(?:the\s+|a\s+|an\s+)?(?P<v>{_NAME})",
    "words": r"(?:a\s+|an\s+|the\s+)?(?P<v>[^\W\d][\w'-]*(?:\s+[^\W\d][\w'-]*){0,3})",
    "time": rf"(?P<v>{_TIME}){_END_AHEAD}",
    "status": rf"(?P<v>{_words(STATUS_WORDS)}){_END_AHEAD}",
    "phone": r"(?P<v>\+?\(?\d[\d\s().-]{5,}\d)",
    "email": r"(?P<v>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)",
    "age": rf"(?P<v>\d{{1,3}})(?:\s+years?\s+old)?{_END_AHEAD}",
    "address": r"(?P<v>\d+[A-Za-z]?\s+[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)",
    "diet": rf"(?P<v>{_words(DIET_WORDS)})(?:\s+diet)?{_END_AHEAD}",
    "color": rf"(?P<v>{_words(COLOR_WORDS)})(?=\s+hair\b|{_END_AHEAD[3:-1]})",
}


@dataclass(frozen=True)
class Fact:
    """What a line states: `holder`'s `attribute` is `value` (normalised), or, for an ending, that
    the value `ended` no longer holds. `attribute` is None for a change that names no attribute
    ("left Acme for Globex"): it is the attribute of the line whose value it ends."""

    holder: str
    attribute: str | None
    value: str | None
    ended: str | None = None


@cache
def _forms(verb: str) -> str:
    if verb == "be":
        return r"(?:is|are|was|were|am|be|been|being|'s|’s)"
    forms = {verb} | {form for found in getAllInflections(verb, upos="VERB").values() for form in found}
    return f"(?:{_words(forms)})"


def _phrase(phrasing: str, shape: str, whole: bool = False) -> str:
    """A phrasing as a regular expression: its verb inflected, {p} a possessive, {old} the value it
    leaves, {v} the value when it stands inside the phrasing; the value follows otherwise."""
    verb, _, rest = phrasing.partition(" ")
    value = _SHAPES[shape]
    words: list[str] = []
    placed = False
    for word in rest.split():
        if word == "{p}":
            words.append(_POSSESSIVE)
        elif word == "{old}":
            words.append(r"(?:the\s+|being\s+)?(?P<old>.+?)")
        elif word == "{v}":
            words.append(value)
            placed = True
        else:
            words.append(re.escape(word))
    body = _forms(verb) + (r"\s+" + _ADV + r"\s+".join(words) if words else "")
    return (body if placed else body + r"\s+" + _ADV + value) + (_END_AHEAD if whole else "")


@dataclass(frozen=True)
class _Pattern:
    attribute: str | None
    kind: str  # "state", "change" or "end"
    regex: re.Pattern[str]
    shape: str = "name"
    # Words the regex cannot match without, each after a space (its verb's forms, its nouns), searched
    # before it: most lines state no fact, and the regex's leading `.{0,80}?` is slow to say so.
    anchor: re.Pattern[str] | None = None


_HOLDER = r"^(?P<holder>.{0,80}?)\s+"
_ANCHORS: dict[str, re.Pattern[str]] = {}


def _anchor(alternation: str) -> re.Pattern[str]:
    """One compiled anchor per alternation, so a line is searched once for each (`_Pattern.anchor`)."""
    if alternation not in _ANCHORS:
        _ANCHORS[alternation] = re.compile(rf"\s(?:{alternation})", re.IGNORECASE)
    return _ANCHORS[alternation]


def _verb_anchor(phrasing: str) -> re.Pattern[str]:
    return _anchor(_forms(phrasing.partition(" ")[0]))
# "moved to Denver after leaving Boston": the value left behind, named after the new one.
_AFTER_LEAVING = re.compile(r"\s+(?:after|upon|on)\s+(?:leaving|quitting)\s+(?:the\s+)?(?P<old>" + _NAME + ")")


def _plural(noun: str) -> str:
    head, _, last = noun.rpartition(" ")
    plural = getInflection(last, tag="NNS") if last.isalpha() else None
    return f"{head} {plural[0]}".strip() if plural else noun


def _compile(rule: AttributeRule) -> list[_Pattern]:
    out = []
    # A value of a shape of its own ("vegan", "3pm") says which attribute changed: "switched from
    # being vegetarian to vegan". A proper name does not (a city? a company?): see GENERIC_CHANGES.
    changes = rule.changes if rule.value in ("name", "words") else (*rule.changes, *GENERIC_CHANGES)
    for kind, phrasings in (("state", rule.verbs), ("change", changes), ("end", rule.endings)):
        for phrasing in phrasings:
            # a proper name is told by its capital letter: only its pattern is case-sensitive
            regex = re.compile(_HOLDER + _AUX + _phrase(phrasing, rule.value, rule.whole),
                               re.IGNORECASE if rule.value != "name" else 0)
            out.append(_Pattern(rule.name, kind, regex, rule.value, _verb_anchor(phrasing)))
    if rule.nouns:
        nouns = _words(rule.nouns)
        plurals = _words({*rule.nouns, *(_plural(noun) for noun in rule.nouns)})
        said = _anchor(plurals)
        value = _SHAPES[rule.value]
        link = r"(?:is|was|are|were|'s|has\s+been|had\s+been|changed\s+to|is\s+changing\s+to|became)"
        lead = r"(?:(?:in|at|on|a|an|the|to)\s+)?"
        adjectives = r"(?:(?:new|current|present|old|latest|own)\s+)*"
        # "Caroline's home is in …", "her new number is …", "the project status changed to done" (a
        # thing's noun without a possessive)
        holders = (r"^(?P<holder>.{0,80}?)(?:'s|’s|s'|’)\s+", rf"^(?P<holder>(?i:{_POSSESSIVE}))\s+",
                   r"^(?P<holder>(?:[Tt]he|[Oo]ur|[Mm]y)\s+.{0,60}?)\s+")
        for holder in holders:
            out.append(_Pattern(rule.name, "state", re.compile(
                rf"{holder}{adjectives}(?i:{nouns})\s+(?i:{link})\s+{_ADV}(?i:changed\s+to\s+)?{lead}{value}"),
                rule.value, said))
        out.append(_Pattern(rule.name, "state", re.compile(
            rf"{_HOLDER}(?i:{_AUX})(?i:has|have|had|got|gets|get)\s+(?i:a|an)\s+(?i:new)\s+(?i:{nouns})\s*[,:]?\s+"
            rf"{value}"), rule.value, said))
        verbs = "|".join(_forms(verb) for verb in NOUN_CHANGES)
        out.append(_Pattern(rule.name, "state", re.compile(
            rf"{_HOLDER}(?i:{_AUX})(?i:{verbs})\s+(?:(?i:{_POSSESSIVE})\s+)?(?i:{plurals})\s+(?i:to|over\s+to)\s+"
            rf"{value}"), rule.value, said))
    return out


_PATTERNS: tuple[_Pattern, ...] = tuple(p for rule in ATTRIBUTES for p in _compile(rule))
_GENERIC: tuple[_Pattern, ...] = (
    *(_Pattern(None, "change", re.compile(_HOLDER + _AUX + _phrase(p, "name")), anchor=_verb_anchor(p))
      for p in GENERIC_CHANGES),
    *(_Pattern(None, "end", re.compile(_HOLDER + _AUX + _phrase(p, "name") + r"(?=\s*(?:$|[.;!?,]|\s(?:after|"
                                                                            r"behind|in\s+\d{4}|last|this)\b))"),
               anchor=_verb_anchor(p))
      for p in GENERIC_ENDINGS),
    # "is no longer a nurse", "is no longer vegan": ends whatever fact has that value
    _Pattern(None, "end", re.compile(_HOLDER + r"(?i:is|are|was|were|'s)\s+(?i:no\s+longer|not)\s+"
                                     r"(?:(?i:a|an|the)\s+)?(?P<v>[\w'-]+(?:\s+[\w'-]+){0,2}?)"
                                     r"(?=\s*(?:$|[.;!?,]|\s(?:anymore|any\s+more|any\s+longer)\b))"), "words",
             _anchor(r"is|are|was|were|'s")),
)
_FAVOURITE = re.compile(r"^(?P<holder>.{0,80}?)(?:(?:'s|’s|s'|’)\s+|\s*)(?:(?:new|current|all-time)\s+)*"
                        r"(?i:favou?rite)\s+(?P<thing>[\w-]+)\s+(?i:is|was|has\s+been|are|were)\s+" + _ADV
                        + r"(?:(?i:a|an|the)\s+)?(?P<v>[\w'-]+(?:\s+[\w'-]+){0,3}?)" + _END_AHEAD)
_OVER = re.compile(rf"^(?P<holder>.{{0,80}}?)(?:(?:'s|’s|s'|’)\s+|\s*)(?P<noun>{_words(OVER_NOUNS)})\s+"
                   r"(?:with|to|at|in)\s+(?:the\s+)?(?P<v>.+?)\s+(?:is|was|has|had)?\s*(?:been\s+)?"
                   r"(?:over|ended|finished|done)\b", re.IGNORECASE)
_SPLIT = re.compile(r"^(?P<holder>.{1,60}?)\s+and\s+(?P<v>" + _NAME + r")\s+(?:have\s+|had\s+)?"
                    r"(?:split\s+up|broke\s+up|divorced|separated|called\s+it\s+quits)\b")


def statement(line: str) -> str:
    """The sentence a claim line states: its plain text without bullet, date and place leads."""
    text = _DATE_LEAD.sub("", plain_text(line))
    return _PLACE_LEAD.sub("", text).strip()


def _holder(raw: str) -> str | None:
    """What the sentence is about: a pronoun, a name (capitalised words), or a thing led by an
    article ("the book club"), read from the end of the words before the phrasing; None when those
    words end in none of them (a relative clause, a verb)."""
    clause = re.split(r"[;:,]", raw)[-1].strip()
    tokens = clause.split()
    if len(tokens) > 1 and tokens[-1].lower() in ("and", "then"):
        # "Rafael packed up and moved to …": the subject of the first of two joined verbs
        subject = tokens[:1] if tokens[0].lower() in _SUBJECT_WORDS else list(
            itertools.takewhile(lambda w: w[:1].isupper(), tokens))
        rest = tokens[len(subject):-1]
        if subject and rest and all(w[:1].islower() for w in rest):
            return _holder(" ".join(subject))
    for size in range(min(len(tokens), 6), 0, -1):
        words = tokens[-size:]
        lowered = [w.lower() for w in words]
        if size == 1 and lowered[0] in _SUBJECT_WORDS:
            return lowered[0]
        if all(w[:1].isupper() for w in words) and lowered[0] not in _ARTICLES | _SUBJECT_WORDS:
            return normalize_alias(" ".join(words)) or None
        if lowered[0] in _ARTICLES and size > 1 and all(w[:1].isalpha() for w in words[1:]):
            kept = [w for w in normalize_alias(" ".join(words)).split() if w not in _ARTICLES]
            return " ".join(kept) or None
    return None


_HONORIFIC = re.compile(r"\b([A-Z][a-z]{0,3})\.(?=\s+[A-Z])")


def _value(raw: str, shape: str = "words") -> str:
    """A value's words, normalised: a free value ends where its clause does; a value of a closed
    shape (a time, an email, a phone number) is taken whole."""
    if shape not in ("name", "words"):
        return " ".join(normalize_alias(raw).split()[:6])
    raw = _HONORIFIC.sub(r"\1", raw)  # "Dr. Kim": the period is not the sentence's end
    cut = _CLAUSE_END.search(" " + raw)
    value = (" " + raw)[: cut.start()] if cut else " " + raw
    words = [w for w in normalize_alias(value.strip().rstrip(".")).split() if w not in _ARTICLES][:5]
    return " ".join(words)


def _read(pattern: _Pattern, text: str) -> Fact | None:
    match = pattern.regex.match(text)
    if match is None:
        return None
    holder = _holder(match.group("holder"))
    if holder is None:
        return None
    value = _value(match.group("v"), pattern.shape) if match.groupdict().get("v") else ""
    old = match.groupdict().get("old")
    after = _AFTER_LEAVING.match(text, match.end()) if not old and match.groupdict().get("v") else None
    old = old or (after.group("old") if after else None)
    negated = bool(_NEGATED.search(text[match.start("holder") + len(match.group("holder")): match.start("v")]
                                   if match.groupdict().get("v") else text))
    if pattern.kind == "end" or negated:
        ended = value or (_value(old) if old else "")
        return Fact(holder, pattern.attribute, None, ended) if ended else None
    if not value:
        return None
    return Fact(holder, pattern.attribute, value, _value(old, pattern.shape) if old else None)


@cache
def _fact(text: str) -> Fact | None:
    for regex, attribute_of in ((_OVER, lambda m: OVER_NOUNS[m.group("noun").lower()] or None),
                                (_SPLIT, lambda m: "partner")):
        match = regex.match(text)
        if match and (holder := _holder(match.group("holder"))) is not None and (value := _value(match.group("v"))):
            return Fact(holder, attribute_of(match), None, value)
    match = _FAVOURITE.match(text)
    if match and (holder := _holder(match.group("holder"))) is not None:
        thing = match.group("thing").lower()
        return Fact(holder, f"favourite {FAVOURITE_SYNONYMS.get(thing, thing)}", _value(match.group("v")))
    present: dict[re.Pattern[str], bool] = {}
    for pattern in (*_PATTERNS, *_GENERIC):
        if pattern.anchor is not None:
            if pattern.anchor not in present:
                present[pattern.anchor] = pattern.anchor.search(text) is not None
            if not present[pattern.anchor]:
                continue
        fact = _read(pattern, text)
        if fact is not None:
            return fact
    return None


def fact_of(line: str) -> Fact | None:
    """The single-valued fact a line states or ends, or None."""
    text = statement(line)
    return _fact(text) if text else None


def _same_value(first: str, second: str) -> bool:
    """One value written two ways: equal, or one the other's leading words ("acme" / "acme corp")."""
    a, b = first.split(), second.split()
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    return bool(shorter) and longer[: len(shorter)] == shorter


def _holders_agree(first: str, second: str, page_names: Iterable[str]) -> bool:
    """Both name the same holder: the same words, or each is the page itself (one of its names, a
    name's first word, or a pronoun standing for it)."""
    if first == second:
        return True
    names = {normalize_alias(n) for n in page_names} - {""}
    names |= {" ".join(w for w in n.split() if w not in _ARTICLES) for n in names}
    own = names | {n.split()[0] for n in names if n} | _SUBJECT_WORDS
    return first in own and second in own


def replaces(line: str, other: str, page_names: Iterable[str] = ()) -> bool:
    """Whether `line` replaces `other` as the value of one single-valued attribute of one holder:
    another value of the same attribute, an ending of `other`'s value, or `other`'s ended value
    stated again ("lives in Denver" after "no longer lives in Denver")."""
    mine, theirs = fact_of(line), fact_of(other)
    if mine is None or theirs is None or not _holders_agree(mine.holder, theirs.holder, list(page_names)):
        return False
    if theirs.value is None:  # `other` ends a value: stating that value again replaces the ending
        return (mine.value is not None and theirs.ended is not None and _same_value(mine.value, theirs.ended)
                and _attributes_meet(mine.attribute, theirs.attribute))
    if mine.ended is not None and _same_value(mine.ended, theirs.value):
        return _attributes_meet(mine.attribute, theirs.attribute)
    if mine.value is None or mine.attribute is None:
        return False
    return mine.attribute == theirs.attribute and not _same_value(mine.value, theirs.value)


def _attributes_meet(first: str | None, second: str | None) -> bool:
    return first is None or second is None or first == second


def rivals(line: str, other: str, page_names: Iterable[str] = ()) -> bool:
    """Whether either line replaces the other (which one holds is a matter of their dates)."""
    names = list(page_names)
    return replaces(line, other, names) or replaces(other, line, names)


_LEADING_VERB = re.compile(r"^(?P<holder>.{0,80}?)\s+" + _AUX + r"(?P<verb>[a-z]+)\s+(?P<rest>\S.*)$")


def confusable(line: str, other: str, page_names: Iterable[str] = ()) -> bool:
    """Two lines of one holder led by the same verb that facts that change share with facts that
    accumulate ("joined a pottery class" / "joined a support group"), that the rules do not read as
    rivals: kept both current, and named by the lint as a pair to look at."""
    first, second = statement(line), statement(other)
    a, b = _LEADING_VERB.match(first), _LEADING_VERB.match(second)
    if a is None or b is None or _value(a.group("rest")) == _value(b.group("rest")):
        return False
    holders = _holder(a.group("holder")), _holder(b.group("holder"))
    if holders[0] is None or holders[1] is None or not _holders_agree(holders[0], holders[1], list(page_names)):
        return False
    verbs = {_lemma(a.group("verb")), _lemma(b.group("verb"))}
    return len(verbs) == 1 and verbs <= set(CONFUSABLE_VERBS) and not rivals(line, other, page_names)


@cache
def _lemma(word: str) -> str:
    for verb in CONFUSABLE_VERBS:
        if re.fullmatch(_forms(verb), word, re.IGNORECASE):
            return verb
    return word
