"""Closed-class words: the few words of a language that carry grammar, not things, in one place.

Articles, pronouns, determiners, prepositions, conjunctions, auxiliaries, the connectors inside names
("Bank of America", "Jardin du Luxembourg"), honorifics, calendar words, and interjections (greetings,
thanks, exclamations, laughter, chat abbreviations). A word of these classes is never a name, a page
or a fact on its own, wherever a sentence puts it; every rule that needs one of these lists imports
it from here (`tests/domain/test_one_definition.py` fails when a second list appears elsewhere).

Each set is lower-case and holds words as `normalize_alias` leaves them (accents folded, apostrophes
kept out: "i'm" is checked as written by the tokenisers that need contractions).

Interjections are an open family in writing ("Awww", "Hahaha", "Yummm"), so `is_interjection` reads
their shapes: a word of the set, the same word with letters drawn out, laughter ("haha", "hehehe",
"bwahaha", "lolol", "lmao"), and a hum ("hmmm", "mmm").
"""

from __future__ import annotations

import functools
import re

# ------------------------------------------------------------------------------------ articles

ENGLISH_ARTICLES = frozenset({"a", "an", "the"})
# Articles in English, French, Spanish, Portuguese, Italian, German and Dutch: the name key drops them
# wherever they stand ("Le Comptoir du Relais" -> "comptoir du relais").
ARTICLES = ENGLISH_ARTICLES | frozenset({
    "le", "la", "les", "l", "un", "une",
    "el", "los", "las", "lo", "una", "unos", "unas",
    "o", "os", "as", "um", "uma",
    "il", "gli", "i",
    "der", "die", "das", "dem", "den", "des", "ein", "eine",
    "het", "de", "een",
})
# "and" in the same languages ("Emmer and Rye", "Müller und Söhne").
CONNECTIVES = frozenset({"and", "et", "und", "y", "e", "en"})
# Words that join the words of one name: prepositions and articles of the languages above, and "&"
# ("Bank of America", "Church of the Holy Cross", "Jardin du Luxembourg", "Ludwig van Beethoven").
NAME_CONNECTORS = frozenset({"of", "de", "del", "della", "di", "da", "la", "le", "les", "du", "des", "van", "von",
                             "der", "den", "y", "e", "the", "&"})

# ------------------------------------------------------------------------------------ pronouns

FIRST_PERSON_SINGULAR = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll", "im", "ive"})
FIRST_PERSON_PLURAL = frozenset({"we", "us", "our", "ours", "ourselves", "we're", "we've", "we'd", "we'll"})
FIRST_PERSON = FIRST_PERSON_SINGULAR | FIRST_PERSON_PLURAL
SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "yourselves", "you're", "you've", "you'd",
                           "you'll", "ya", "u", "ur"})
THIRD_PERSON = frozenset({"he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself",
                          "they", "them", "their", "theirs", "themselves", "he's", "she's", "it's", "they're"})
PRONOUNS = FIRST_PERSON | SECOND_PERSON | THIRD_PERSON
# Possessive determiners: "my sister Ana", "our dog Biscuit".
POSSESSIVE_DETERMINERS = frozenset({"my", "our", "your", "his", "her", "its", "their"})
DEMONSTRATIVES = frozenset({"this", "that", "these", "those"})
QUANTIFIERS = frozenset({"all", "both", "each", "every", "some", "any", "no", "none", "one", "many", "much", "few",
                         "several", "most", "more", "less", "other", "another", "such"})
DETERMINERS = ENGLISH_ARTICLES | POSSESSIVE_DETERMINERS | DEMONSTRATIVES | QUANTIFIERS
# Words that point back at something said before them ("She went." after "Lena met Sam."): a run of a
# memory's sentences that opens with one leaves out who or what it means.
ANAPHORA = THIRD_PERSON | DEMONSTRATIVES | frozenset({"there", "then", "both"})

# ------------------------------------------------------------------------- prepositions and the rest

PREPOSITIONS = frozenset({"in", "on", "at", "by", "for", "from", "with", "without", "to", "of", "into", "onto",
                          "over", "under", "between", "among", "about", "during", "until", "till", "since",
                          "after", "before", "near", "around", "across", "through", "toward", "towards",
                          "outside", "inside", "via", "past", "within", "behind", "beyond", "against", "along",
                          "upon", "off", "up", "down", "out", "per"})
