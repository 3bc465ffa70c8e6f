"""The simulator's lying mode: a set share of a leaf plan's lines rewritten into the six kinds of lie a
model tells, each in the line's own shape, each recorded (`Lie`) so an eval can score it.

`SimConfig.lies` (env `CLAUDE_SIM_LIES`; `--lies F` on the command line) is the share of proposed
lines that lie. The kinds take turns, so a run holds all six in equal measure:

- negation: the line denies what its memory says ("did not go", "was not"), or says the opposite
  word ("hated" for "loved");
- roles: who did what to whom swapped: two people of the line trade places, or the one who acts is
  another person of the batch;
- number: a number, a number word or a date of the line changed (the line's own date when it has no
  other);
- invented: a person or a place none of the batch's memories names, common names too ("with Sarah",
  "in Denver"), added or put in place of the line's own;
- merged: two memories made one claim: the line's subject doing what another memory of the batch
  says someone else did, the section citing both;
- generalisation: "always", "every week", "all her friends": a habit the memory does not state.

Which lines lie is decided by a hash of the seed, the prompt and the line, so a run is reproducible.
A line quoting a memory ("@m4") is written out as the dated sentence it stands for, then altered,
and its memory is cited by the section. Verbs are read with the `lemminflect` package (lemmas and
inflections of English words). This module shares no code with the simulated judge
(claude_sim/judge.py), which must catch what it writes.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from lemminflect import getInflection, getLemma
from wordfreq import zipf_frequency

ENV_LIES = "CLAUDE_SIM_LIES"
KINDS = ("negation", "roles", "number", "invented", "merged", "generalisation")

_PEOPLE = ("Sarah", "John", "Emma", "Michael", "Maria", "David", "Anna", "James", "Laura", "Daniel", "Sofia",
           "Peter", "Olivia", "Tom", "Rachel", "Kevin")
_PLACES = ("Denver", "Chicago", "Boston", "Seattle", "Madrid", "Berlin", "Osaka", "Phoenix", "Dublin", "Vienna",
           "Nashville", "Portland")
_OPPOSITE = {"loved": "hated", "love": "hate", "loves": "hates", "liked": "disliked", "likes": "dislikes",
             "enjoyed": "hated", "enjoys": "hates", "great": "terrible", "good": "bad", "easy": "hard",
             "happy": "unhappy", "better": "worse", "best": "worst", "cheap": "expensive", "quiet": "noisy",
             "inspiring": "dull", "powerful": "pointless", "delicious": "bland", "worth": "not worth",
             "accepted": "rejected", "early": "late", "calm": "stressed", "fun": "dull", "excited": "bored"}
_AUXILIARIES = ("is", "was", "are", "were", "has", "have", "can", "will", "would", "could", "should", "does",
                "did", "had", "may", "might")
_NUMBER_WORDS = {"one": "three", "two": "four", "three": "five", "four": "six", "five": "seven", "six": "nine",
                 "seven": "ten", "eight": "eleven", "nine": "twelve", "ten": "fifteen", "twice": "three times",
                 "once": "twice", "first": "third", "second": "fourth", "dozen": "hundred"}
_GENERAL = ("always", "every week", "all her friends", "every day", "usually", "every time")
_DATED = re.compile(r"^(\s*-\s*)(\d{4}-\d{2}-\d{2})(:\s*)(.*)$")
_TOKENS = re.compile(r"\S+")


@dataclass(frozen=True)
class Lie:
    kind: str
    line: str  # as the plan writes it
    original: str  # the line it replaced, written out
    refs: tuple[str, ...]  # the section's citations after the lie


@dataclass
class Liar:
    share: float
    seed: int = 0
    told: list[Lie] = field(default_factory=list)
    _turn: int = 0

    def chance(self, *parts: str) -> float:
        digest = hashlib.sha256("\x1f".join([str(self.seed), *parts]).encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    def lie(self, answer: Any, memories: dict[str, tuple[str, str]], prompt_key: str) -> Any:
        """The compact plan with its share of lines made lies (recorded in `told`). `memories`: each
        batch record's handle -> (the day it happened, its text)."""
        if self.share <= 0 or not isinstance(answer, dict):
            return answer
        everything = " ".join(text for _, text in memories.values())
        for section in _sections(answer):
            lines = section.get("lines") or []
            for index, line in enumerate(lines):
                if not isinstance(line, str) or line.startswith("=") or \
                        self.chance(prompt_key, line, str(index)) >= self.share:
                    continue
                written, quoted = _written(line, memories)
                if not written:
                    continue
                for attempt in range(len(KINDS)):
                    kind = KINDS[(self._turn + attempt) % len(KINDS)]
                    lied, extra = _tell(kind, written, quoted, memories, everything, self.chance(line, kind))
                    # An alteration that lands on what another record of the batch says that day (a
                    # date moved onto a record saying the same) tells no lie: try the next kind.
                    if lied and lied != written and not _said_by_a_record(lied, memories):
                        refs = section.setdefault("refs", [])
                        for handle in [*([quoted] if quoted else []), *extra]:
                            if handle not in refs:
                                refs.append(handle)
                        lines[index] = lied
                        self.told.append(Lie(kind=kind, line=lied, original=written, refs=tuple(refs)))
                        self._turn = (self._turn + attempt + 1) % len(KINDS)
                        break
        return answer


