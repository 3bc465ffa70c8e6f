"""The open mention a subject of the batch was held under before, whatever spelling it was held as."""

from __future__ import annotations

from domain.aliases import normalize_alias
from domain.context import OpenMention
from domain.resolution import NameSet, compare
from planners.scripted.subjects import Subject


def matching_mention(subject: Subject, mentions: list[OpenMention]) -> OpenMention | None:
    """The open mention held under the subject's name; else the one held under another spelling of it
    (a spelling pooled on the row, or one a confident rung of the ladder calls the same name)."""
    exact = next((m for m in mentions if (m.alias_normalized or normalize_alias(m.alias)) in subject.names), None)
    if exact is not None:
        return exact
    names = NameSet(type=subject.type, names=subject.spellings)
    kin = [m for m in mentions
           if (not m.suggested_type or m.suggested_type == subject.type)
           and (any(normalize_alias(s) in subject.names for s in _pooled_spellings(m))
                or compare(names, NameSet(type=subject.type, names=[m.alias, *_pooled_spellings(m)])).confident)]
    return kin[0] if len(kin) == 1 else None


def _pooled_spellings(mention: OpenMention) -> list[str]:
    """The other spellings the mention's sightings were written with (store/mention_pool.py)."""
    return list(dict.fromkeys(str(c["alias"]) for c in mention.sample_contexts
                              if isinstance(c, dict) and c.get("alias")))