# Prepositions of company before someone ("with Lena", "by Sam", "for Ana").
COMPANY_PREPOSITIONS = frozenset({"with", "by", "for"})
# Particles after a verb ("jack up", "mark off", "will over"): a capitalised word before one is a verb.
PARTICLES = frozenset({"up", "out", "off", "down", "over", "back", "away"})
# Prepositions that put what follows somewhere ("in Kyoto", "at Franklin Barbecue", "to Lisbon").
PLACE_PREPOSITIONS = frozenset({"in", "at", "to", "from", "near", "around", "across", "through", "into",
                                "toward", "towards", "outside", "inside", "via", "past"})
CONJUNCTIONS = frozenset({"and", "or", "but", "nor", "yet", "so", "as", "if", "when", "while", "because",
                          "though", "although", "unless", "whether", "than", "once", "after", "before",
                          "until", "since"})
# Adverbs that only point or link ("there", "then", "also").
POINTING_ADVERBS = frozenset({"there", "here", "then", "also", "not", "too", "very", "just", "now"})
# Words of time that follow a name without being part of what it names ("at Zilker Park yesterday").
TIME_ADVERBS = frozenset({"yesterday", "today", "tonight", "tomorrow", "again", "last", "next", "early", "late",
                          "later", "soon", "recently", "once", "twice", "already", "still", "ago", "earlier",
                          "lately", "afterwards", "often", "sometimes", "always", "never", "together", "alone"})
AUXILIARIES = frozenset({"am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "do",
                         "does", "did", "will", "would", "shall", "should", "can", "could", "may", "might",
                         "must", "won't", "can't", "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't",
                         "weren't", "haven't", "hasn't", "hadn't", "wouldn't", "couldn't", "shouldn't"})
WH_WORDS = frozenset({"who", "whom", "whose", "what", "which", "where", "when", "why", "how"})

# Never a name, wherever a sentence puts it: "A person.", "They stayed until sunset.", "Then we left."
FUNCTION_WORDS = (ENGLISH_ARTICLES | DEMONSTRATIVES | PRONOUNS | POSSESSIVE_DETERMINERS | QUANTIFIERS
                  | PREPOSITIONS | CONJUNCTIONS | POINTING_ADVERBS)
# Words that only join a memory's words into a line ("Restaurant in Austin", "A person"): an article or
# a preposition of place states nothing of its own.
JOINING_WORDS = ENGLISH_ARTICLES | frozenset({"in", "at", "on", "of"})

# ------------------------------------------------------------------------------ honorifics

# Titles people write before a name ("Dr. Patel", "Chef Bartholomew", "Sir Elton John").
HONORIFICS = frozenset({"dr", "mr", "mrs", "ms", "mx", "prof", "sir", "dame", "rev", "fr", "sr", "jr", "chef"})

# ------------------------------------------------------------------------------ calendar words

WEEKDAYS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
                      "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun"})
MONTHS = frozenset({"january", "february", "march", "april", "may", "june", "july", "august", "september",
                    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
                    "sept", "oct", "nov", "dec"})
CALENDAR_WORDS = WEEKDAYS | MONTHS
# Abbreviations written in capitals that name nothing of their own.
ABBREVIATIONS = frozenset({"ok", "okay", "tv", "am", "pm", "etc", "vs", "ps", "diy", "asap", "fyi", "aka"})

# ------------------------------------------------------------------------------ interjections

GREETINGS = frozenset({"hi", "hey", "hello", "hiya", "heya", "howdy", "yo", "hullo", "bye", "goodbye", "cya",
                       "sup", "hola", "ciao"})
THANKS = frozenset({"thanks", "thank", "thx", "ty", "tysm", "cheers", "congrats", "congratulations", "kudos",
                    "sorry", "please", "pls", "plz"})
AFFIRMATIONS = frozenset({"yes", "yeah", "yep", "yup", "yea", "sure", "right", "exactly", "correct", "indeed",
                          "absolutely", "definitely", "totally", "true", "agreed", "ok", "okay", "alright",
                          "certainly", "precisely"})
