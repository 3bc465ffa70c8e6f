"""The simulated claim judge: it reads a line and the memories it cites and says whether they support
it, and if not, what is wrong. A rule-based reader, not a model: what it proves is in docs/claude.md.

A line is supported when one cited memory says all of it, or, for a line joining clauses ("X did A
and B"), when each clause is said by one memory. A clause is said by a memory when, in that memory:

- every name it writes (a capitalised word that is not an ordinary sentence opening) is there, or is
  the page's own name ("invented");
- every number and date it states is there, written as digits or words ("number");
- it denies what the memory affirms, or affirms what the memory denies ("not", "never", "no", "n't",
  "without"), or says the opposite word ("hated" for "loved") ("negation");
- the one who acts is the one who acts there: the first name before the verb is the memory's, not a
  name the memory puts after it ("roles");
- it generalises no further than the memory ("always", "every", "all", "usually", ...)
  ("generalisation");
- its other content words (stemmed with the Snowball English stemmer) are the memory's, one word
  of paraphrase allowed in a long clause; a clause whose words only several memories together hold
  is two memories merged into one claim ("merged").

It shares no code with the lying mode (claude_sim/lies.py), which writes the lies it is measured on.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

import snowballstemmer
from lemminflect import getAllLemmas

from claude_sim.turns import as_told

_STEMMER = snowballstemmer.stemmer("english")
_WORD = re.compile(r"[^\W_][\w'’-]*", re.UNICODE)
_DATE = re.compile(r"\b\d{4}-\d{2}(?:-\d{2})?\b")
_NUMBER = re.compile(r"\b\d+(?:[.,:]\d+)*\b")
_LEADING_DATE = re.compile(r"^\s*(?:[-*]\s*)?(\d{4}-\d{2}-\d{2})\s*:\s*")
_BOLD_LEAD = re.compile(r"^\*\*([^*]+)\*\*:\s*")
_NEGATORS = frozenset({"not", "never", "no", "nor", "without", "neither", "nobody", "nothing", "none", "cannot"})
_QUANTIFIERS = frozenset({"always", "every", "everyday", "each", "all", "usually", "often", "regularly",
                          "constantly", "daily", "weekly", "monthly", "yearly", "everyone", "everybody",
                          "everything", "whenever", "frequently", "forever", "routinely", "typically",
                          "invariably", "anytime"})
# Words that say the opposite of each other, compared as stems.
_OPPOSITE_WORDS = [("love", "hate"), ("like", "dislike"), ("enjoy", "hate"), ("enjoy", "dislike"), ("happy", "sad"),
                   ("happy", "unhappy"), ("good", "bad"), ("easy", "hard"), ("easy", "difficult"),
                   ("cheap", "expensive"), ("quiet", "loud"), ("quiet", "noisy"), ("early", "late"), ("win", "lose"),
                   ("accept", "reject"), ("open", "closed"), ("agree", "disagree"), ("succeed", "fail"),
                   ("best", "worst"), ("better", "worse"), ("more", "less"), ("love", "dislike"),
                   ("positive", "negative"), ("calm", "stressed"), ("bored", "excited"), ("remember", "forget"),
                   ("great", "terrible"), ("great", "awful"), ("delicious", "bland"), ("fun", "dull"),
                   ("inspiring", "dull"), ("powerful", "pointless"), ("worth", "worthless"), ("safe", "dangerous"),
                   ("clean", "dirty"), ("fast", "slow"), ("warm", "cold"), ("busy", "empty"), ("full", "empty")]
_OPPOSITES = [(_STEMMER.stemWord(a), _STEMMER.stemWord(b)) for a, b in _OPPOSITE_WORDS]
_NUMBER_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
                 "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "twenty": "20",
                 "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "once": "1", "twice": "2",
                 "first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5", "half": "0.5",
                 "dozen": "12", "single": "1", "couple": "2", "pair": "2"}
_STOP = frozenset(["a", "an", "the", "this", "that", "these", "those", "it", "its", "he", "she", "they", "them", "their", "his", "her", "hers", "him", "we", "our", "us", "you", "your", "i", "my", "me", "mine", "in", "on", "at", "by", "for", "from", "with", "to", "of", "and", "or", "but", "so", "as", "if", "when", "while", "after", "before", "during", "until", "since", "about", "into", "over", "under", "between", "there", "here", "then", "also", "both", "some", "any", "one", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "has", "have", "had", "will", "would", "can", "could", "should", "may", "might", "must", "just", "very", "really", "too", "quite", "than", "who", "whom", "whose", "which", "what", "where", "why", "how", "own", "same", "such", "only", "other", "another", "again", "further", "once", "out", "up", "down", "off", "via", "per", "user", "users"])
_PREPOSITIONS = frozenset({"at", "in", "on", "to", "with", "from", "by", "for", "of", "into", "near", "named",
                           "called", "about", "visited", "met", "and", "like", "than", "after", "before"})
# The verb that stands for one who acts: the first lower-case word after a name that is no joining word.
_ACTOR_STOP = frozenset({"and", "&", "or", "'s", "’s"})


@dataclass(frozen=True)
class Finding:
    supported: bool
    kind: str = ""  # what is wrong when it is not: invented, number, negation, roles, generalisation, merged
    detail: str = ""


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold().replace("’", "'"))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _words(text: str) -> list[str]:
    return _WORD.findall(text.replace("’", "'"))


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    folded = _fold(word)
    for suffix in ("'s", "n't"):
        folded = folded.removesuffix(suffix)
    return _STEMMER.stemWord(folded)


def _plain(line: str) -> tuple[str, str | None, str]:
    """The line without its bullet, its leading date and its bold lead (both returned apart), and
    without emphasis."""
    text = line.strip()
    date = None
    match = _LEADING_DATE.match(text)
    if match:
        date, text = match.group(1), text[match.end():]
    else:
        text = re.sub(r"^[-*]\s+", "", text)
    lead = _BOLD_LEAD.match(text)
    if lead:
        text = text[lead.end():]
    return re.sub(r"[*_`]+", "", text).strip(), date, lead.group(1) if lead else ""


class _Memory:
    def __init__(self, text: str, day: str | None) -> None:
        self.text = text
        self.day = day
        words = [_fold(w) for w in _words(text)]
        self.folded = f" {' '.join(words)} {' '.join(w.removesuffix(chr(39) + 's') for w in words)} "
        self.stems = {_stem(w) for w in _words(text)}
        self.numbers = {n.replace(",", "") for n in _NUMBER.findall(_DATE.sub(" ", text))}
        self.numbers |= {_NUMBER_WORDS[w] for w in map(_fold, _words(text)) if w in _NUMBER_WORDS}
        self.dates = set(_DATE.findall(text)) | ({day, day[:7]} if day else set())
        self.sentences = [part for part in re.split(r"(?<=[.!?;])\s+", text) if part.strip()] or [text]

    def nearest(self, clause: str) -> str:
        """The memory's sentence that shares the most words with the clause."""
        wanted = {_stem(w) for w in _words(clause) if _fold(w) not in _STOP}
        return max(self.sentences, key=lambda s: len(wanted & {_stem(w) for w in _words(s)}))


