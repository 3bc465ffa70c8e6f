"""The vocabulary of kinds: which words say what a name names, and the class each kind belongs to.

One table for the whole product. A word says what something is in three places, and each entry says
where it counts:
- inside a name ("Franklin Barbecue", "Bank of America", "Barton Springs Pool"): `inside`;
- beside a name ("the café Nido", "my sister Ana", "the Kyoto trip": the trip says Kyoto is a place):
  `beside`, the kind the name next to it gets;
- in a page's summary or a name's descriptor ("A restaurant in Austin.", "Biscuit the dog"): `summary`,
  for the words whose class tells two pages apart (a person is never a venue). Words of looser use
  ("day", "group", "street") stay out of that role: two pages whose summaries merely mention them are
  not thereby two things.

The class is what the resolver compares (`kinds_conflict`: two pages whose kinds are of different
classes are different things); the kind is the word a page's summary is written from ("A restaurant.").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from domain.closed_class import HONORIFICS


@dataclass(frozen=True)
class KindWord:
    kind: str  # the kind a name is read as ("restaurant" for "barbecue")
    cls: str  # person, pet, venue, region, trip, project, organisation, event, street, nature, place
    inside: bool = False  # a name holding this word is of this kind
    beside: str | None = None  # a name next to this word is of this kind
    summary: bool = False  # a page whose summary or descriptor holds it is of this class


def _entries(words: str, kind: str | None, cls: str, *, inside: bool = False, beside: bool | str = False,
             summary: bool = False) -> dict[str, KindWord]:
    out = {}
    for word in words.split():
        own = kind or word
        out[word] = KindWord(kind=own, cls=cls, inside=inside,
                             beside=(own if beside is True else beside or None), summary=summary)
    return out


VOCABULARY: dict[str, KindWord] = {
    # titles ("Dr. Okafor"): a person's, in a descriptor; the entries below override a title that is
    # also a word of its own ("chef": beside a name too)
    **{title: KindWord(kind="person", cls="person", summary=True) for title in sorted(HONORIFICS)},
    # people and pets: beside a name ("my sister Ana", "our dog Biscuit"); in a summary or descriptor
    **_entries("person friend sister brother mother father mom dad aunt uncle cousin neighbor neighbour colleague "
               "coworker partner wife husband boss chef doctor teacher son daughter grandmother grandfather "
               "niece nephew boyfriend girlfriend roommate manager", "person", "person", beside=True, summary=True),
    **_entries("grandma grandpa dentist therapist coach fiancé fiancée mentor landlord", "person", "person",
               beside=True),
    **_entries("pet dog cat puppy kitten horse rabbit parrot", "pet", "pet", beside=True, summary=True),
    # organisations: inside a name ("Bank of America", "Acme Labs"); beside one ("the startup Nido")
    **_entries("bank", "organisation", "organisation", inside=True, beside=True),
    **_entries("university college inc corp corporation ltd llc co labs lab group foundation institute partners "
               "capital ventures airlines airways hospital clinic school academy society association council "
               "ministry department bureau studios records press media systems technologies bros",
               "organisation", "organisation", inside=True, beside=True),
    **_entries("company agency", "organisation", "organisation", inside=True, beside=True),
    **_entries("startup firm team employer", "organisation", "organisation", beside=True),
    **_entries("client", "organisation", "organisation", beside=True),
    # venues
    **_entries("barbecue bbq grill kitchen steakhouse ramen sushi noodle noodles trattoria osteria brasserie "
               "cantina", "restaurant", "venue", inside=True, beside=True),
    **_entries("restaurant", None, "venue", inside=True, beside=True, summary=True),
    **_entries("café cafe coffee", "cafe", "venue", inside=True, beside=True, summary=True),
    **_entries("espresso roasters tea", "cafe", "venue", inside=True, beside=True),
    **_entries("bar pub bakery pizzeria taqueria diner bistro hotel museum gallery library park pool garden beach "
               "trail market theater theatre gym club bookstore shop store lounge brewery winery tavern",
               None, "venue", inside=True, beside=True, summary=True),
    **_entries("studio station airport stadium arena church temple shrine castle palace zoo", None, "venue",
               inside=True, beside=True),
    **_entries("gardens", "garden", "venue", inside=True, beside=True),
    **_entries("springs", "park", "venue", inside=True, beside=True),
    **_entries("inn hostel resort lodge", "hotel", "venue", inside=True, beside=True),
    **_entries("lodging apartment venue viewpoint", None, "venue", summary=True),
    # nature
    **_entries("lake river mountain island bay falls canyon", None, "nature", inside=True, beside=True),
    # streets
    **_entries("street st avenue ave road rd boulevard blvd lane ln square plaza way drive ct pkwy parkway",
               "street", "street", inside=True, beside=True),
    **_entries("court place", "street", "street"),
    # regions
    **_entries("city town village county", "city", "region", inside=True, beside=True, summary=True),
    **_entries("capital region country state neighborhood", None, "region", summary=True),
    # trips: in a summary a trip; beside a name, the name is where it went ("the Kyoto trip")
    **_entries("trip vacation holiday", "trip", "trip", beside="place", summary=True),
    **_entries("journey journal", "trip", "trip", summary=True),
    **_entries("visit flight", "trip", "trip", beside="place"),
    # events: inside a name ("Austin Marathon", "Memorial Day"); beside one ("the launch party")
    **_entries("conference festival summit meetup marathon wedding retreat review meeting party launch offsite "
               "hackathon concert expo gala reunion ceremony fair workshop standup sync kickoff cup championship "
               "tournament olympics day week eve", "event", "event", inside=True),
    **_entries("call", "event", "event"),
    # projects
    **_entries("project", None, "project", summary=True),
}
# Beside a name, these say an event whatever they mean inside one ("the launch party", "a sync call").
for _word in ["meeting", "conference", "festival", "party", "wedding", "retreat", "offsite", "concert", "launch", "workshop", "call", "sync", "standup", "kickoff"]:
    VOCABULARY[_word] = KindWord(kind="event", cls="event", inside=VOCABULARY[_word].inside, beside="event")


# The last word of a street address ("Congress Ave", "Pine Ct"); "dr" is Drive after a street's name
# (and a title before a person's, which is its entry above).
STREET_SUFFIXES = frozenset(word for word, entry in VOCABULARY.items() if entry.cls == "street") | {"dr"}


class Kind(BaseModel):
    model_config = ConfigDict(frozen=True)

    cls: str  # person, pet, venue, region, trip, project, decision
    word: str  # the word it was read from ("hotel", "sister"); the sub-kind


@functools.lru_cache(maxsize=4096)
def kind_of_word(word: str) -> Kind | None:
    """The class a word in a page's summary or in a name's descriptor gives the page, if it gives one."""
    entry = VOCABULARY.get(word)
    return Kind(cls=entry.cls, word=word) if entry is not None and entry.summary else None


def kind_inside(word: str) -> str | None:
    """The kind of a name that holds this word ("Franklin Barbecue" -> "restaurant")."""
    entry = VOCABULARY.get(word)
    return entry.kind if entry is not None and entry.inside else None


def kind_beside(word: str) -> str | None:
    """The kind of a name next to this lower-case word ("the café Nido" -> "cafe")."""
    entry = VOCABULARY.get(word)
    return entry.beside if entry is not None else None


def is_person_kind(kind: str) -> bool:
    entry = VOCABULARY.get(kind)
    return kind == "person" or (entry is not None and entry.cls == "person")
