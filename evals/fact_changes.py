"""Generated lives for the supersession eval: people (and a few things) whose attributes change, and
whose other facts accumulate, each told in memories phrased many ways.

Written before, and apart from, the compiler's own rules for facts that change (domain/facts.py):
nothing here is read from them and no sentence shape is shared with them. Each attribute below has
its own small phrasebook, in three voices: a plain statement of a value, a change to a new value
(tenses, "now", possessives, pronouns, "from X to Y", "left X for Y"), and an ending that only
says the old value stopped holding ("no longer", "quit", "moved out of", "is over"). Accumulating
facts (groups joined, roles taken on, places visited, people met, hobbies, pets) share their verbs
with the changing ones on purpose: "joined a pottery class" and "joined a support group" both hold.

For every person the truth is known: which memory states which value of which attribute, when, and
so which of them holds at every date. A chain may come back to an earlier value (Denver, Boston,
Denver): the value said last holds again.

    generate(seed, people=N) -> Lives
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

# ------------------------------------------------------------------ phrasebooks
# Placeholders: {S} the subject as the memory names it (a full name, a first name, or a pronoun),
# {N} the person's name (first or full), {P} a possessive ("her", "his", "their"), {Pc} the same
# capitalised, {v} the value, {old} the value it replaces.


@dataclass(frozen=True)
class Changing:
    """An attribute with one value at a time."""

    name: str
    values: tuple[str, ...]
    state: tuple[str, ...]
    change: tuple[str, ...]
    end: tuple[str, ...] = ()  # says only that {old} stopped holding
    holder: str = "person"  # or a thing: the subject is the thing's name


CHANGING: tuple[Changing, ...] = (
    Changing("residence", ("Denver", "Boston", "Portland", "Austin", "Chicago", "Seattle", "Toronto", "Nashville",
                           "Phoenix", "Minneapolis", "San Diego", "Salt Lake City"),
             state=("{S} lives in {v}.", "{S} is living in {v} these days.", "{Pc} home is in {v}.",
                    "{S} has lived in {v} for a few years.", "{S} settled in {v}.", "{S} resides in {v}.",
                    "{S} rents an apartment in {v}."),
             change=("{S} moved to {v}.", "{S} moved from {old} to {v}.", "{S} relocated to {v} for good.",
                     "{S} just moved to {v}.", "{N}'s home is in {v} now.", "{S} lives in {v} now.",
                     "{S} packed up and moved to {v}.", "{S} left {old} for {v}.", "{S} is now based in {v}."),
             end=("{S} no longer lives in {old}.", "{S} moved out of {old}.", "{S} doesn't live in {old} anymore.")),
    Changing("employer", ("Acme", "Globex", "Initech", "Hooli", "Vandelay Industries", "Stark Labs", "Wayne Foods",
                          "Umbrella Health", "Pied Piper", "Soylent Corp"),
             state=("{S} works at {v}.", "{S} works for {v}.", "{S} has a job at {v}.", "{S} is employed by {v}.",
                    "{N}'s employer is {v}."),
             change=("{S} started a new job at {v}.", "{S} left {old} for {v}.", "{S} now works at {v}.",
                     "{S} was hired by {v}.", "{S} switched from {old} to {v}.", "{S} took a job with {v}.",
                     "{S} works for {v} now."),
             end=("{S} quit {P} job at {old}.", "{S} no longer works at {old}.", "{S} was laid off from {old}.",
                  "{S} resigned from {old}.")),
    Changing("job_title", ("nurse", "teacher", "software engineer", "product manager", "accountant", "architect",
                           "paralegal", "pharmacist", "data analyst", "head chef"),
             state=("{S} works as a {v}.", "{Pc} job title is {v}.", "{N}'s job is {v}."),
             change=("{S} was promoted to {v}.", "{S} changed careers and works as a {v} now.",
                     "{S} got a new position as {v}.", "{Pc} title is now {v}."),
             end=("{S} stopped working as a {old}.", "{S} is no longer a {old}.")),
    Changing("partner", ("Sam", "Jordan", "Priya", "Marco", "Elena", "Tomas", "Aisha", "Noah"),
             state=("{S} is dating {v}.", "{S} is married to {v}.", "{Pc} partner is {v}.",
                    "{S} is in a relationship with {v}."),
             change=("{S} is now seeing {v}.", "{S} got engaged to {v}.", "{S} started dating {v}.",
                     "{Pc} new partner is {v}."),
             end=("{S} broke up with {old}.", "{S} and {old} split up.", "{S} divorced {old}.",
                  "{Pc} relationship with {old} is over.")),
    Changing("phone", ("555-0142", "555-0199", "555-0117", "555-0173", "555-0128"),
             state=("{N}'s phone number is {v}.", "{S} can be reached at {v}.", "{Pc} cell is {v}."),
             change=("{S} got a new number: {v}.", "{N}'s phone number changed to {v}.", "{Pc} number is now {v}.")),
    Changing("email", ("{first}@mailbox.org", "{first}.{last}@fastmail.com", "{first}{n}@gmail.com",
                       "{last}.{first}@proton.me"),
             state=("{N}'s email is {v}.", "{S} uses {v} for email."),
             change=("{N}'s new email address is {v}.", "{S} switched {P} email to {v}.", "{Pc} email is now {v}.")),
    Changing("school", ("Lakeside Community College", "State University", "Hillcrest Academy", "Riverside Institute",
                        "Northgate College"),
             state=("{S} studies at {v}.", "{S} attends {v}.", "{S} is a student at {v}.", "{S} is enrolled at {v}."),
             change=("{S} transferred to {v}.", "{S} transferred from {old} to {v}.", "{S} now attends {v}.",
                     "{S} started classes at {v} after leaving {old}."),
             end=("{S} dropped out of {old}.",)),
    Changing("manager", ("Dana", "Victor", "Helen", "Omar", "Grace", "Felix"),
             state=("{N}'s manager is {v}.", "{S} reports to {v}.", "{Pc} boss is {v}."),
             change=("{S} has a new manager, {v}.", "{S} now reports to {v}.", "{Pc} boss is now {v}.")),
    Changing("car", ("Honda Civic", "Subaru Outback", "Tesla Model 3", "Ford F-150", "Toyota Prius", "Mazda CX-5"),
             state=("{S} drives a {v}.", "{Pc} car is a {v}."),
             change=("{S} traded in the {old} for a {v}.", "{S} drives a {v} now.", "{Pc} new car is a {v}."),
             end=("{S} sold {P} {old}.",)),
    Changing("favorite_food", ("ramen", "tacos", "lasagna", "pho", "sushi", "dumplings"),
             state=("{N}'s favorite food is {v}.", "{Pc} favourite dish is {v}."),
             change=("{Pc} favorite food is now {v}.", "These days {N}'s favourite food is {v}.")),
    Changing("doctor", ("Dr. Patel", "Dr. Kim", "Dr. Alvarez", "Dr. Brooks", "Dr. Okafor"),
             state=("{N}'s doctor is {v}.", "{S} sees {v} for checkups."),
             change=("{S} switched doctors to {v}.", "{Pc} new doctor is {v}.", "{S} now sees {v} as {P} doctor."),
             end=("{S} stopped seeing {old}.",)),
    Changing("diet", ("vegetarian", "vegan", "pescatarian"),
             state=("{S} is {v}.", "{S} keeps a {v} diet."),
             change=("{S} went {v}.", "{S} is {v} now.", "{S} switched from being {old} to {v}."),
             end=("{S} is no longer {old}.",)),
    Changing("hair", ("red", "blonde", "brown", "black", "purple", "silver"),
             state=("{N}'s hair is {v}.", "{S} has {v} hair."),
             change=("{S} dyed {P} hair {v}.", "{Pc} hair is {v} now.")),
    Changing("address", ("12 Elm Street", "48 Oak Avenue", "301 Pine Road", "7 Harbor Lane", "95 Maple Court"),
             state=("{N}'s address is {v}.", "{S} lives at {v}."),
             change=("{N}'s new address is {v}.", "{S} now lives at {v}.", "{Pc} mailing address changed to {v}.")),
    Changing("age", ("29", "30", "31", "42", "43", "44"),
             state=("{S} is {v} years old.",),
             change=("{S} turned {v}.", "{S} just turned {v}.", "{S} is {v} now.")),
    Changing("team", ("Hawks", "Comets", "River Cats", "Blue Jays", "Falcons"),
             state=("{S} plays for the {v}.", "{S} is on the {v}."),
             change=("{S} now plays for the {v}.", "{S} was traded to the {v}.", "{S} signed with the {v}."),
             end=("{S} left the {old}.",)),
    Changing("meeting", ("Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "3pm", "10am", "noon"),
             state=("{S} meets on {v}.", "{S} is held on {v}.", "{S} happens every {v}."),
             change=("{S} moved to {v}.", "{S} now meets on {v}.", "{S} was rescheduled to {v}.",
                     "{S} got pushed to {v}.", "From now on {S_low} meets on {v}."),
             holder="thing"),
    Changing("status", ("on hold", "in progress", "done", "cancelled", "finished", "approved"),
             state=("{S} is {v}.", "{S} is {v} for now."),
             change=("{S} is {v} now.", "{S} was {v}.", "{S} has been {v}.", "{S} status changed to {v}."),
             holder="thing"),
)


@dataclass(frozen=True)
class Accumulating:
    """Facts that pile up: each one holds beside the others (a second group joined does not end the
    first). Several share their verb with a changing attribute."""

    name: str
    values: tuple[str, ...]
    phrasings: tuple[str, ...]


ACCUMULATING: tuple[Accumulating, ...] = (
    Accumulating("group_joined", ("pottery class", "support group", "running club", "choir", "hiking group",
                                  "chess club", "book club", "community garden"),
                 ("{S} joined a {v}.", "{S} joined the {v}.", "{S} signed up for a {v}.", "{S} is part of a {v} now.")),
    Accumulating("role_taken", ("mentor", "volunteer", "foster parent", "blood donor", "youth coach", "board member"),
                 ("{S} became a {v}.", "{S} is a {v} now.", "{S} started as a {v}.", "{S} signed on as a {v}.")),
    Accumulating("place_visited", ("Denver", "Boston", "Lisbon", "Kyoto", "Chicago", "Mexico City", "Reykjavik"),
                 ("{S} visited {v}.", "{S} went to {v} for the weekend.", "{S} flew to {v} for a conference.",
                  "{S} spent a week in {v}.", "{S} took a trip to {v}.")),
    Accumulating("person_met", ("Sam", "Lena", "Ravi", "Mateo", "Chloe", "Grace"),
                 ("{S} met {v} at a conference.", "{S} made friends with {v}.", "{S} got to know {v} at the gym.",
                  "{S} had coffee with {v}.")),
    Accumulating("hobby", ("knitting", "rock climbing", "Spanish", "piano", "painting", "woodworking", "birdwatching"),
                 ("{S} took up {v}.", "{S} started learning {v}.", "{S} has been getting into {v}.",
                  "{S} started {v}.")),
    Accumulating("pet", ("Biscuit", "Mochi", "Pepper", "Rocket", "Olive"),
                 ("{S} adopted a dog named {v}.", "{S} got a kitten called {v}.", "{S} now has a rabbit named {v}.")),
    Accumulating("side_project", ("a quilt", "a podcast", "a garden shed", "a mobile app", "a cookbook"),
                 ("{S} started working on {v}.", "{S} is building {v}.", "{S} began {v}.")),
)

PEOPLE = (("Caroline", "Reyes", "she"), ("Marcus", "Bell", "he"), ("Ines", "Duarte", "she"),
          ("Theo", "Lindqvist", "he"), ("Amara", "Okoye", "she"), ("Rafael", "Mendes", "he"),
          ("Yuki", "Tanaka", "she"), ("Oskar", "Brandt", "he"), ("Leila", "Haddad", "she"),
          ("Daniel", "Park", "he"), ("Sofia", "Romano", "she"), ("Kwame", "Asante", "he"),
          ("Hannah", "Weiss", "she"), ("Mateus", "Lima", "he"), ("Priyanka", "Rao", "she"),
          ("Elliot", "Shaw", "they"), ("Nadia", "Petrova", "she"), ("Jonah", "Fischer", "he"))
THINGS = ("The book club", "The Friday standup", "The design review", "The garden project", "The kitchen remodel",
          "The grant application", "The neighborhood cleanup", "The board meeting")
POSSESSIVE = {"she": "her", "he": "his", "they": "their"}
THING_INTROS = ("{S} was organised by a few neighbours.", "{S} has its own group chat.")


# ------------------------------------------------------------------ the truth


@dataclass
class Statement:
    """One memory and what it says: `value` of `attribute` of `holder` (an ending says only that
    `ends` stopped holding)."""

    id: str
    holder: str  # the page's title
    attribute: str
    value: str | None
    at: datetime
    text: str
    ends: str | None = None
    accumulating: bool = False


@dataclass
class Chain:
    """The values one attribute of one holder took, in the order they happened."""

    holder: str
    attribute: str
    statements: list[Statement]

    def holding(self, moment: datetime) -> Statement | None:
        """The statement that holds at `moment`: the latest one said by then."""
        said = [s for s in self.statements if s.at <= moment]
        return said[-1] if said else None


@dataclass
class Lives:
    seed: int
    chains: list[Chain] = field(default_factory=list)  # changing attributes
    accumulating: list[Statement] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)  # holder -> entity kind

    @property
    def statements(self) -> list[Statement]:
        return [s for chain in self.chains for s in chain.statements] + self.accumulating

    @property
    def attributes(self) -> set[str]:
        return {chain.attribute for chain in self.chains}

    def memories(self, statements: list[Statement]) -> list[dict]:
        """The memories of these statements, as `wiki retain` takes them."""
        return [{"id": s.id, "content": s.text, "occurred_at": s.at.isoformat(),
                 "metadata": {"entities": [{"name": s.holder, "type": "entity", "kind": self.titles[s.holder]}]}}
                for s in statements]

    def must_not_pairs(self) -> list[tuple[Statement, Statement]]:
        """Pairs that must never replace each other: two accumulating facts of one holder, and an
        accumulating fact beside a changing value of the same holder said before it."""
        pairs = []
        by_holder: dict[str, list[Statement]] = {}
        for statement in self.accumulating:
            by_holder.setdefault(statement.holder, []).append(statement)
        for holder, statements in by_holder.items():
            pairs += [(a, b) for i, a in enumerate(statements) for b in statements[i + 1:]]
            for chain in self.chains:
                if chain.holder == holder:
                    pairs += [(s, a) for a in statements for s in chain.statements if s.at < a.at]
        return pairs


def _fill(template: str, rng: random.Random, holder: str, pronoun: str | None, value: str, old: str | None) -> str:
    first = holder.split()[0]
    if pronoun is None:  # a thing: "The book club"
        subject = holder
        words = {"S": subject, "S_low": subject[0].lower() + subject[1:], "N": subject, "P": "its", "Pc": "Its"}
    else:
        subject = rng.choice([holder, first, first, pronoun.capitalize()])
        possessive = POSSESSIVE[pronoun]
        name = rng.choice([holder, first])
        # "{Pc} home": a possessive pronoun or the name's possessive, as people write either
        lead = rng.choice([possessive.capitalize(), f"{name}'s"])
        words = {"S": subject, "S_low": subject, "N": name, "P": possessive, "Pc": lead}
    text = template.format(v=value, old=old or "", **words)
    if pronoun == "they":  # "They is" never: the plural verb
        text = (text.replace("They is ", "They are ").replace("They has ", "They have ")
                .replace("They doesn't ", "They don't ").replace("They was ", "They were "))
    return text


def _value(attribute: Changing, rng: random.Random, holder: str, taken: list[str]) -> str:
    first, last = (holder.split() + [""])[:2]
    options = [v.format(first=first.lower(), last=last.lower(), n=rng.randint(2, 99)) for v in attribute.values]
    return rng.choice([v for v in options if v not in taken] or options)


def _dates(rng: random.Random, count: int) -> list[datetime]:
    start = datetime(2019, 1, 1, tzinfo=UTC) + timedelta(days=rng.randint(0, 400))
    out = []
    for _ in range(count):
        start += timedelta(days=rng.randint(20, 150), hours=rng.randint(8, 20))
        out.append(start)
    return out


def _id(seed: int, *parts: object) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(["supersession-eval", str(seed), *map(str, parts)])))


def generate(seed: int, people: int = 12, things: int = 3, attributes_each: int = 4,
             accumulating_each: int = 3) -> Lives:
    """Seeded lives: every person gets `attributes_each` changing attributes (each a chain of two
    or three values, a third sometimes a return to the first) and `accumulating_each` accumulating
    families of two facts each; every thing a meeting time or a status that changes."""
    rng = random.Random(seed)
    lives = Lives(seed=seed)
    person_attributes = [a for a in CHANGING if a.holder == "person"]
    thing_attributes = [a for a in CHANGING if a.holder == "thing"]
    chosen_people = rng.sample(PEOPLE, min(people, len(PEOPLE)))
    holders: list[tuple[str, str | None, list[Changing]]] = []
    # Every attribute is drawn at least once across the people (so the eval covers them all).
    pool: list[Changing] = []
    for first, last, pronoun in chosen_people:
        if len(pool) < attributes_each:
            pool += rng.sample(person_attributes, len(person_attributes))
        drawn, pool = pool[:attributes_each], pool[attributes_each:]
        holders.append((f"{first} {last}", pronoun, drawn))
    for thing in rng.sample(THINGS, min(things, len(THINGS))):
        holders.append((thing, None, [rng.choice(thing_attributes)]))
    for holder, pronoun, attributes in holders:
        lives.titles[holder] = "person" if pronoun is not None else "other"
        family_picks = rng.sample(ACCUMULATING, accumulating_each) if pronoun is not None else []
        if pronoun is None:  # a thing is introduced by two memories of its own, so its page exists early
            for n, intro in enumerate(THING_INTROS):
                lives.accumulating.append(Statement(id=_id(seed, holder, "intro", n), holder=holder,
                                                    attribute=f"intro{n}", value=None, text=intro.format(S=holder),
                                                    at=datetime(2019, 1, 1, 12, tzinfo=UTC) + timedelta(days=n),
                                                    accumulating=True))
        count = sum(3 for _ in attributes) + 2 * len(family_picks)
        dates = _dates(rng, count)
        rng.shuffle(dates)
        for attribute in attributes:
            at = sorted(dates[:3])
            dates = dates[3:]
            lives.chains.append(_chain(rng, lives.seed, holder, pronoun, attribute, at))
        for family in family_picks:
            values = rng.sample(family.values, 2)
            for n, value in enumerate(values):
                moment = dates.pop()
                text = _fill(rng.choice(family.phrasings), rng, holder, pronoun, value, None)
                lives.accumulating.append(Statement(id=_id(seed, holder, family.name, n), holder=holder,
                                                    attribute=family.name, value=value, at=moment, text=text,
                                                    accumulating=True))
    return lives


def _chain(rng: random.Random, seed: int, holder: str, pronoun: str | None, attribute: Changing,
           at: list[datetime]) -> Chain:
    """Two values, or three: the third is a new value, a return to the first, or an ending."""
    first = _value(attribute, rng, holder, [])
    second = _value(attribute, rng, holder, [first])
    statements = [Statement(_id(seed, holder, attribute.name, 0), holder, attribute.name, first, at[0],
                            _fill(rng.choice(attribute.state), rng, holder, pronoun, first, None))]
    ending = attribute.end and rng.random() < 0.3
    if ending:
        text = _fill(rng.choice(attribute.end), rng, holder, pronoun, first, first)
        statements.append(Statement(_id(seed, holder, attribute.name, 1), holder, attribute.name, None, at[1], text,
                                    ends=first))
        return Chain(holder, attribute.name, statements)
    template = rng.choice(attribute.change)
    statements.append(Statement(_id(seed, holder, attribute.name, 1), holder, attribute.name, second, at[1],
                                _fill(template, rng, holder, pronoun, second, first)))
    third = rng.random()
    if third < 0.35 and attribute.name != "age":  # back to the first value, said plainly or as a change
        template = rng.choice(attribute.state + attribute.change)
        statements.append(Statement(_id(seed, holder, attribute.name, 2), holder, attribute.name, first, at[2],
                                    _fill(template, rng, holder, pronoun, first, second)))
    elif third < 0.6:
        value = _value(attribute, rng, holder, [first, second])
        statements.append(Statement(_id(seed, holder, attribute.name, 2), holder, attribute.name, value, at[2],
                                    _fill(rng.choice(attribute.change), rng, holder, pronoun, value, second)))
    return Chain(holder, attribute.name, statements)