NEGATIONS = frozenset({"no", "nope", "nah", "not"})
# Evaluative words said as a whole reaction ("Cool!", "Sounds great!"): an open class, but these are
# the ones people say alone. Never dropped from a name ("Great Lakes", "Sweetgreen"): they only mark a
# sentence as a reaction.
REACTION_WORDS = frozenset({"cool", "nice", "awesome", "sweet", "great", "amazing", "wonderful", "lovely",
                            "fantastic", "excellent", "perfect", "brilliant", "incredible", "beautiful",
                            "fun", "glad", "happy", "good", "interesting", "impressive", "neat", "wild",
                            "crazy", "tough", "sad", "bummer"})
EXCLAMATIONS = frozenset({
    "wow", "whoa", "woah", "aw", "aww", "oh", "ooh", "ah", "aha", "ahh", "uh", "um", "umm", "er", "erm", "eh",
    "huh", "hm", "hmm", "mm", "mmm", "ugh", "argh", "ew", "eww", "yay", "yum", "yummy", "bummer", "oops",
    "whoops", "yikes", "phew", "gosh", "jeez", "geez", "dang", "darn", "damn", "meh", "wah", "woohoo", "woo",
    "hooray", "hurray", "hurrah", "yippee", "bravo", "alas", "ouch", "ow", "eek", "boo", "shh", "psst",
    "wowza", "whew", "golly", "yeesh", "sheesh", "hmph", "pfft", "tsk", "ahem", "oi", "ay", "ayy", "wee",
    "omg", "lol", "lmao", "rofl", "haha", "hehe", "btw", "tbh", "imo", "imho", "idk", "ikr", "smh", "fyi",
    "ttyl", "brb", "omfg", "wtf", "np", "gg", "aight", "welp", "yo", "yas", "yass", "nah", "nope", "yep", "yup",
})
INTERJECTIONS = GREETINGS | THANKS | EXCLAMATIONS

_LAUGHTER = re.compile(r"^(?:bw|mw)?a?(?:h+[aeiou]+)+h*$|^(?:lo)+l+$|^l+m+f*a+o+$|^r+o+f+l+$|^x+d+$|^o+m+g+$")
_HUM = re.compile(r"^(?:h*m+|u+h+|u+m+|e+r+m*|a+h+|o+h+)$")
_DRAWN_OUT = re.compile(r"(.)\1{2,}")


def _squeezed(word: str) -> str:
    """The word with every run of one letter cut to one: "awww" -> "aw", "yummm" -> "yum"."""
    return re.sub(r"(.)\1+", r"\1", word)


_SQUEEZED_INTERJECTIONS = frozenset(_squeezed(word) for word in INTERJECTIONS)


@functools.lru_cache(maxsize=16_384)
def is_interjection(word: str) -> bool:
    """A greeting, thanks, an exclamation, laughter or a chat abbreviation, drawn out or not: "Hey",
    "Thanks", "Awww", "Yummm", "Hahaha", "Omg", "Hmmm". Case and a trailing "!" do not matter."""
    lower = word.lower().strip(".!?,;:'’\"")
    if not lower or not lower.isalpha():
        return False
    if lower in INTERJECTIONS or _LAUGHTER.match(lower) or _HUM.match(lower):
        return True
    # A drawn-out spelling of one ("Awwww", "Sooo good", "Yayyy"): three of a letter or more.
    return _DRAWN_OUT.search(lower) is not None and _squeezed(lower) in _SQUEEZED_INTERJECTIONS


# A contraction's ending ("must've", "should'nt", "they'll"): the word before it decides.
_CONTRACTION = re.compile(r"(?<=[a-z])(?:['’](?:ve|ll|re|d|m|s)|n['’]t)$")


def is_closed_class(word: str) -> bool:
    """A function word, auxiliary, wh-word, weekday, common abbreviation or interjection: grammar, never
    a name on its own. (Months are not among them: "May", "June" and "April" are names as well, which
    the name rule tells apart by where they stand.)"""
    lower = _CONTRACTION.sub("", word.lower().strip(".'’"))
    return (lower in FUNCTION_WORDS or lower in AUXILIARIES or lower in WH_WORDS or lower in WEEKDAYS
            or lower in ABBREVIATIONS or is_interjection(lower))
