"""A one-word name opening a sentence, settled without the judge when the word is rare.

A sentence's first word is capitalised whatever it is, so the grounding check (`terms_of`) counts it
as a name only when a capitalised word follows it. That leaves "Oriane cooked dinner." to the
judge. A word that reads as a name alone ("Oriane", a rare word; "John", a first name) is a name
wherever it stands, so it must be in a cited memory or among the page's names like any other; an
ordinary word ("Waited", "Lunch") is capitalised by grammar and names nothing. Which is which is
domain/name_words.py's `is_name_alone` (word frequencies and first names), passed in by the caller.

Sound in one direction: only a rare opening word absent from every cited memory and from the page's
names is refused. A rare ordinary word the memories spell another way ("tostadas" where they say
"tostada") would be refused too; the threshold is set low so that only words rarer than most
common nouns count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from domain.aliases import normalize_alias
from domain.claims import Evidence, opening_words


def unsupported_openings(line: str, evidence: Sequence[Evidence], page_names: Iterable[str],
                         is_rare: Callable[[str], bool]) -> list[str]:
    """The line's rare opening words that no cited memory and none of the page's names holds."""
    names = " " + " ".join(normalize_alias(name) for name in page_names) + " "
    return [word for word in opening_words(line)
            if is_rare(word) and f" {word} " not in names
            and not any(word in e.words or f" {word} " in e.text for e in evidence)]