def _sections(answer: dict[str, Any]) -> list[dict[str, Any]]:
    pages = [*(answer.get("updates") or []), *(answer.get("new_pages") or []), *(answer.get("promotions") or [])]
    return [s for page in pages if isinstance(page, dict) for s in page.get("sections") or [] if isinstance(s, dict)]


def _written(line: str, memories: dict[str, tuple[str, str]]) -> tuple[str, str | None]:
    """The line written out (a quote as the dated sentence it stands for) and the memory it quotes."""
    if not line.startswith("@"):
        return line, None
    handle, _, lead = line[1:].partition(":")
    if handle not in memories:
        return "", None
    day, text = memories[handle]
    sentence = re.split(r"(?<=[.!?])\s+", " ".join(text.split()), maxsplit=1)[0]
    return (f"- {day}: **{lead}**: {sentence}" if lead else f"- {day}: {sentence}"), handle


def _split(line: str) -> tuple[str, str]:
    """(the line's dated prefix, its sentence)."""
    match = _DATED.match(line)
    if match:
        return match.group(1) + match.group(2) + match.group(3), match.group(4)
    return "", line


def _names(sentence: str) -> list[str]:
    """Runs of capitalised words, an ordinary word opening the sentence left out ("Arrived in Lisbon")."""
    raw = _TOKENS.findall(sentence)
    runs: list[list[str]] = []
    joined = False  # whether the previous word continues a run (no punctuation after it)
    for n, token in enumerate(raw):
        word = token.strip(".,;:!?()\"'*")
        capitalised = word[:1].isupper() and word not in ("I", "I'm")
        ordinary_opening = n == 0 and zipf_frequency(word.lower(), "en") >= 4.0
        if capitalised and not ordinary_opening:
            if joined and runs:
                runs[-1].append(word)
            else:
                runs.append([word])
            joined = token == word or token.rstrip("'s") == word
        else:
            joined = False
    return [" ".join(run).removesuffix("'s") for run in runs]


def _tell(kind: str, line: str, quoted: str | None, memories: dict[str, tuple[str, str]], everything: str,
          chance: float) -> tuple[str, list[str]]:
    prefix, sentence = _split(line)
    lead = re.match(r"^\*\*[^*]+\*\*:\s*", sentence)
    if lead:
        prefix, sentence = prefix + lead.group(0), sentence[lead.end():]
    body = sentence.rstrip(".!? ")
    if not body:
        return "", []
    if kind == "negation":
        return _negated(prefix, body), []
    if kind == "roles":
        return _swapped(prefix, body, everything, chance), []
    if kind == "number":
        return _renumbered(prefix, body, chance), []
    if kind == "invented":
        return _invented(prefix, body, everything, chance), []
    if kind == "merged":
        return _merged(prefix, body, quoted, memories, chance)
    return _generalised(prefix, body, chance), []


def _negated(prefix: str, body: str) -> str:
    words = body.split(" ")
    for n, word in enumerate(words):
        bare = word.strip(",;").lower()
        if bare in _OPPOSITE:
            words[n] = word.lower().replace(bare, _OPPOSITE[bare]) if word[:1].islower() else _OPPOSITE[bare].title()
            return f"{prefix}{' '.join(words)}."
    for n, word in enumerate(words[1:], 1):
        if word.lower() in _AUXILIARIES:
            return f"{prefix}{' '.join([*words[:n + 1], 'not', *words[n + 1:]])}."
    for n, word in enumerate(words[1:], 1):
        bare = word.strip(",;")
        if not bare.isalpha() or bare[:1].isupper():
            continue
        lemma = (getLemma(bare.lower(), upos="VERB") or ("",))[0]
        if lemma and lemma != bare.lower():
            past = (getInflection(lemma, tag="VBD") or ("",))[0]
            third = (getInflection(lemma, tag="VBZ") or ("",))[0]
            if bare.lower() == past:
                return f"{prefix}{' '.join([*words[:n], 'did not', lemma, *words[n + 1:]])}."
            if bare.lower() == third:
                return f"{prefix}{' '.join([*words[:n], 'does not', lemma, *words[n + 1:]])}."
    return ""


