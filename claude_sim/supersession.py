"""The simulator's own judgement of which new line replaces which current claim, as a model that
follows the leaf prompt's contract would mark it: `"supersede": [[newer, older, reason]]` on a
section, newer and older by when their records happened.

Self-contained on purpose (no import from the product): it reads the prompt as sent (each candidate
page's title, aliases and current claims "fact f<n>" with the day each began; each record's text and
when it happened) and the reply the brain wrote, and decides with a reading of its own, unlike the
product's offline rules (domain/facts.py): a sentence is split into its subject, the attribute its
words point at (a frame of cue words per attribute, and for "<someone>'s <noun> is <value>" any
noun that is not one of many: friends, hobbies, pets), the value (a proper-name span, or a value of
a typed shape: a time, a phone number, an email), and whether it ends the value rather than states
it. Accumulating facts (joining, becoming, visiting, meeting, taking up) are never marked, as the
prompt asks.

    mark_replacements(user_prompt, reply) -> reply   # the brain calls this once per leaf plan
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_DECODER = json.JSONDecoder()
_FIELD = re.compile(r"(\w+)=")
PRONOUNS = {"she", "he", "they", "her", "his", "their", "it", "its", "i", "my", "we", "our"}
ARTICLES = {"the", "a", "an"}

# Cue words per attribute (lower case, matched on word boundaries). A frame wins by its earliest cue.
FRAMES: dict[str, tuple[str, ...]] = {
    "address": ("address", r"lives? at \d", r"living at \d", r"lived at \d"),
    "residence": (r"lives? in", "lived in", "living in", "resides", "reside in", "based in", "settled in",
                  r"moved? (?:back )?to", "moving to", "relocated", "relocating", "home is in", "home is now in",
                  "apartment in", "flat in", "moved out of", "moved away from", r"moved from", "home in"),
    "employer": ("works at", "works for", "work at", "work for", "worked at", "worked for", "working at",
                 "working for", "job at", "job with", "employed by", "employed at", "hired by", "hired at",
                 "employer", "laid off", "resigned from", "fired from", "retired from", "company is",
                 "offer from"),
    "job_title": ("works as", "working as", "worked as", "work as", "promoted to", "position as", "job title",
                  "title is", "role is", r"job is (?!at|with)", "careers"),
    "partner": ("dating", "married to", "engaged to", "seeing", "partner", "relationship with", "husband",
                "wife", "boyfriend", "girlfriend", "fiance", "broke up", "split up", "divorced",
                "together with"),
    "phone": ("phone", "number", "cell", "mobile", "reached at"),
    "email": ("email", "e-mail"),
    "school": ("studies at", "study at", "attends", "attending", "student at", "enrolled", "transferred",
               "classes at", "graduated from", "dropped out of", "school"),
    "manager": ("manager", "boss", "reports to", "supervisor"),
    "car": ("drives a", "drives an", "car is", "new car", "traded in", "drove a"),
    "doctor": ("doctor", "doctors", "physician", r"sees Dr\b", r"see Dr\b", r"seeing Dr\b"),
    "diet": ("vegetarian", "vegan", "pescatarian", "keto", "diet"),
    "hair": ("hair",),
    "age": ("years old", "turned", "birthday"),
    "team": ("plays for", "play for", "played for", "traded to", "signed with", r"is on the [A-Z]"),
    "meeting": ("meets", "meet on", "held on", "held at", "happens every", "rescheduled", "pushed to",
                "moved to", r"now at\b"),
    "status": ("status", "on hold", "in progress", "done", "finished", "cancelled", "canceled", "completed",
               "approved", "complete", "postponed", "paused"),
}
# Facts that pile up: a line led by one of these is never a replacement (unless a frame's cue of a
# job or a home is there too: "took a job at", "moved to").
ACCUMULATING = ("joined", "became", "visited", "met ", "took up", "started learning", "adopted", "went to",
                "flew to", "spent a", "signed up", "had coffee", "made friends", "got to know", "is building",
                "began", "started working on", "took a trip", "is part of", "signed on as", "started as",
                "got a kitten", "got a puppy", "now has a", "has been getting into", "started ")
ENDINGS = ("no longer", "not anymore", "anymore", "any more", "quit", "left", "moved out of", "moved away from",
           "broke up", "split up", "split from", "divorced", "is over", "was over", "ended", "stopped",
           "dropped out", "graduated from", "sold", "resigned", "laid off", "fired from", "retired from")
# "<someone>'s <noun> is …" of these nouns names one of many, never a value that replaces another.
MANY = {"friend", "friends", "hobby", "hobbies", "pet", "pets", "kid", "kids", "child", "children", "sister",
        "brother", "cousin", "colleague", "neighbor", "neighbour", "book", "trip", "class", "project", "song",
        "dog", "cat", "idea", "plan", "goal"}
_TIME = re.compile(r"\b(?:\d{1,2}(?::\d{2})?\s*(?:am|pm)|noon|midnight|(?:mon|tues|wednes|thurs|fri|satur|sun)"
                   r"days?(?:\s+(?:mornings?|evenings?|afternoons?))?)\b", re.IGNORECASE)
_PHONE = re.compile(r"\+?\(?\d[\d\s().-]{5,}\d")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_STATUS = re.compile(r"\b(on hold|in progress|done|finished|cancelled|canceled|completed|complete|approved|"
                     r"postponed|paused|active|closed|open|blocked|shipped|launched)\b", re.IGNORECASE)
_DIET = re.compile(r"\b(vegetarian|vegan|pescatarian|keto|paleo)\b", re.IGNORECASE)
_COLOR = re.compile(r"\b(red|blonde|blond|brown|black|purple|silver|grey|gray|white|pink|blue|green|auburn)\b",
                    re.IGNORECASE)
_AGE = re.compile(r"\b(\d{1,3})(?:\s+years?\s+old)?\b")
_NAME = re.compile(r"[A-Z][\w'&-]*(?:\s+(?:of\s+)?[A-Z0-9][\w'&-]*)*")
_FROM_TO = re.compile(r"\bfrom\s+(?:being\s+)?(?:the\s+)?(.+?)\s+to\s+(.+?)(?:[.,;!]|$)", re.IGNORECASE)
_LEFT_FOR = re.compile(r"\bleft\s+(?:the\s+)?(.+?)\s+for\s+(?:the\s+|a\s+|an\s+)?(.+?)(?:[.,;!]|$)")
_TRADED = re.compile(r"\btraded in (?:the |her |his |their )?(.+?) for (?:a |an )?(.+?)(?:[.,;!]|$)")
_AFTER_LEAVING = re.compile(r"\bafter leaving\s+(?:the\s+)?(.+?)(?:[.,;!]|$)")
_POSSESSED = re.compile(r"^(?P<who>.+?)(?:'s|’s)\s+(?:new\s+|current\s+)?(?P<noun>[a-z][a-z -]*?)\s+"
                        r"(?:is|was|has been|changed to)\b")
_DATE = re.compile(r"^\s*-\s*(\d{4}-\d{2}-\d{2})\s*:\s*")
_LEAD = re.compile(r"^\*\*[^*]+\*\*:\s*")


@dataclass
class Said:
    """What a sentence says: its subject, the attribute, the value (or the value it ends), the value
    it leaves (from … to …)."""

    subject: str
    attribute: str | None
    value: str | None
    ended: str | None = None
    left: str | None = None


def _norm(text: str) -> str:
    words = re.sub(r"[^\w@.+' -]", " ", text.lower()).split()
    return " ".join(w.strip(".") for w in words if w not in ARTICLES and w not in ("now", "again")).strip()


def _subject(sentence: str) -> str:
    words = sentence.split()
    if not words:
        return ""
    if words[0].lower() in PRONOUNS:
        return words[0].lower()
    if words[0].lower() in ("the", "our", "my"):
        head = []
        for word in words[1:5]:  # the thing's name ends at its verb ("meets", "moved", "is")
            low = word.lower()
            if low in ("is", "was", "now", "got", "has", "will", "can", "just") or low.endswith(("s", "ed")):
                break
            head.append(word)
        return _norm(" ".join(head))
    name: list[str] = []
    for word in words:
        bare = word.removesuffix("'s").removesuffix("’s")
        if not bare[:1].isupper() or (name and bare.lower() in ("these", "from")):
            break
        name.append(bare)
        if bare != word:
            break
    return _norm(" ".join(name))


def _frame(text: str) -> str | None:
    low = text.lower()
    found: list[tuple[int, str]] = []
    for attribute, cues in FRAMES.items():
        for cue in cues:
            match = re.search(rf"\b{cue}", text if cue != cue.lower() else low)
            if match:
                found.append((match.start(), attribute))
    if _EMAIL.search(text):
        return "email"
    if _PHONE.search(text) and not _TIME.search(text):
        return "phone"
    if _TIME.search(text) and any(a in ("meeting", "residence") for _, a in found):
        return "meeting"
    found = [(at, attribute) for at, attribute in found if attribute != "meeting"]  # a meeting has a time
    if re.search(r"\b(?:is|turned|turns)\s+\d{1,3}(?:\s+now)?\s*[.!]?$", text):
        return "age"
    return min(found)[1] if found else None


def _value_of(attribute: str | None, text: str) -> str | None:
    typed = {"email": _EMAIL, "phone": _PHONE, "meeting": _TIME, "status": _STATUS, "diet": _DIET, "hair": _COLOR}
    if attribute in typed:
        found = typed[attribute].findall(text)
        return _norm(found[-1]) if found else None
    if attribute == "age":
        found = _AGE.findall(text)
        return found[-1] if found else None
    if attribute == "job_title":
        match = re.search(r"\b(?:as|to|is|title is)\s+(?:an?\s+)?([a-z][a-z ]+?)(?:\s+now)?(?:[.,;!]|$)", text)
        return _norm(match.group(1)) if match else None
    if attribute == "address":
        match = re.search(r"\b\d+\s+[A-Z][\w]*(?:\s+[A-Z][\w]*)*", text)
        return _norm(match.group(0)) if match else None
    if attribute and attribute.startswith("favourite"):
        match = re.search(r"\b(?:is|was)\s+(?:now\s+)?(.+?)(?:\s+now)?(?:[.,;!]|$)", text)
        return _norm(match.group(1)) if match else None
    names = [m.group(0) for m in _NAME.finditer(text) if m.start() > 0]
    names = [n for n in names if n.split()[0] not in ("She", "He", "They", "Her", "His", "Their", "These", "From")]
    return _norm(names[-1]) if names else None


def read(sentence: str) -> Said | None:
    """What one sentence says about a value of an attribute, or None."""
    text = _LEAD.sub("", _DATE.sub("", sentence.strip()))
    text = re.sub(r"\b(Dr|Mr|Mrs|Ms|St)\.\s", r"\1 ", text)  # "Dr. Kim": not a sentence's end
    text = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text)[0]
    text = re.sub(r"^(?:From now on|These days|Nowadays|Lately|Today|Now|As of now),?\s+", "", text)
    text = text[:1].upper() + text[1:]
    low = text.lower()
    subject = _subject(text)
    if not subject:
        return None
    possessed = _POSSESSED.match(text) or re.match(
        r"^(?P<who>her|his|their|my|its)\s+(?:new\s+|current\s+)?(?P<noun>[a-z][a-z -]*?)\s+(?:is|was)\b", text,
        re.IGNORECASE)
    if possessed and "favo" in possessed.group("noun"):
        thing = possessed.group("noun").split()[-1]
        attribute: str | None = "favourite " + {"dish": "food", "meal": "food"}.get(thing, thing)
    else:
        attribute = _frame(text)
        if attribute is None and possessed and possessed.group("noun").split()[-1] not in MANY:
            attribute = possessed.group("noun").split()[-1]  # "her landlord is …": any one-of noun
    accumulating = any(cue in low for cue in ACCUMULATING)
    if accumulating and attribute not in ("employer", "residence", "school", "team", "partner") \
            or accumulating and re.search(r"\b(joined|became|visited|met|took up|adopted)\b", low) \
            and attribute in (None, "partner", "team") and "traded" not in low:
        return None
    ending = any(re.search(rf"\b{cue}\b", low) for cue in ENDINGS)
    for pattern in (_LEFT_FOR, _TRADED, _FROM_TO):
        match = pattern.search(text)
        if match:
            return Said(subject, attribute, _norm(match.group(2)), left=_norm(match.group(1)))
    after = _AFTER_LEAVING.search(text)
    if ending and not after:
        if low.startswith(("the ", "her ", "his ")) and re.search(r"\b(?:is|was) over\b|\bended\b", low):
            match = re.search(r"\b(?:with|to|at|in)\s+(.+?)\s+(?:is|was|has|ended)", text)
            return Said(subject, attribute, None, ended=_norm(match.group(1))) if match else None
        value = _value_of(attribute, text)
        if value is None:
            match = re.search(r"\b(?:left|quit|sold|stopped seeing|no longer(?: an?| the)?)\s+"
                              r"(?:the\s+|her\s+|his\s+|their\s+)?(.+?)(?:\s+anymore)?(?:[.,;!]|$)", text)
            value = _norm(match.group(1)) if match else None
        if value and value.startswith("dr "):
            attribute = "doctor"
        split = re.match(r"^.+?\s+and\s+([A-Z]\w*)\s+(?:split|broke|divorced)", text)
        if split:
            value = _norm(split.group(1))
        return Said(subject, attribute, None, ended=value) if value else None
    value = _value_of(attribute, text.split(" after leaving ")[0])
    if attribute is None or value is None:
        return None
    return Said(subject, attribute, value, left=_norm(after.group(1)) if after else None)


def _same(first: str | None, second: str | None) -> bool:
    if not first or not second:
        return False
    a, b = first.split(), second.split()
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    return longer[: len(shorter)] == shorter


def rivals(newer: Said, older: Said) -> str | None:
    """Why `newer` ends `older` (a short reason), or None when both hold."""
    meet = newer.attribute is None or older.attribute is None or newer.attribute == older.attribute
    if newer.ended and older.value and _same(newer.ended, older.value) and meet:
        return f"{older.attribute or 'value'} {older.value} ended"
    if older.ended and newer.value and _same(older.ended, newer.value) and meet:
        return f"{newer.attribute or 'value'} {newer.value} again"
    if newer.left and older.value and _same(newer.left, older.value):
        return f"{older.value} left for {newer.value}"
    if older.left and newer.value and older.value and _same(older.left, newer.value):
        return f"back to {newer.value} from {older.value}"
    if newer.value and older.value and newer.attribute and newer.attribute == older.attribute \
            and not _same(newer.value, older.value):
        return f"{newer.attribute}: {newer.value}"
    return None


# ------------------------------------------------------------------ the prompt and the reply


def _fields(line: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    at = 0
    while (match := _FIELD.search(line, at)) is not None:
        start = match.end()
        if start < len(line) and line[start] in "\"[{":
            value, end = _DECODER.raw_decode(line, start)
        else:
            end = line.find(" ", start)
            end = len(line) if end < 0 else end
            value = line[start:end]
        out[match.group(1)] = value
        at = end
    return out


@dataclass
class _Page:
    handle: str
    names: list[str]
    facts: list[tuple[str, str, str]]  # (handle, text, day)


def _prompt(user: str) -> tuple[dict[str, _Page], dict[str, tuple[str, str]]]:
    pages: dict[str, _Page] = {}
    records: dict[str, tuple[str, str]] = {}
    current: _Page | None = None
    for line in user.splitlines():
        head = re.match(r"^- ([pm][0-9]+) (.*)$", line)
        if head and head.group(1).startswith("p"):
            f = _fields(head.group(2))
            current = pages[head.group(1)] = _Page(head.group(1), [f.get("title", ""), *f.get("aliases", [])], [])
        elif head:
            f = _fields(head.group(2))
            records[head.group(1)] = (str(f.get("text", "")), str(f.get("happened", ""))[:10])
            current = None
        elif current is not None and (fact := re.match(r"^  · fact (f[0-9]+) (.*)$", line)):
            f = _fields(fact.group(2))
            current.facts.append((fact.group(1), str(f.get("text", "")), str(f.get("since", ""))[:10]))
        elif line.startswith("- ") or line.startswith("## "):
            current = None
    return pages, records


def _about_page(said: Said, names: list[str]) -> bool:
    if said.subject in PRONOUNS:
        return True
    own = {_norm(n) for n in names if n}
    return any(said.subject == n or said.subject == n.split()[0] or n.startswith(said.subject + " ")
               for n in own if n)


def _sections(page: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for index, section in enumerate(page.get("sections") or []):
        if isinstance(section, list) and section and isinstance(section[0], str):
            section = dict(zip(("slug", "lines", "refs"), section, strict=False))
            page["sections"][index] = section
        if isinstance(section, dict):
            out.append(section)
    return out


def mark_replacements(user: str, reply: dict[str, Any]) -> dict[str, Any]:
    """The reply with every section's "supersede" pairs decided here (any the brain wrote dropped)."""
    pages, records = _prompt(user)
    groups: list[tuple[list[str], list[tuple[str, str, str]], list[dict[str, Any]]]] = []
    for update in reply.get("updates") or []:
        page = pages.get(str(update.get("page", "")))
        groups.append((page.names if page else [], page.facts if page else [], _sections(update)))
    for new in [*(reply.get("new_pages") or []), *(reply.get("promotions") or [])]:
        groups.append(([str(new.get("title", ""))], [], _sections(new)))
    for names, facts, sections in groups:
        lines: list[tuple[dict[str, Any], str, str, str]] = []  # (section, as written, text, day)
        for section in sections:
            section.pop("supersede", None)
            refs = [r for r in section.get("refs") or [] if isinstance(r, str)]
            for line in section.get("lines") or []:
                if not isinstance(line, str):
                    continue
                quoted = re.match(r"^@(m[0-9]+)(?::.*)?$", line.strip())
                if quoted and quoted.group(1) in records:
                    text, day = records[quoted.group(1)]
                else:
                    date = _DATE.match(line)
                    days = [records[r][1] for r in refs if r in records]
                    text, day = line, date.group(1) if date else max(days, default="")
                lines.append((section, line, text, day))
        shown = [(None, handle, text, day) for handle, text, day in facts]
        for section, written, text, day in lines:
            mine = read(text)
            if mine is None or not _about_page(mine, names):
                continue
            for other_section, other_written, other_text, other_day in [*shown, *lines]:
                if other_written == written:
                    continue
                theirs = read(other_text)
                if theirs is None or not _about_page(theirs, names):
                    continue
                if day and other_day and day < other_day:
                    if other_section is None and (why := rivals(theirs, mine)):  # the shown claim is newer
                        section.setdefault("supersede", []).append([other_written, written, why])
                    continue
                if other_section is not None and day == other_day and other_written < written:
                    continue  # two lines of one moment: marked once
                why = rivals(mine, theirs)
                if why:
                    section.setdefault("supersede", []).append([written, other_written, why])
    return reply
