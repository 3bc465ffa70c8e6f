"""Turns of a conversation read as the leaf prompt says a careful model reads them.

The prompt's contract: a record with `said_by` is a turn (its speaker, their role when the message came
from the user or the assistant, the conversation and the position), its text opening "Speaker: ".
First-person words are the speaker's, "you" is the person spoken to, a name after a greeting or thanks
only addresses someone; a line states what the turn states in the third person, naming whom it is
about, citing the turns it comes from; greetings, thanks, questions and reactions state nothing; each
speaker is one subject however addressed; an assistant's turn is no fact about the user unless the
user's next turn confirms it, and then the line cites both.

So, per turn: its sentences (greetings, thanks, reaction words, stage directions and the names they
address cut off), minus questions and reactions (no verb; or no first- or second-person word and no
name, and short or opening as reactions do); each kept sentence in the third person
(claude_sim/third_person.py), one about the person spoken to alone dropped (praise is no fact), one
about others reported ("Caroline said the kids loved it."); the turn's line is those sentences joined,
dated by the turn. `as_told` reads a cited turn the same way for the claim judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from lemminflect import getAllLemmas
from nicknames import NickNamer
from wordfreq import zipf_frequency

from claude_sim.names import inner_capitalised, names_in
from claude_sim.reading import fold
from claude_sim.third_person import FIRST_PERSON, SECOND_PERSON, third_person

# The closed classes a reader recognises: openings that greet, thank or take leave, and answers that
# confirm what was just said.
GREETINGS = frozenset({"hey", "hi", "hello", "hiya", "howdy", "yo", "greetings", "bye", "goodbye", "cheers",
                       "thanks", "thank", "thx", "ty", "congrats", "congratulations", "sup", "hola", "ciao"})
_GREETING_PHRASES = re.compile(
    r"^(?:(?:hey|hi|hello|hiya|howdy|yo|greetings|hola|ciao|sup)(?: there)?|good (?:morning|afternoon|evening|"
    r"night|day)|(?:many )?thanks(?: so much| a lot| again)?|thank you(?: so much| again| very much)?|thx|ty|"
    r"cheers|bye(?: for now)?|goodbye|see you(?: soon| later)?|talk (?:to you )?(?:soon|later)|take care|"
    r"congrats|congratulations|you'?re welcome|welcome)\b[,!.\s]*", re.IGNORECASE)
_REACTION_WORD = re.compile(r"^(?:yeah|yes|yep|yup|wow|oh|aww|aw|ooh|haha|hah|lol|omg|well|so|ok|okay|hmm|ah|"
                            r"oops|whoa|gosh|totally|absolutely|definitely|sure|no|nope)\b\s*[,!.]+\s*",
                            re.IGNORECASE)
# Words this common (Zipf scale: "it", "just", "even", "always") are never a name on their own.
_FUNCTION_WORD_ZIPF = 5.5
_CONTRACTION = re.compile(r"['’](?:ve|re|ll|d|m|t)$", re.IGNORECASE)
_STAGE = re.compile(r"\[[^\]]*\]")
CONFIRMATIONS = re.compile(r"^(?:yes|yeah|yep|yup|right|correct|exactly|indeed|absolutely|sure|true|"
                           r"that'?s (?:right|correct|true)|i (?:do|did|am|have))\b", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.!?])[\"'”’)]*\s+(?=\S)")
_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)
# A sentence of this many words or fewer that names no one and has no first person is a reaction
# ("Sounds fun!"); so is one that opens as a reaction does ("That's so cool, the kids must love it.").
_REACTION_MAX_WORDS = 4
_REACTION_OPENINGS = frozenset({"that", "that's", "this", "it", "it's", "sounds", "looks", "what", "how", "so",
                                "such", "wow", "oh", "aww", "aw", "glad", "good", "great", "nice", "cool",
                                "awesome", "amazing", "haha", "lol", "omg", "yeah", "yes", "no", "ok", "okay",
                                "sure", "totally", "absolutely", "definitely", "well", "hmm", "ah", "ooh"})
_NICKNAMES = NickNamer()


@dataclass(frozen=True)
class SaidBy:
    speaker: str
    role: str | None
    conversation: str | None
    turn: int | None


def said_by(value: object) -> SaidBy | None:
    """A record's `said_by` as the prompt shows it; None when it has none or it is not the shape the
    prompt describes (a speaker's name, at the least)."""
    if not isinstance(value, dict) or not isinstance(value.get("speaker"), str) or not value["speaker"].strip():
        return None
    role = value.get("role") if value.get("role") in ("user", "assistant") else None
    turn = value.get("turn")
    conversation = value.get("conversation")
    return SaidBy(speaker=" ".join(value["speaker"].split()), role=role,
                  conversation=str(conversation) if conversation is not None else None,
                  turn=turn if isinstance(turn, int) else None)


def spoken_text(text: str, speaker: str) -> str:
    """The turn's words without the "Speaker: " it opens with."""
    flat = " ".join(text.split())
    for opening in (f"{speaker}: ", f"{speaker.split()[0]}: "):
        if flat.startswith(opening):
            return flat[len(opening):]
    head, colon, rest = flat.partition(": ")
    return rest if colon and len(head) <= 65 and rest else flat


def _words(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


def names_same_person(written: str, name: str) -> bool:
    """Whether `written` is a way of calling the person named `name`: the full name, the first name,
    a nickname of it (the `nicknames` table, either way), or the first name's first letters."""
    written_f, name_f = fold(written), fold(name)
    if not written_f or not name_f:
        return False
    first = name_f.split()[0]
    if written_f in (name_f, first) or written_f.split()[0] == first and len(written_f.split()) == 1:
        return True
    if len(written_f) >= 3 and " " not in written_f and first.startswith(written_f):
        return True
    return written_f in _NICKNAMES.nicknames_of(first) or first in _NICKNAMES.nicknames_of(written_f) or \
        written_f in _NICKNAMES.canonicals_of(first) or first in _NICKNAMES.canonicals_of(written_f)


@dataclass
class Turn:
    handle: str
    said: SaidBy
    text: str  # the words spoken, without the speaker's name
    addressee: str | None = None  # the person spoken to
    sentences: list[str] = field(default_factory=list)  # the ones that state something, as said
    line: str = ""  # what the turn states, in the third person ("" when it states nothing)
    written: list[str] = field(default_factory=list)  # the line's sentences
    names: list[str] = field(default_factory=list)  # the names those sentences write
    refs: list[str] = field(default_factory=list)

    @property
    def assistant(self) -> bool:
        return self.said.role == "assistant"


def strip_greeting(sentence: str, addresses: Callable[[str], bool]) -> str:
    """The sentence without what only greets, thanks, reacts or addresses: a greeting or thanks it
    opens with and the name after it ("Hey Mel! I ..." -> "I ..."), a reaction word set off by a comma
    ("Yeah, ...", "Wow, ..."), a bracketed stage direction ("[shares a photo]"), and a name it
    addresses at its start or end ("Mel, ...", "..., Mel!"); `addresses` tells a name of the person
    spoken to."""
    rest = _STAGE.sub("", sentence).strip()
    while True:
        match = _GREETING_PHRASES.match(rest) or _REACTION_WORD.match(rest)
        if match is None or match.end() == 0:
            break
        tail = rest[match.end():]
        named = re.match(r"([A-Z][\w'’.-]*)(?:\s+[A-Z][\w'’.-]*)?(?=\s*[,!.?:]|\s*$)", tail)
        cut = named.end() if named and (_GREETING_PHRASES.match(rest) or addresses(named.group(1))) and \
            not set(_words(named.group(0))) & (FIRST_PERSON | SECOND_PERSON) else 0
        rest = tail[cut:].lstrip(" ,!.:-—")
    opening = re.match(r"([A-Z][\w'’.-]*)\s*[,!]\s*", rest)
    if opening and addresses(opening.group(1)):
        rest = rest[opening.end():]
    closing = re.search(r",\s*([A-Z][\w'’.-]*)\s*([.!?]*)$", rest)
    if closing and addresses(closing.group(1)):
        rest = rest[:closing.start()] + closing.group(2)
    return rest.strip()


def _has_verb(words: list[str]) -> bool:
    """A verb among the words: one the lexicon knows as a verb, or a contracted one ("I'm", "it's")."""
    return any("VERB" in getAllLemmas(word) or "AUX" in getAllLemmas(word) or
               word.rsplit("'", 1)[-1] in ("m", "re", "ve", "ll", "d", "s") and "'" in word and word != "let's"
               for word in words if word not in GREETINGS)


def states_something(sentence: str, names: list[str]) -> bool:
    """A sentence that says something a page can keep: no question, no reaction. It speaks of the
    speaker ("I", "my", "we"), of the person spoken to, or of someone it names, and has a verb; one
    naming no one and speaking of neither is a reaction when it is short or opens as reactions do
    ("That's so sweet!", "Yum!", "Sounds like a great weekend.")."""
    if not sentence or sentence.rstrip("\"'”’) ").endswith("?"):
        return False
    words = _words(sentence)
    if not words or not _has_verb(words):
        return False
    if set(words) & (FIRST_PERSON | SECOND_PERSON) or names:
        return True
    return len(words) > _REACTION_MAX_WORDS and words[0] not in _REACTION_OPENINGS


def sentences_of(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text) if s.strip()]


def read_turns(memories: list) -> dict[str, Turn]:  # noqa: ANN001 - leaf_reading.Memory
    """The batch's turns by handle, each read (its addressee, its kept sentences, its line)."""
    turns = []
    for memory in memories:
        said = said_by(memory.said_by)
        if said is not None:
            turns.append(Turn(handle=memory.handle, said=said, text=spoken_text(memory.text, said.speaker)))
    Talk(turns)
    return {t.handle: t for t in turns}


class Talk:
    """The batch's turns, by conversation: who speaks, to whom, and what each turn states."""

    def __init__(self, turns: list[Turn]) -> None:
        self.turns = turns
        self.known = inner_capitalised(t.text for t in turns)
        self.by_conversation: dict[str | None, list[Turn]] = {}
        for turn in turns:
            self.by_conversation.setdefault(turn.said.conversation, []).append(turn)
        for talk in self.by_conversation.values():
            talk.sort(key=lambda t: (t.said.turn is None, t.said.turn or 0))
            speakers = list(dict.fromkeys(t.said.speaker for t in talk))
            for turn in talk:
                others = [s for s in speakers if s != turn.said.speaker]
                turn.addressee = others[0] if len(others) == 1 else None
        for turn in turns:
            self._read(turn)
        for talk in self.by_conversation.values():
            for turn, following in zip(talk, talk[1:], strict=False):
                self._confirm(turn, following)

    def _read(self, turn: Turn) -> None:
        def addresses(name: str) -> bool:
            return turn.addressee is not None and names_same_person(name, turn.addressee)

        kept = []
        for sentence in sentences_of(turn.text):
            rest = strip_greeting(sentence, addresses)
            if rest and states_something(rest, self.names_of(rest, turn)):
                kept.append(rest)
        turn.sentences = kept
        turn.names = list(dict.fromkeys(n for sentence in kept for n in self.names_of(sentence, turn)))
        if turn.assistant:
            return  # no fact about anyone unless the user's next turn confirms it
        turn.written = [self.named_in_full(w, turn) for w in (self.written(s, turn) for s in kept) if w]
        turn.line = " ".join(turn.written)
        turn.refs = [turn.handle] if turn.line else []

    def people(self, turn: Turn) -> list[str]:
        return sorted({t.said.speaker for t in self.by_conversation.get(turn.said.conversation, [])})

    def names_of(self, sentence: str, turn: Turn) -> list[str]:
        """The names a sentence writes: those a reader finds, and any capitalised word that calls one
        of the conversation's speakers ("John and I went" to Jonathan), however common as a word."""
        people = self.people(turn)
        found = [kept for name in names_in(sentence, self.known) if (kept := self.trimmed(name, people))]
        for word in _WORD.findall(sentence):
            if word[:1].isupper() and word != "I" and word not in found and \
                    any(names_same_person(word, p) for p in people):
                found.append(word)
        return found

    @staticmethod
    def trimmed(name: str, people: list[str]) -> str:
        """A name as a reader keeps it: a run a word of speech runs into ("Yep John", "Go Jon") is the
        speaker it ends with; one word as common as the commonest words ("It", "Just") or a contraction
        ("There've") opening a clause is no name."""
        words = name.split()
        for start in range(1, len(words)):
            rest = " ".join(words[start:])
            if any(names_same_person(rest, p) for p in people) and getAllLemmas(words[0].lower()) or \
                    words[0].lower() in _REACTION_OPENINGS | GREETINGS:
                return rest if any(names_same_person(rest, p) for p in people) else name
        if len(words) == 1 and not any(names_same_person(name, p) for p in people) and (
                zipf_frequency(name.lower(), "en") >= _FUNCTION_WORD_ZIPF or _CONTRACTION.search(name)):
            return ""
        return name

    def named_in_full(self, line: str, turn: Turn) -> str:
        """The line with a speaker called by a nickname or first name written as the speaker is named."""
        people = self.people(turn)
        for name in self.names_of(line, turn):
            person = next((p for p in sorted(people) if names_same_person(name, p) and name != p), None)
            if person is not None and not line.startswith(person, line.find(name)):
                line = re.sub(rf"\b{re.escape(name)}\b(?!['’]?\w)", person, line)
        return line

    def written(self, sentence: str, turn: Turn) -> str | None:
        """A kept sentence in the third person: the speaker's own words rewritten; one about the person
        spoken to alone is no fact the speaker can state (praise, a reaction); one about others is
        what the speaker said of them."""
        words = set(_words(sentence))
        if words & FIRST_PERSON:
            return third_person(sentence, turn.said.speaker, turn.addressee)
        if words & SECOND_PERSON:
            return None
        opening = sentence.split(" ", 1)[0]
        named = {name.split()[0] for name in names_in(sentence, self.known)}
        # a word opening the sentence loses its capital, a name keeps it
        lowered = opening if opening.strip(".,!;:\"'“”") in named else opening.lower()
        said = f"{turn.said.speaker} said {lowered}{sentence[len(opening):]}".rstrip("!")
        return said if said.endswith(".") else f"{said}."



    def _confirm(self, turn: Turn, following: Turn) -> None:
        """An assistant's turn the user's next turn confirms ("Yes, ...") states, about the user, what
        it said to them, citing both turns."""
        if not turn.assistant or following.assistant or turn.addressee != following.said.speaker:
            return
        if following.said.turn is not None and turn.said.turn is not None and following.said.turn != turn.said.turn + 1:
            return
        if not CONFIRMATIONS.match(following.text.lstrip()):
            return
        about_user = [s for s in turn.sentences if set(_words(s)) & SECOND_PERSON]
        written = [third_person(s, turn.said.speaker, following.said.speaker) for s in about_user]
        turn.written = [w for w in written if w]
        turn.line = " ".join(turn.written)
        turn.refs = [turn.handle, following.handle] if turn.line else []


# A turn as its text opens: a name (capitalised words) and ": ".
_TURN = re.compile(r"^((?:[^\W\d_a-z][\w'’.-]*)(?: [^\W\d_a-z][\w'’.-]*){0,3}): (.+)$", re.DOTALL)


def as_told(memory: str, line: str) -> str:
    """A memory that is a turn ("Caroline: I'm proud of you, Mel!") as a reader checking `line` against
    it understands it: its words in the third person, the speaker's for "I" and "my", the person the
    line names (other than the speaker) for "you", any name of that person ("Mel") as the line writes
    it, and what names no one as the speaker's saying ("Caroline said ..."). Any other memory as it is."""
    match = _TURN.match(" ".join(memory.split()))
    if match is None:
        return memory
    speaker, text = match.group(1), match.group(2)
    others = [n for n in names_in(line, set()) if not names_same_person(n, speaker) and n != speaker]
    capitalised = {w for w in _WORD.findall(text) if w[:1].isupper() and w != "I"}
    # the person spoken to: one the turn calls by another name ("Mei" for Mei Lin), else one it never names
    called = [o for o in others if any(w != o and names_same_person(w, o) for w in capitalised)]
    addressee = called[0] if called else next((o for o in others if o not in text), None)
    for word in set(_WORD.findall(text)):
        if word[:1].isupper() and addressee and word != addressee and names_same_person(word, addressee):
            text = re.sub(rf"\b{re.escape(word)}\b(?! {re.escape(addressee.split()[-1])})", addressee, text)
    told = []
    for said in sentences_of(text):
        # what only greets or addresses someone says nothing to check a line against
        sentence = strip_greeting(said, lambda name: addressee is not None and names_same_person(name, addressee))
        if not sentence or sentence.rstrip("\"'”’) ").endswith("?"):
            continue
        words = set(_words(sentence))
        if words & (FIRST_PERSON | SECOND_PERSON):
            told.append(third_person(sentence, speaker, addressee) or sentence)
        else:
            told.append(f"{speaker} said {sentence}")
    return " ".join(told)
