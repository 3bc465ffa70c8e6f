"""A sentence someone said, written in the third person as a careful writer would: first-person words
become the speaker ("I adopted a second cat." said by Priya -> "Priya adopted a second cat."), "you"
the person spoken to, with the verb agreement a writer fixes (I am -> Priya is, I have -> Priya has,
you were -> Mel was, I love -> Priya loves).

The auxiliaries are a closed class and written out here; any other verb is inflected by `lemminflect`
(a maintained English inflection library with its own lexicon), which also says which words are verbs
and which adverbs may stand between a subject and its verb ("I really love").
"""

from __future__ import annotations

import re

from lemminflect import getAllLemmas, getInflection

FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves",
                          "i'm", "i've", "i'll", "i'd", "we're", "we've", "we'll", "we'd"})
SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "yourselves", "you're", "you've", "you'll",
                           "you'd"})
# Subject + auxiliary as a singular third person says it; a contraction is its full form first.
_SINGULAR = {"am": "is", "are": "is", "were": "was", "have": "has", "do": "does", "don't": "doesn't",
             "haven't": "hasn't", "aren't": "isn't", "weren't": "wasn't", "'m": "is", "'re": "is", "'ve": "has",
             "'ll": "will"}
_MODALS = frozenset({"can", "could", "will", "would", "shall", "should", "may", "might", "must", "ought",
                     "can't", "couldn't", "won't", "wouldn't", "shouldn't", "didn't", "did", "was", "had",
                     "used", "need", "dare"})
_JOINED = frozenset({"and", "or", "nor"})  # "my kids and I love it": a plural subject keeps its verb
_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*", re.UNICODE)
_PARTICIPLES = frozenset({"been", "had", "gone", "done", "seen", "made", "got", "gotten", "taken", "known"})
_MAX_ADVERBS = 3


def _is_adverb(word: str) -> bool:
    lemmas = getAllLemmas(word)
    return "ADV" in lemmas and "VERB" not in lemmas and "AUX" not in lemmas


def _base_verb(word: str) -> bool:
    lemmas = getAllLemmas(word)
    verb = lemmas.get("VERB", ()) or lemmas.get("AUX", ())
    return word in verb


def _singular(word: str) -> str:
    """The verb form a singular third-person subject takes, for a present verb after "I" or "you"."""
    lower = word.lower()
    if lower in _SINGULAR:
        return _SINGULAR[lower]
    if lower in _MODALS or not _base_verb(lower):
        return word
    inflected = getInflection(lower, tag="VBZ")
    return inflected[0] if inflected else word


class _Writer:
    def __init__(self, sentence: str, speaker: str, addressee: str | None) -> None:
        self.sentence = sentence.replace("’", "'")
        self.speaker = speaker
        self.addressee = addressee
        self.tokens = list(_TOKEN.finditer(self.sentence))
        self.out: dict[int, str] = {}  # token index -> its replacement

    def word(self, index: int) -> str:
        return self.tokens[index].group(0).lower() if 0 <= index < len(self.tokens) else ""

    def agree(self, index: int, *, lexical: bool = True) -> None:
        """Make the verb after the subject at `index` singular, past any adverbs between them (an
        auxiliary only, when `lexical` is false)."""
        if self.word(index - 1) in _JOINED and index >= 2 and not self.gap(index - 2, index) and (
                "NOUN" in getAllLemmas(self.word(index - 2)) or self.tokens[index - 2].group(0)[:1].isupper()):
            return
        at = index + 1
        while at < len(self.tokens) and _is_adverb(self.word(at)) and at - index <= _MAX_ADVERBS:
            at += 1
        if at < len(self.tokens) and self.gap(index, at):
            return  # a comma or a clause ends the subject's reach
        if at < len(self.tokens) and at not in self.out and (lexical or self.word(at) in _SINGULAR):
            self.out[at] = _singular(self.tokens[at].group(0))

    def gap(self, start: int, end: int) -> bool:
        between = self.sentence[self.tokens[start].end():self.tokens[end].start()]
        return any(mark in between for mark in ",;:.!?—()\"")

    def contraction(self, index: int, who: str, person: str) -> str:
        _, tail = self.word(index).split("'", 1)
        if tail == "d":
            following = self.word(index + 1)
            verb = "had" if following in _PARTICIPLES or following.endswith("ed") else "would"
            return f"{who} {verb}"
        if person == "we":
            return f"{who} {dict(re='are', ve='have', ll='will').get(tail, tail)}"
        verb = _SINGULAR.get("'" + tail, tail)
        return f"{who} {verb}"

    def write(self) -> str | None:
        speaker, addressee = self.speaker, self.addressee
        possessive = f"{speaker}'s"
        for index in range(len(self.tokens)):
            word = self.word(index)
            if word in SECOND_PERSON and addressee is None:
                return None  # "you" with no one known to be spoken to: nothing a page can say
            if word == "i":
                self.out[index] = speaker
                self.agree(index)
            elif word in ("i'm", "i've", "i'll", "i'd"):
                self.out[index] = self.contraction(index, speaker, "i")
            elif word in ("me",):
                self.out[index] = speaker
            elif word in ("my", "mine", "our", "ours"):
                self.out[index] = possessive
            elif word in ("myself", "yourself"):
                self.out[index] = "themself"
            elif word in ("ourselves", "yourselves"):
                self.out[index] = "themselves"
            elif word in ("we", "us"):
                self.out[index] = f"{speaker} and others"
            elif word in ("we're", "we've", "we'll", "we'd"):
                self.out[index] = self.contraction(index, f"{speaker} and others", "we")
            elif word == "you" and addressee is not None:
                self.out[index] = addressee
                # after a verb, "you" is its object unless an auxiliary follows ("I hope you are")
                self.agree(index, lexical=index == 0 or not _base_verb(self.word(index - 1)))
            elif word in ("you're", "you've", "you'll", "you'd") and addressee is not None:
                self.out[index] = self.contraction(index, addressee, "you")
            elif word in ("your", "yours") and addressee is not None:
                self.out[index] = f"{addressee}'s"
        if not self.out:
            return None
        pieces, last = [], 0
        for index, token in enumerate(self.tokens):
            if index in self.out:
                pieces += [self.sentence[last:token.start()], self.out[index]]
                last = token.end()
        pieces.append(self.sentence[last:])
        text = "".join(pieces).strip()
        text = text[:1].upper() + text[1:]
        return text if text[-1:] in ".!" else f"{text}."


def third_person(sentence: str, speaker: str, addressee: str | None) -> str | None:
    """`sentence`, said by `speaker` to `addressee`, in the third person; None when it has no first- or
    second-person word to rewrite, or speaks to someone unknown."""
    written = _Writer(sentence, speaker, addressee).write()
    if written is None:
        return None
    return written[:-1] + "." if written.endswith("!") else written
