"""The LoCoMo development conversations, read into the shapes the evals retain.

LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0) is read from outside the repository, never copied
into it: `LOCOMO_DIR`, else `../shared/data/locomo-dev/` beside the repository. Each conversation
becomes memories in one of two shapes, each memory with a stable id and the dialogue turns (`dia_id`)
it stands for, so a question's evidence (dialogue turns) maps onto the memories that hold it:

- `observations`: the benchmark's facts per speaker, each a plain memory dated by its session, its
  evidence the turns it names;
- `turns`: the raw dialogue, one memory per turn, "Speaker: text", a shared photo's caption in
  brackets, dated by its session.

Questions of categories 1-4 are kept (5 is adversarial: unanswerable by design).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

Shape = Literal["observations", "turns"]
SHAPES: tuple[Shape, ...] = ("observations", "turns")
FILE_NAME = "locomo-dev3.json.gz"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_NAMESPACE = uuid.UUID("5b0d8f64-3c1e-4a57-9a43-6f1c2b7d9e10")
_SESSION = re.compile(r"^session_(\d+)$")


class LocomoMissing(RuntimeError):
    """The data folder is not there: the eval says so and skips this part."""


@dataclass(frozen=True)
class Memory:
    id: str  # a UUID, stable across runs
    content: str
    occurred_at: datetime
    evidence: frozenset[str]  # the dialogue turns (dia_id) this memory stands for
    speaker: str
    session: int
    position: int  # order within the conversation


@dataclass(frozen=True)
class Question:
    question: str
    answer: str
    category: int
    evidence: frozenset[str]


@dataclass
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    questions: list[Question]
    memories: dict[Shape, list[Memory]] = field(default_factory=dict)

    def evidence_memories(self, shape: Shape, question: Question) -> set[str]:
        """The ids of the memories of `shape` that hold one of the question's evidence turns."""
        return {m.id for m in self.memories[shape] if m.evidence & question.evidence}


def data_dir() -> Path:
    configured = os.environ.get("LOCOMO_DIR")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo-dev"


def load(directory: Path | None = None) -> list[Conversation]:
    path = (directory or data_dir()) / FILE_NAME
    if not path.is_file():
        raise LocomoMissing(f"LoCoMo data not found at {path} (set LOCOMO_DIR to its folder)")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        raw = json.load(handle)
    return [_conversation(item) for item in raw]


def _memory_id(sample_id: str, *parts: object) -> str:
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join([sample_id, *map(str, parts)])))


def session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' as a UTC time."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def _turn_text(turn: dict[str, Any]) -> str:
    text = str(turn.get("text", "")).strip()
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shares {caption}]".strip()
    return f"{turn['speaker']}: {text}"


def _conversation(item: dict[str, Any]) -> Conversation:
    sample_id = str(item["sample_id"])
    dialogue = item["conversation"]
    speakers = (str(dialogue["speaker_a"]), str(dialogue["speaker_b"]))
    sessions = sorted(int(m.group(1)) for key in dialogue if (m := _SESSION.match(key))
                      and isinstance(dialogue[key], list))
    turns: list[Memory] = []
    observations: list[Memory] = []
    for number in sessions:
        start = session_time(dialogue[f"session_{number}_date_time"])
        for index, turn in enumerate(dialogue[f"session_{number}"]):
            # Turns of one session a second apart, so their order survives a sort by time.
            turns.append(Memory(
                id=_memory_id(sample_id, "turn", turn["dia_id"]), content=_turn_text(turn),
                occurred_at=start + timedelta(seconds=index), evidence=frozenset([str(turn["dia_id"])]),
                speaker=str(turn["speaker"]), session=number, position=len(turns)))
        facts = item.get("observation", {}).get(f"session_{number}_observation", {})
        for speaker, entries in facts.items():
            for text, refs in entries:
                refs = refs if isinstance(refs, list) else [refs]
                observations.append(Memory(
                    id=_memory_id(sample_id, "observation", number, len(observations)), content=str(text),
                    occurred_at=start + timedelta(seconds=len(observations)),
                    evidence=frozenset(str(r) for r in refs), speaker=str(speaker), session=number,
                    position=len(observations)))
    questions = [Question(question=str(q["question"]), answer=str(q.get("answer", "")),
                          category=int(q["category"]), evidence=frozenset(str(e) for e in q.get("evidence", [])))
                 for q in item.get("qa", []) if int(q.get("category", 0)) in CATEGORIES]
    return Conversation(sample_id=sample_id, speakers=speakers, questions=questions,
                        memories={"observations": observations, "turns": turns})