def _negators(text: str) -> set[str]:
    words = {_fold(w) for w in _words(text)}
    found = words & _NEGATORS
    found |= {w for w in words if w.endswith("n't")}
    return found


def _names(text: str, page: str) -> list[str]:
    """The names a clause writes: capitalised words, an ordinary word opening a sentence left out."""
    out: list[str] = []
    opening = True
    for token in re.findall(r"[^\W_][\w'’-]*|[.!?:;]", text.replace("’", "'")):
        if token in ".!?:;":
            opening = True
            continue
        bare = token.removesuffix("'s")
        if bare[:1].isupper() and not bare[:1].isdigit():
            # a dictionary word opening a sentence ("Arrived", "Coffee") is capitalised by grammar; a
            # word no English dictionary has ("Eric", "Denver") is a name wherever it stands
            ordinary = _fold(bare) in _STOP or bool(getAllLemmas(_fold(bare)))
            if not (opening and ordinary) and _fold(bare) not in _STOP and _fold(bare) not in ("i'm", "i've", "i'd"):
                out.append(bare)
        opening = False
    return out


_JOINERS = frozenset({"de", "du", "la", "del", "of", "the", "van", "von", "da", "y", "le", "&"})


def _actor(text: str) -> str | None:
    """Who acts in a sentence: the name opening it (a run of capitalised words, joining words inside,
    that no dictionary has as a word) when a verb follows it (a lower-case word that joins nothing)."""
    tokens = re.findall(r"[^\W_][\w'’-]*|[,.;:!?]", text.replace("’", "'"))
    n = 0
    while n < len(tokens) and n < 1:
        token = tokens[n]
        if not token[:1].isupper() or _fold(token) in _STOP or getAllLemmas(_fold(token.removesuffix("'s"))):
            return None
        end = n + 1
        while end < len(tokens) and (tokens[end][:1].isupper() or (tokens[end].lower() in _JOINERS and
                                                                    end + 1 < len(tokens)
                                                                    and tokens[end + 1][:1].isupper())):
            end += 1
        following = tokens[end] if end < len(tokens) else ""
        if following[:1].isalpha() and following.lower() not in _ACTOR_STOP:
            return _fold(token.removesuffix("'s"))
        n = end
    return None


