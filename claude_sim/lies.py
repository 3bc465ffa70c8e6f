"""The simulator's lying fault and its claim judge.

`--ungrounded-claims F` (env `CLAUDE_SIM_UNGROUNDED_CLAIMS`) makes a fraction F of the lines a leaf
plan proposes carry a name or a number that none of their cited memories holds, as a model that
invents would: a quoted memory's line is written out with an invented companion, a written line
gets an invented name or a count. Which lines lie is decided by a hash of the line and the prompt,
so a run is reproducible. The injected lines are recorded, so a measurement can tell how many the
gate blocked.

The claim judge's answer (`judged_claims`) reads the prompt's contract
(planners/claim_judge_prompt.py) and decides each claim from the memories it cites by their words,
with no product code: a cited memory supports a claim on its own when it holds every content word
of it (numbers and names included) with the same negation; a claim with a name (other than the
page's) or a number none of its memories holds, or a negation they do not share, is unsupported;
anything else is unsure.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from planners.compact_plan import is_quote, quote_parts

ENV_UNGROUNDED_CLAIMS = "CLAUDE_SIM_UNGROUNDED_CLAIMS"

# Names and figures no memory of the sample or the eval corpus uses.
_INVENTED_NAMES = ("Quillon Vasterby", "Oriane Blackwood", "Teodor Kvasnik", "Ysolde Marchetti", "Bramwell Ostrander",
                   "Caspian Thornquist", "Linnea Haverford", "Ignatius Pembrooke")


def _fraction(*parts: str) -> float:
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _invented(line: str, user: str) -> str:
    choice = int(_fraction("name", line) * len(_INVENTED_NAMES))
    name = _INVENTED_NAMES[choice]
    if name.lower() in user.lower():
        name = next((n for n in _INVENTED_NAMES if n.lower() not in user.lower()), name)
    if _fraction("kind", line) < 0.5:
        return f"{line.rstrip('.')} with {name}."
    count = 41 + int(_fraction("count", line) * 900)
    return f"{line.rstrip('.')}, {count} guests in all."


def _lines(answer: dict[str, Any]) -> list[dict[str, Any]]:
    sections = [s for u in answer.get("updates") or [] for s in u.get("sections") or []]
    sections += [s for p in answer.get("new_pages") or [] for s in p.get("sections") or []]
    sections += [s for p in answer.get("promotions") or [] for s in p.get("sections") or []]
    return [s for s in sections if isinstance(s, dict)]


def lie(answer: Any, fraction: float, user: str, quotes: dict[str, str], injected: list[str]) -> Any:
    """The compact plan with a `fraction` of its lines made ungrounded (recorded in `injected`).
    `quotes`: memory handle -> the line its `@handle` stands for."""
    if fraction <= 0 or not isinstance(answer, dict):
        return answer
    for section in _lines(answer):
        lines = section.get("lines") or []
        out = []
        for line in lines:
            if not isinstance(line, str) or not line.strip() or _fraction(user[:2000], line) >= fraction:
                out.append(line)
                continue
            text = line
            if is_quote(line):
                handle, _ = quote_parts(line)
                text = quotes.get(handle.lower(), "")
                if not text:
                    out.append(line)
                    continue
                refs = section.setdefault("refs", [])
                if handle not in refs:
                    refs.append(handle)
            lied = _invented(text, user)
            injected.append(lied)
            out.append(lied)
        section["lines"] = out
    return answer


_MEMORY = re.compile(r"^(m\d+) \((?:\d{4}-\d{2}-\d{2}|undated)\): (.*)$", re.MULTILINE)
_CLAIM = re.compile(r"^(c\d+)\. page: (.*?) \| cites: ([^|]*) \| claim: (.*)$", re.MULTILINE)
_WORD = re.compile(r"[\w'’]+", re.UNICODE)
_DATE_PREFIX = re.compile(r"^\s*-?\s*\d{4}-\d{2}-\d{2}\s*:\s*")
_NEGATIONS = frozenset(["not", "never", "no", "nobody", "nothing", "didn't", "doesn't", "don't", "wasn't", "isn't",
                        "won't", "can't", "couldn't", "hasn't", "haven't", "hadn't", "without"])
_FILLER = frozenset(["a", "an", "the", "and", "or", "of", "in", "on", "at", "to", "for", "with", "by", "from",
                     "was", "were", "is", "are", "be", "been", "her", "his", "their", "its", "it", "they", "she",
                     "he", "we", "i", "my", "our", "this", "that", "as", "so", "some", "also", "then"])


def _words(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORD.findall(text.replace("**", ""))]


def _verdict(claim: str, page: str, cited: dict[str, str]) -> tuple[str, Any]:
    claim = _DATE_PREFIX.sub("", claim)
    words = [w for w in _words(claim) if w not in _FILLER]
    negated = bool(_NEGATIONS & set(words))
    content = [w for w in words if w not in _NEGATIONS]
    held = {handle: set(_words(text)) for handle, text in cited.items()}
    alone = [h for h, ws in held.items() if all(w in ws for w in content) and bool(_NEGATIONS & ws) == negated]
    if alone:
        return "supported", alone
    every = set().union(*held.values()) | set(_words(page)) if held else set(_words(page))
    names = [w for w, raw in zip(_words(claim), _WORD.findall(claim.replace("**", "")), strict=True)
             if raw[:1].isupper() and w not in _FILLER and w not in _NEGATIONS]
    if any(w not in every for w in names[1:] if w not in _NEGATIONS):
        return "unsupported", "invented"
    if any(w.isdigit() and w not in every for w in content):
        return "unsupported", "number"
    if negated and not any(_NEGATIONS & ws for ws in held.values()):
        return "unsupported", "negation"
    return "unsure", None


def judged_claims(user: str) -> dict[str, Any]:
    memories = dict(_MEMORY.findall(user.split("\nClaims:\n", 1)[0]))
    answer: dict[str, Any] = {"supported": {}, "unsupported": {}, "unsure": []}
    for claim_id, page, cites, claim in _CLAIM.findall(user):
        cited = {m.strip(): memories[m.strip()] for m in cites.split(",") if m.strip() in memories}
        verdict, detail = _verdict(claim, page, cited)
        if verdict == "supported":
            answer["supported"][claim_id] = detail
        elif verdict == "unsupported":
            answer["unsupported"][claim_id] = detail
        else:
            answer["unsure"].append(claim_id)
    return answer
