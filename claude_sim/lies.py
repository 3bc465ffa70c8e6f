"""The simulator's lying fault and its claim judge.

`--ungrounded-claims F` (env `CLAUDE_SIM_UNGROUNDED_CLAIMS`) makes a fraction F of the lines a leaf
plan proposes carry a name or a number that none of their cited memories holds, as a model that
invents would: a quoted memory's line is written out with an invented companion, a written line
gets an invented name or a count. Which lines lie is decided by a hash of the line and the prompt,
so a run is reproducible. The injected lines are recorded, so a measurement can tell how many the
gate blocked.

The claim judge's answer scores each claim of the prompt with the scripted judge
(`domain.claims.scripted_score`), from the memories the prompt quotes.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from domain.claims import ClaimQuestion, scripted_score
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


_MEMORY = re.compile(r"^(m\d+): (.*)$", re.MULTILINE)
_CLAIM = re.compile(r"^(c\d+)\. page: (.*)\n  claim: (.*)\n  cites: (.*)$", re.MULTILINE)


def scored_claims(user: str) -> dict[str, Any]:
    memories = dict(_MEMORY.findall(user.split("Claims to score:", 1)[0]))
    scores = []
    for claim_id, page, claim, cites in _CLAIM.findall(user):
        texts = [memories[m.strip()] for m in cites.split(",") if m.strip() in memories]
        score = scripted_score(ClaimQuestion(key=claim_id, text=claim, page=page, memories=texts))
        scores.append({"id": claim_id, "accuracy": score.accuracy, "relevance": score.relevance,
                       "specificity": score.specificity})
    return {"scores": scores}