def _swapped(prefix: str, body: str, everything: str, chance: float) -> str:
    names = [name for name in dict.fromkeys(_names(body)) if body.count(name) == 1]
    names = [name for name in names if not any(name != other and name in other for other in names)]
    if len(names) >= 2:
        first, second = names[0], names[1]
        marker = "\x00"
        return f"{prefix}{body.replace(first, marker).replace(second, first).replace(marker, second)}."
    others = [n for n in dict.fromkeys(_names(everything)) if n not in body and len(n) > 2]
    if names and others:
        return f"{prefix}{body.replace(names[0], others[int(chance * len(others))], 1)}."
    return ""


def _folded(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def _said_by_a_record(line: str, memories: dict[str, tuple[str, str]]) -> bool:
    """Whether a record of the batch says the line's sentence on the line's day (or any day, undated)."""
    prefix, sentence = _split(line)
    day = re.search(r"\d{4}-\d{2}-\d{2}", prefix)
    said = _folded(sentence)
    return bool(said) and any(f" {said} " in f" {_folded(text)} " and (day is None or day.group(0) == when)
                              for when, text in memories.values())


def _renumbered(prefix: str, body: str, chance: float) -> str:
    days = re.findall(r"\d{4}-\d{2}-\d{2}", body)
    if days:
        moved = date.fromisoformat(days[0]) + timedelta(days=3 + int(chance * 20))
        return f"{prefix}{body.replace(days[0], moved.isoformat(), 1)}."
    number = re.search(r"\b\d+\b", body)
    if number:
        value = int(number.group(0))
        changed = value + 2 + int(chance * 7) if value < 1000 else value + 10 ** (len(number.group(0)) - 2)
        return f"{prefix}{body[:number.start()]}{changed}{body[number.end():]}."
    for word, other in _NUMBER_WORDS.items():
        pattern = re.compile(rf"\b{word}\b", re.IGNORECASE)
        if pattern.search(body):
            return prefix + pattern.sub(other, body, count=1) + "."
    if prefix:
        day = re.search(r"\d{4}-\d{2}-\d{2}", prefix)
        if day:
            moved = date.fromisoformat(day.group(0)) + timedelta(days=1 + int(chance * 6))
            return f"{prefix.replace(day.group(0), moved.isoformat())}{body}."
    return f"{prefix}{body}, {3 + int(chance * 9)} times in all."


def _invented(prefix: str, body: str, everything: str, chance: float) -> str:
    known = everything.lower()
    people = [p for p in _PEOPLE if p.lower() not in known]
    places = [p for p in _PLACES if p.lower() not in known]
    if chance < 0.5 and people:
        return f"{prefix}{body} with {people[int(chance * 2 * len(people))]}."
    if places:
        return f"{prefix}{body} in {places[int((chance - 0.5) * 2 * len(places)) % len(places)]}."
    return ""


def _merged(prefix: str, body: str, quoted: str | None, memories: dict[str, tuple[str, str]],
            chance: float) -> tuple[str, list[str]]:
    """The line's subject with what another memory says, that memory cited beside its own."""
    verb = _first_verb(body)
    if verb is None:
        return "", []
    subject = " ".join(body.split(" ")[:verb])
    others = sorted(handle for handle, (_, text) in memories.items() if handle != quoted and subject not in text)
    for offset in range(len(others)):
        handle = others[(int(chance * len(others)) + offset) % len(others)]
        sentence = re.split(r"(?<=[.!?])\s+", " ".join(memories[handle][1].split()), maxsplit=1)[0].rstrip(".!? ")
        theirs = _first_verb(sentence)
        if theirs is None:
            continue
        predicate = " ".join(sentence.split(" ")[theirs:])
        merged = f"{subject} {predicate}"
        if merged != body and len(predicate.split()) >= 2:
            return f"{prefix}{merged}.", [handle]
    return "", []


def _first_verb(sentence: str) -> int | None:
    """Where the first finite verb is (an auxiliary, a past form or a third-person present form)."""
    words = sentence.split(" ")
    for n, word in enumerate(words[1:], 1):
        bare = word.strip(",;").lower()
        if bare in _AUXILIARIES:
            return n
        lemma = (getLemma(bare, upos="VERB") or ("",))[0] if bare.isalpha() and not word[:1].isupper() else ""
        if lemma and lemma != bare and bare in ((getInflection(lemma, tag="VBD") or ("",))[0],
                                                (getInflection(lemma, tag="VBZ") or ("",))[0]):
            return n
    return None


def _generalised(prefix: str, body: str, chance: float) -> str:
    choice = _GENERAL[int(chance * len(_GENERAL))]
    if choice in ("always", "usually"):
        verb = _first_verb(body)
        if verb is not None:
            words = body.split(" ")
            return f"{prefix}{' '.join([*words[:verb], choice, *words[verb:]])}."
        choice = "every week"
    if choice == "all her friends":
        if " with " in body:
            head, _, _ = body.partition(" with ")
            return f"{prefix}{head} with all her friends."
        choice = "every day"
    return f"{prefix}{body} {choice}."
