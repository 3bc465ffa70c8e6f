"""The variant generator: names it invents, written the ways people write them, with traps.

Nothing here is a list of names the resolver was shown. Each seed invents its own names from
syllables, then composes one to three variation families at random over each name (an "&" written
"and", an ordinal as a word, a "Last, First" order, a transliteration, a legal form, ...), so a
family meets every other and names nobody looked at. Beside them, must-not-merge traps: two names
one letter apart, initials swapped, one name in two cities, neighbouring ordinals.

Every memory is about one thing and says so in its metadata (the entity as written, its kind, and
for a venue its place: city and address, as a places app gives them), so the ground truth is exact:
two memories are about the same thing or they are not.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel

ID_NAMESPACE = uuid.UUID("9d0c5a44-61a2-4f0e-8f7e-3b1d2c4e5a60")
FIRST_DAY = datetime(2026, 2, 2, tzinfo=UTC)
DAYS = 200

ONSETS = ("b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "r", "s", "st", "t", "v", "z")
VOWELS = ("a", "e", "i", "o", "u", "ai", "ou", "ia")
CODAS = ("", "", "n", "r", "l", "s", "m", "nd", "rt")
# Cyrillic syllables with the romanisation people commonly write for them.
CYRILLIC = (("Ка", "Ka"), ("Ло", "Lo"), ("Ми", "Mi"), ("Ра", "Ra"), ("Се", "Se"), ("То", "To"), ("Ва", "Va"),
            ("Но", "No"), ("Да", "Da"), ("Жа", "Zha"), ("Ше", "She"), ("Бо", "Bo"), ("Ни", "Ni"), ("Гу", "Gu"))
CITIES = (("Austin", "TX"), ("Denver", "CO"), ("Portland", "OR"), ("Madison", "WI"), ("Raleigh", "NC"),
          ("Tucson", "AZ"))
VENUE_KINDS = ("restaurant", "cafe", "bar", "bakery", "museum", "shop", "gallery")
STREET_WORDS = (("Street", ("St.", "St", "Str")), ("Avenue", ("Ave", "Ave.", "Av")), ("Road", ("Rd", "Rd.")),
                ("Boulevard", ("Blvd", "Blvd.")), ("Square", ("Sq", "Sq.")))
ORDINALS = ("First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth", "Ninth", "Tenth",
            "Eleventh", "Twelfth")
ORDINAL_DIGITS = ("1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th", "9th", "10th", "11th", "12th")
LEGAL = ("LLC", "Inc.", ", Inc.", "Ltd", "Co.", "GmbH")
FOREIGN_ARTICLES = ("Le", "La", "El", "Il", "Der", "Die", "De", "Los")
# Long words with the shortenings people write for them (the resolver has no such table: it reads
# any shortening whose letters run in order through the word as a question for the judge).
SHORTENINGS = (("International", "Intl"), ("National", "Natl"), ("Brothers", "Bros"), ("University", "Univ"),
               ("Association", "Assn"), ("Department", "Dept"), ("Mountain", "Mtn"), ("Company", "Cmpy"))
INSTITUTION_WORDS = ("Museum", "Center", "Institute", "Gallery", "Library", "Collection")


def syllable_word(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(syllables)).title()


def word(rng: random.Random) -> str:
    return syllable_word(rng, rng.choice((2, 2, 3)))


class Thing(BaseModel):
    key: str
    kind: str  # person or a venue kind
    canonical: str
    surfaces: list[str]  # canonical first, then the variants
    families: list[str]
    city: str = ""
    address: str = ""
    mentions: int = 6


class Trap(BaseModel):
    family: str
    left: str  # thing keys
    right: str


class VariantCorpus(BaseModel):
    seed: int
    tenant: str
    owner: str
    things: dict[str, Thing]
    traps: list[Trap]
    memories: list[dict]
    about: dict[str, str]  # memory id -> thing key
    written: dict[str, str]  # memory id -> surface


# ------------------------------------------------------------------------------------ families

Family = Callable[[str, random.Random], list[str]]  # a name -> its variants


def _ampersand(name: str, rng: random.Random) -> list[str]:
    return [name.replace(" & ", " and "), name.replace(" & ", " + ")] if " & " in name else []


def _saint(name: str, rng: random.Random) -> list[str]:
    return [name.replace("Saint ", rng.choice(("St. ", "St "))), name] if name.startswith("Saint ") else []


def _street(name: str, rng: random.Random) -> list[str]:
    for full, shorts in STREET_WORDS:
        if f" {full}" in name:
            return [name.replace(f" {full}", f" {rng.choice(shorts)}")]
    return []


def _ordinal(name: str, rng: random.Random) -> list[str]:
    for spelled, digits in zip(ORDINALS, ORDINAL_DIGITS, strict=True):
        if name.startswith(spelled + " "):
            return [digits + name[len(spelled):], digits.upper() + name[len(spelled):]]
    return []


def _legal(name: str, rng: random.Random) -> list[str]:
    form = rng.choice(LEGAL)
    return [f"{name}{form}" if form.startswith(",") else f"{name} {form}"]


def _descriptor(name: str, rng: random.Random) -> list[str]:
    return []  # needs the kind: written by `_with_descriptor`


def _article(name: str, rng: random.Random) -> list[str]:
    first = name.split(" ", 1)[0]
    return [name.split(" ", 1)[1]] if first in FOREIGN_ARTICLES and " " in name else []


def _possessive(name: str, rng: random.Random) -> list[str]:
    head, _, tail = name.partition("'s ")
    return [f"{head}s {tail}", f"{head}’s {tail}"] if tail else []


def _shortening(name: str, rng: random.Random) -> list[str]:
    for full, short in SHORTENINGS:
        if full in name.split():
            return [name.replace(full, rng.choice((short, short + ".")))]
    return []


def _acronym(name: str, rng: random.Random) -> list[str]:
    words = name.split()
    return ["".join(w[0] for w in words if w[0].isupper())] if len(words) >= 3 else []


def _last_first(name: str, rng: random.Random) -> list[str]:
    parts = name.split()
    return [f"{parts[-1]}, {' '.join(parts[:-1])}"] if len(parts) >= 2 and "," not in name else []


def _title(name: str, rng: random.Random) -> list[str]:
    return [f"{rng.choice(('Dr.', 'Dr', 'Prof.'))} {name}"] if "," not in name else []


def _initials(name: str, rng: random.Random) -> list[str]:
    parts = name.split()
    if len(parts) != 3 or not all(len(p) == 2 and p.endswith(".") for p in parts[:2]):
        return []
    a, b = parts[0][0], parts[1][0]
    return [f"{a}{b} {parts[2]}", f"{a}.{b}. {parts[2]}", f"{a} {b} {parts[2]}"]


def _transposition(name: str, rng: random.Random) -> list[str]:
    words = name.split(" ")
    index = max(range(len(words)), key=lambda i: len(words[i]))
    w = words[index]
    spots = [i for i in range(1, len(w) - 2) if w[i].isalpha() and w[i + 1].isalpha() and w[i] != w[i + 1]]
    if len(w) < 7 or not spots:
        return []
    at = rng.choice(spots)
    words[index] = w[:at] + w[at + 1] + w[at] + w[at + 2:]
    return [" ".join(words)]


def _casing(name: str, rng: random.Random) -> list[str]:
    return [name.upper(), name.lower()]


FAMILIES: dict[str, Family] = {
    "ampersand": _ampersand, "saint": _saint, "street": _street, "ordinal": _ordinal, "legal form": _legal,
    "foreign article": _article, "possessive": _possessive, "shortening": _shortening, "acronym": _acronym,
    "last, first": _last_first, "title": _title, "initials": _initials, "transposition": _transposition,
    "casing": _casing, "transliteration": _descriptor, "descriptor": _descriptor,
}


# ------------------------------------------------------------------------------------ names


def _venue_base(rng: random.Random, family: str) -> str:
    """A venue name shaped so the family applies to it."""
    a, b = word(rng), word(rng)
    if family == "ampersand":
        return f"{a} & {b}"
    if family == "saint":
        return f"Saint {a} {rng.choice(('Cafe', 'Bakery', 'Tavern', 'Market'))}"
    if family == "street":
        return f"{a} {rng.choice(STREET_WORDS)[0]} {rng.choice(('Deli', 'Diner', 'Books', 'Grocery'))}"
    if family == "ordinal":
        return f"{rng.choice(ORDINALS)} {rng.choice(('Avenue', 'Street'))} {rng.choice(('Deli', 'Diner', 'Pub'))}"
    if family == "foreign article":
        return f"{rng.choice(FOREIGN_ARTICLES)} {a} {b}"
    if family == "possessive":
        return f"{a}'s {rng.choice(('Kitchen', 'Tavern', 'Bakery', 'Books'))}"
    if family == "shortening":
        full = rng.choice(SHORTENINGS)[0]
        return f"{a} {full} {rng.choice(INSTITUTION_WORDS)}" if full != "Brothers" else f"{a} Brothers Market"
    if family == "acronym":
        return f"{a} {rng.choice(('Modern', 'Natural', 'Maritime', 'Folk'))} {rng.choice(INSTITUTION_WORDS)}"
    return f"{a} {b}"


def _person_base(rng: random.Random, family: str) -> str:
    first, last = word(rng), syllable_word(rng, 3)
    if family == "initials":
        return f"{first[0]}. {rng.choice(ONSETS)[0].upper()}. {last}"
    return f"{first} {last}"


def _cyrillic_name(rng: random.Random) -> tuple[str, str]:
    first = [rng.choice(CYRILLIC) for _ in range(2)]
    last = [rng.choice(CYRILLIC) for _ in range(3)]
    cyr = "".join(c for c, _ in first).title() + " " + "".join(c for c, _ in last).title()
    lat = "".join(r for _, r in first).title() + " " + "".join(r for _, r in last).title()
    return cyr, lat


PERSON_FAMILIES = ("last, first", "title", "initials", "transposition", "casing", "transliteration")
VENUE_FAMILIES = ("ampersand", "saint", "street", "ordinal", "legal form", "foreign article", "possessive",
                  "shortening", "acronym", "transposition", "casing", "descriptor")
# Families that shape the base name: a thing takes at most one, then any of the others.
SHAPING = {"ampersand", "saint", "street", "ordinal", "foreign article", "possessive", "shortening", "acronym",
           "initials", "transliteration"}


def _variants(name: str, families: list[str], kind: str, rng: random.Random) -> list[str]:
    """Compose the families: each applies to the name and to every variant so far."""
    forms = [name]
    for family in families:
        if family == "descriptor":
            new = [f"{name} {kind}"]
        else:
            new = [v for form in forms for v in FAMILIES[family](form, rng)]
        forms += [v for v in new if v not in forms]
    return forms


@dataclass
class _Builder:
    rng: random.Random
    things: dict[str, Thing] = field(default_factory=dict)
    traps: list[Trap] = field(default_factory=list)

    def add(self, thing: Thing) -> Thing:
        while thing.key in self.things:
            thing.key += "'"
        self.things[thing.key] = thing
        return thing

    def venue(self, name: str, kind: str, families: list[str], surfaces: list[str] | None = None,
              city: tuple[str, str] | None = None) -> Thing:
        rng = self.rng
        town, state = city or rng.choice(CITIES)
        address = f"{rng.randint(10, 4999)} {word(rng)} {rng.choice(STREET_WORDS)[0]}, {town}, {state} " \
                  f"{rng.randint(10000, 99999)}"
        forms = surfaces or _variants(name, families, kind, rng)
        return self.add(Thing(key=f"venue:{name.lower()}:{town.lower()}", kind=kind, canonical=forms[0],
                              surfaces=forms[:5], families=families, city=town, address=address,
                              mentions=rng.choice((5, 6, 7))))

    def person(self, name: str, families: list[str], surfaces: list[str] | None = None) -> Thing:
        forms = surfaces or _variants(name, families, "person", self.rng)
        return self.add(Thing(key=f"person:{name.lower()}", kind="person", canonical=forms[0], surfaces=forms[:5],
                              families=families, mentions=self.rng.choice((5, 6, 7))))


def build_things(seed: int, per_family: int = 3) -> tuple[dict[str, Thing], list[Trap]]:
    rng = random.Random(f"variants:{seed}")
    b = _Builder(rng)
    for family in VENUE_FAMILIES:
        for _ in range(per_family):
            extra = [f for f in rng.sample(VENUE_FAMILIES, 2) if f not in SHAPING and f != family][:rng.choice((0, 1, 2))]
            kind = rng.choice(VENUE_KINDS)
            b.venue(_venue_base(rng, family), kind, [family, *extra])
    for family in PERSON_FAMILIES:
        for _ in range(per_family):
            extra = [f for f in rng.sample(PERSON_FAMILIES, 2) if f not in SHAPING and f != family][:rng.choice((0, 1))]
            if family == "transliteration":
                cyr, lat = _cyrillic_name(rng)
                b.person(lat, [family], surfaces=[lat, cyr])
                continue
            b.person(_person_base(rng, family), [family, *extra])
    _traps(b)
    return b.things, b.traps


def _traps(b: _Builder) -> None:
    rng = b.rng
    # Two people whose surnames differ by one letter (not a transposition).
    first, last = word(rng), syllable_word(rng, 3)
    at = rng.randrange(1, len(last) - 1)
    other = last[:at] + rng.choice([c for c in "aeioulnrst" if c != last[at]]) + last[at + 1:]
    left, right = b.person(f"{first} {last}", []), b.person(f"{first} {other}", [])
    b.traps.append(Trap(family="one letter apart", left=left.key, right=right.key))
    # Initials in the other order.
    x, y, surname = rng.choice("ABDEGJKLMRST"), rng.choice("ABDEGJKLMRST"), syllable_word(rng, 3)
    while y == x:
        y = rng.choice("ABDEGJKLMRST")
    left, right = b.person(f"{x}. {y}. {surname}", []), b.person(f"{y}. {x}. {surname}", [])
    b.traps.append(Trap(family="swapped initials", left=left.key, right=right.key))
    # One name in two cities: the place records tell them apart.
    name, kind = f"{word(rng)} {rng.choice(('Kitchen', 'Coffee', 'Tavern'))}", rng.choice(VENUE_KINDS)
    one, two = rng.sample(CITIES, 2)
    left, right = b.venue(name, kind, [], surfaces=[name], city=one), b.venue(name, kind, [], surfaces=[name], city=two)
    b.traps.append(Trap(family="same name, two cities", left=left.key, right=right.key))
    # Neighbouring ordinals, once spelled and once in digits.
    index, tail = rng.randrange(0, len(ORDINALS) - 1), rng.choice(("Street Deli", "Avenue Diner"))
    city = rng.choice(CITIES)
    left = b.venue(f"{ORDINALS[index]} {tail}", "restaurant", [],
                   surfaces=[f"{ORDINALS[index]} {tail}", f"{ORDINAL_DIGITS[index]} {tail}"], city=city)
    right = b.venue(f"{ORDINAL_DIGITS[index + 1]} {tail}", "restaurant", [],
                    surfaces=[f"{ORDINAL_DIGITS[index + 1]} {tail}", f"{ORDINALS[index + 1]} {tail}"], city=city)
    b.traps.append(Trap(family="neighbouring ordinals", left=left.key, right=right.key))


# ------------------------------------------------------------------------------------ memories

PERSON_LINES = ("Called {x} about the weekend.", "{x} sent notes from the conference.", "Lunch with {x} downtown.",
                "{x} recommended a book on city planning.", "Met {x} for a walk along the river.")
VENUE_LINES = ("Dinner at {x}; the special was good.", "Went to {x} with friends.", "Stopped at {x} after work.",
               "{x} was busy tonight.", "Picked up something at {x}.")


def generate(seed: int, per_family: int = 3) -> VariantCorpus:
    things, traps = build_things(seed, per_family)
    rng = random.Random(f"memories:{seed}")
    events: list[tuple[float, Thing, str]] = []
    for thing in things.values():
        # Every surface at least once, the canonical one most; each in its own memory.
        written = [*thing.surfaces, *rng.choices(thing.surfaces[:1] * 2 + thing.surfaces,
                                                 k=max(0, thing.mentions - len(thing.surfaces)))]
        for surface in written:
            events.append((rng.uniform(0, DAYS), thing, surface))
    events.sort(key=lambda e: e[0])
    tenant, owner = "variants", f"seed{seed}"
    memories, about, by_memory = [], {}, {}
    for index, (day, thing, surface) in enumerate(events):
        memory_id = str(uuid.uuid5(ID_NAMESPACE, f"{seed}:{index}"))
        lines = PERSON_LINES if thing.kind == "person" else VENUE_LINES
        metadata: dict = {"entities": [{"name": surface, "type": "entity", "kind": thing.kind}]}
        if thing.kind != "person":
            metadata["place"] = {"name": surface, "city": thing.city, "address": thing.address, "types": [thing.kind]}
        occurred = FIRST_DAY + timedelta(days=day)
        memories.append({"id": memory_id, "content": rng.choice(lines).format(x=surface), "metadata": metadata,
                         "occurred_at": occurred.isoformat().replace("+00:00", "Z")})
        about[memory_id], by_memory[memory_id] = thing.key, surface
    return VariantCorpus(seed=seed, tenant=tenant, owner=owner, things=things, traps=traps, memories=memories,
                         about=about, written=by_memory)
