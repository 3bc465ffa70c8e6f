"""The offline rules for facts that change, as data: which attributes have one value at a time, the
phrasings that state, change and end a value of each, the shape a value must have, and, beside every
attribute, pairs of lines that look alike and must never replace each other.

Read by domain/facts.py. Precision comes first: a shared verb is never enough ("joined a pottery
class" and "joined a support group" both hold; "became a mentor" does not end "became a
volunteer"), so a phrasing names the attribute itself ("works at", "lives in", "her manager is"),
and a value must have the attribute's shape (a place or a company is a proper name, a meeting time
is a time). A line these rules cannot read is left alone: both lines stay current and, when they
share a verb that is known to be confused (`CONFUSABLE_VERBS`), `wiki lint` names the pair.

Phrasings are written in base form, the first word a verb the reader inflects ("live in" reads
"lives in", "lived in", "living in", "has lived in"); "{p}" stands for a possessive pronoun ("quit
{p} job at" reads "quit her job at"), "{old}" for the value a change leaves ("move from {old} to").
A negation before any stating phrasing ("no longer lives in", "doesn't work at … anymore") ends the
value it names; `endings` are the phrasings that end a value without a negation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ValueShape = Literal["name", "words", "time", "status", "phone", "email", "age", "address", "diet", "color"]


@dataclass(frozen=True)
class AttributeRule:
    """One single-valued attribute: how a line states, changes and ends a value of it."""

    name: str
    value: ValueShape
    verbs: tuple[str, ...] = ()  # stating phrasings, the value follows
    nouns: tuple[str, ...] = ()  # "X's <noun> is V", "her new <noun> is V", "X has a new <noun>, V"
    changes: tuple[str, ...] = ()  # phrasings naming the old value too: "move from {old} to"
    endings: tuple[str, ...] = ()  # phrasings that end a value: "move out of", "break up with"
    whole: bool = False  # the value ends its clause ("drives a Honda", never "drove a Jeep across Utah")
    must_not: tuple[tuple[str, str], ...] = ()  # (line, line): never one replacing the other


ATTRIBUTES: tuple[AttributeRule, ...] = (
    # A time is read first: "moved to 3pm" is a schedule, "moved to Denver" a place to live.
    AttributeRule(
        "schedule", "time",
        verbs=("meet on", "meet at", "meet every", "be held on", "be held at", "be on", "be at", "be every",
               "happen on", "happen at", "happen every", "start at", "begin at", "run on", "move to",
               "reschedule to", "push to", "push back to", "shift to", "bump to", "change to"),
        nouns=("time", "meeting time", "day"),
        must_not=(("The standup moved to the big room.", "The standup is at 9am."),
                  ("The book club read a novel set in 1984.", "The book club meets on Tuesdays."),
                  ("The standup was fun.", "The standup is on Mondays."))),
    AttributeRule(
        "status", "status",
        verbs=("be", "be marked", "be marked as", "be set to", "go", "get"),
        nouns=("status",),
        must_not=(("The project is open to volunteers.", "The project is on hold."),
                  ("The project is done with its first phase.", "The project is in progress."),
                  ("The project team is active on weekends.", "The project is cancelled."))),
    AttributeRule(
        "residence", "name",
        verbs=("live in", "reside in", "be based in", "settle in", "be living in", "move to", "move back to",
               "relocate to", "relocate back to", "rent an apartment in", "rent a flat in", "rent a place in",
               "make {p} home in"),
        nouns=("home", "hometown now"),
        changes=("move from {old} to", "relocate from {old} to", "move back from {old} to"),
        endings=("move out of", "move away from"),
        must_not=(("Caroline visited Denver.", "Caroline lives in Boston."),
                  ("Caroline moved the couch to the garage.", "Caroline lives in Boston."),
                  ("Caroline lives at 12 Elm Street.", "Caroline lives in Boston."),
                  ("Sam lives in Denver.", "Caroline lives in Boston."),
                  ("Caroline flew to Denver for a conference.", "Caroline lives in Boston."))),
    AttributeRule(
        "address", "address",
        verbs=("live at",),
        nouns=("address", "home address", "mailing address", "street address"),
        must_not=(("Caroline lives at 12 Elm Street.", "Caroline lives in Boston."),
                  ("Caroline dropped a parcel at 48 Oak Avenue.", "Caroline lives at 12 Elm Street."))),
    AttributeRule(
        "employer", "name",
        verbs=("work at", "work for", "be working at", "be working for", "be employed at", "be employed by",
               "be hired by", "be hired at", "get hired by", "start a job at", "start a job with",
               "start a new job at", "start a new job with", "take a job at", "take a job with",
               "take a new job at", "take a new job with", "get a job at", "get a job with", "accept a job at",
               "accept a job with", "accept an offer from", "have a job at", "have a job with"),
        nouns=("employer", "company", "workplace"),
        endings=("quit {p} job at", "quit {p} job with", "leave {p} job at", "leave {p} job with", "resign from",
                 "be laid off from", "be laid off by", "be fired from", "be fired by", "retire from"),
        must_not=(("Caroline joined a support group.", "Caroline joined a pottery class."),
                  ("Caroline joined a pottery class.", "Caroline works at Acme."),
                  ("Caroline started working on a quilt.", "Caroline works at Acme."),
                  ("Caroline had lunch at Globex with Sam.", "Caroline works at Acme."),
                  ("Caroline started at the gym on Monday.", "Caroline works at Acme."))),
    AttributeRule(
        "role", "words",
        verbs=("work as", "be working as", "be promoted to", "get promoted to", "be appointed", "be appointed as",
               "have a new position as", "get a new position as", "take a position as", "start as a new"),
        nouns=("job title", "title", "role", "position", "job"),
        endings=("step down as", "stop working as", "retire as"),
        must_not=(("Caroline became a mentor.", "Caroline became a volunteer."),
                  ("Caroline became a mentor.", "Caroline works as a nurse."),
                  ("Caroline is a volunteer now.", "Caroline works as a nurse."),
                  ("Caroline started as a volunteer.", "Caroline works as a nurse."))),
    AttributeRule(
        "partner", "name",
        verbs=("be dating", "date", "be married to", "marry", "get married to", "be engaged to", "get engaged to",
               "be seeing", "be in a relationship with", "be together with"),
        nouns=("partner", "husband", "wife", "boyfriend", "girlfriend", "fiance", "fiancé", "fiancée", "spouse"),
        endings=("break up with", "split up with", "split from", "separate from", "divorce", "get divorced from"),
        must_not=(("Caroline had coffee with Sam.", "Caroline is dating Jordan."),
                  ("Caroline met Priya at a conference.", "Caroline is married to Marco."),
                  ("Caroline's sister is dating Jordan.", "Caroline is dating Sam."))),
    AttributeRule(
        "phone", "phone",
        verbs=("be reached at", "be reachable at"),
        nouns=("phone number", "phone", "number", "cell", "cell number", "mobile", "mobile number", "cell phone"),
        must_not=(("Caroline called 555-0100 to book a table.", "Caroline's phone number is 555-0142."),
                  ("Sam's phone number is 555-0199.", "Caroline's phone number is 555-0142."))),
    AttributeRule(
        "email", "email",
        verbs=("use {v} for email",),
        nouns=("email", "email address", "e-mail", "e-mail address"),
        must_not=(("Caroline emailed sam@example.com about the trip.", "Caroline's email is c@example.com."),)),
    AttributeRule(
        "school", "name",
        verbs=("study at", "attend", "be a student at", "be enrolled at", "be enrolled in", "enroll at",
               "transfer to", "start classes at", "begin classes at", "go to school at"),
        nouns=("school", "university", "college"),
        changes=("transfer from {old} to",),
        endings=("graduate from", "drop out of"),
        must_not=(("Caroline visited State University.", "Caroline studies at Lakeside College."),
                  ("Caroline gave a talk at State University.", "Caroline attends Lakeside College."))),
    AttributeRule(
        "manager", "name",
        verbs=("report to",),
        nouns=("manager", "boss", "supervisor", "line manager"),
        must_not=(("Caroline reported the bug to Dana.", "Caroline reports to Victor."),
                  ("Caroline's manager's dog is called Rex.", "Caroline's manager is Dana."))),
    AttributeRule(
        "car", "name", whole=True,
        verbs=("drive a", "drive an"),
        nouns=("car",),
        changes=("trade in the {old} for a", "trade in {p} {old} for a"),
        endings=("sell {p}", "sell the"),
        must_not=(("Caroline rented a Toyota Prius for the trip.", "Caroline drives a Honda Civic."),
                  ("Caroline drove a Jeep across Utah.", "Caroline drives a Honda Civic."))),
    AttributeRule(
        "doctor", "name",
        nouns=("doctor", "physician", "gp", "family doctor"),
        must_not=(("Caroline's dentist is Dr. Patel.", "Caroline's doctor is Dr. Kim."),)),
    AttributeRule("dentist", "name", nouns=("dentist",),
                  must_not=(("Caroline's dentist is Dr. Patel.", "Caroline's therapist is Dr. Lee."),)),
    AttributeRule("therapist", "name", nouns=("therapist", "counselor", "counsellor"),
                  must_not=(("Caroline's therapist is Dr. Lee.", "Caroline's doctor is Dr. Kim."),)),
    AttributeRule(
        "diet", "diet",
        verbs=("be", "go", "keep a", "eat a", "follow a"),
        must_not=(("Caroline is vegetarian.", "Caroline is happy."),
                  ("Caroline cooked a vegan dinner for Sam.", "Caroline is vegetarian."))),
    AttributeRule(
        "hair", "color",
        verbs=("have", "dye {p} hair"),
        nouns=("hair", "hair color", "hair colour"),
        must_not=(("Caroline's hair is long.", "Caroline's hair is red."),
                  ("Caroline has a red bike.", "Caroline has brown hair."))),
    AttributeRule(
        "age", "age",
        verbs=("be", "turn"),
        nouns=("age",),
        must_not=(("Caroline's daughter turned 5.", "Caroline is 30 years old."),
                  ("Caroline turned 3 pages of the report.", "Caroline is 30 years old."))),
    AttributeRule(
        "team", "name",
        verbs=("play for", "be traded to", "sign with", "be on"),
        must_not=(("Caroline is on the board.", "Caroline plays for the Hawks."),
                  ("Caroline watched the Comets play.", "Caroline plays for the Hawks."))),
)

# A "favourite <thing>" is one attribute per thing ("favourite food" and "favourite band" never
# replace each other); these nouns name the same thing.
FAVOURITE_SYNONYMS = {"dish": "food", "meal": "food", "cuisine": "food", "colour": "color", "film": "movie",
                      "musician": "artist", "singer": "artist", "group": "band", "show": "series"}
FAVOURITE_MUST_NOT = (("Caroline's favorite food is ramen.", "Caroline's favorite band is Wilco."),
                      ("Caroline's favourite color is green.", "Caroline's favourite food is pho."))

# Phrasings that change or end whatever attribute the old value belongs to: the value a line names
# is matched with the holder's current facts ("left Acme for Globex" ends the fact that Acme is).
GENERIC_CHANGES = ("switch from {old} to", "go from {old} to", "leave {old} for", "change from {old} to")
GENERIC_ENDINGS = ("leave", "quit", "no longer be with", "stop seeing")
GENERIC_MUST_NOT = (("Caroline left the party early.", "Caroline works at Acme."),
                    ("Caroline left Denver for a week of hiking.", "Caroline works at Acme."),
                    ("Caroline quit smoking.", "Caroline works at Acme."))

# "switched her email to …", "changed doctors to …": a change of the attribute a noun names.
NOUN_CHANGES = ("switch", "change", "update")

# Verbs shared by facts that change and facts that accumulate: two lines of one holder led by the
# same one of them, that no rule reads, are kept both current and named by `wiki lint` as a pair to
# look at ("joined a pottery class" / "joined a support group").
CONFUSABLE_VERBS = ("join", "become", "start", "move", "switch", "take")

# Values of the closed shapes.
STATUS_WORDS = ("on hold", "in progress", "done", "complete", "completed", "finished", "cancelled", "canceled",
                "postponed", "paused", "active", "inactive", "open", "closed", "approved", "rejected", "pending",
                "shipped", "blocked", "resolved", "live", "launched", "abandoned", "over", "underway", "delayed")
DIET_WORDS = ("vegetarian", "vegan", "pescatarian", "keto", "gluten-free", "dairy-free", "carnivore", "paleo")
COLOR_WORDS = ("red", "blonde", "blond", "brown", "black", "purple", "silver", "grey", "gray", "white", "pink",
               "blue", "green", "auburn", "ginger", "orange", "teal")
# A relationship, a job, a lease "is over" / "ended": the noun says which attribute it ends.
OVER_NOUNS = {"relationship": "partner", "marriage": "partner", "engagement": "partner", "job": "employer",
              "time": "", "stint": "employer", "lease": "residence", "contract": "employer"}