def _clause_finding(clause: str, memory: _Memory, page: str) -> Finding:
    for name in _names(clause, page):
        if f" {_fold(name)} " not in memory.folded:
            return Finding(False, "invented", name)
    for day in _DATE.findall(clause):
        if day not in memory.dates:
            return Finding(False, "number", day)
    numbers = {n.replace(",", "") for n in _NUMBER.findall(_DATE.sub(" ", clause))}
    numbers |= {_NUMBER_WORDS[w] for w in map(_fold, _words(clause)) if w in _NUMBER_WORDS and w not in
                ("first", "second", "single", "once", "couple", "pair", "half")}
    for number in sorted(numbers):
        if number not in memory.numbers:
            return Finding(False, "number", number)
    said = {_fold(w) for w in _words(clause)}
    if said & _QUANTIFIERS - {_fold(w) for w in _words(memory.text)}:
        return Finding(False, "generalisation", ", ".join(sorted(said & _QUANTIFIERS)))
    negators = _negators(clause)
    nearest = memory.nearest(clause)
    if negators - _negators(memory.text) or (_negators(nearest) and not negators):
        return Finding(False, "negation", ", ".join(sorted(negators)) or "a denial dropped")
    stems = {_stem(w) for w in _words(clause)}
    for one, other in _OPPOSITES:
        for mine, theirs in ((one, other), (other, one)):
            if mine in stems and theirs in memory.stems and mine not in memory.stems:
                return Finding(False, "negation", f"{mine} for {theirs}")
    actor = _actor(clause)
    # who acts in the sentence that says it; any sentence's actor when that one names none
    actors = {a for a in [_actor(nearest)] if a} or {a for sentence in memory.sentences if (a := _actor(sentence))}
    if actor and actors and actor not in actors and f" {actor} " in memory.folded:
        return Finding(False, "roles", f"{actor} acts where {', '.join(sorted(actors))} does")
    names = [f" {_fold(name)} " for name in dict.fromkeys(_names(clause, page))]
    for sentence in re.split(r"(?<=[.!?])\s+", memory.text):
        shown = f" {' '.join(_fold(w).removesuffix(chr(39) + 's') for w in _words(sentence))} "
        held = [name for name in names if name in shown]
        at = 0
        for name in held if len(held) >= 2 else []:
            after = shown.find(name, at)
            if after < 0:
                return Finding(False, "roles", "its names stand in another order than the memory's")
            at = after + 1
    content = [s for w in _words(clause) if (s := _stem(w)) and _fold(w) not in _STOP and not w[:1].isdigit()
               and not w[:1].isupper()]
    missing = [s for s in content if s not in memory.stems]
    allowed = 1 if len(content) >= 6 else 0
    if len(missing) > allowed:
        return Finding(False, "unsupported", ", ".join(missing[:4]))
    return Finding(True)


def read(line: str, memories: list[str], page: str = "", days: list[str | None] | None = None) -> Finding:
    """Whether one of the cited memories supports the whole line, read as a careful reader reads it."""
    text, date, lead = _plain(line)
    if not memories:
        return Finding(False, "unsupported", "cites nothing")
    # a turn read as what its speaker said ("I" the speaker, "you" the one spoken to)
    memories = [as_told(m, line) for m in memories]
    cited = [_Memory(m, (days or [None] * len(memories))[i] if days else None) for i, m in enumerate(memories)]
    lead_words = " ".join(_fold(w) for w in _words(lead))
    if lead_words and not any(f" {lead_words} " in m.folded for m in cited) \
            and lead_words not in " ".join(_fold(w) for w in _words(page)):
        return Finding(False, "invented", lead)
    if date is not None and any(m.day for m in cited) and not any(date in m.dates for m in cited):
        return Finding(False, "number", date)
    for memory in cited:
        if date is not None and memory.day and date not in memory.dates:
            continue
        if _clause_finding(text, memory, page).supported:
            return Finding(True)
        # a line of several sentences, each of which the memory says, is supported as a whole
        parts = [p for p in re.split(r"(?<=[.!?])\s+", text) if p.strip()]
        if len(parts) > 1 and all(_clause_finding(part, memory, page).supported for part in parts):
            return Finding(True)
    order = ("negation", "roles", "generalisation", "number", "invented", "unsupported")
    findings = [_clause_finding(text, memory, page) for memory in cited]
    worst = min(findings, key=lambda f: order.index(f.kind) if f.kind in order else len(order))
    if worst.kind in ("unsupported", "invented") and len(cited) > 1 and _together(text, cited, page):
        return Finding(False, "merged", "no one memory says it all")
    return worst


def _together(text: str, cited: list[_Memory], page: str) -> bool:
    """Whether the memories together hold the line's words (two memories merged into one claim)."""
    stems = {_stem(w) for w in _words(text) if _fold(w) not in _STOP}
    held = set().union(*(m.stems for m in cited)) | {_stem(w) for w in _words(page)}
    return stems <= held
