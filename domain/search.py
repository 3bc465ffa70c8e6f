"""Search input rules (the terms and limit of `store.wiki_reads.search_pages`), Unicode-aware.

The original keeps only ASCII `[a-z0-9]+` runs, so "Café" searched as "caf"; here a term is any run
of Unicode letters and digits, so accented and non-Latin words search as written. Each term becomes
a prefix query ("empan" finds "empanada"); the database splits terms exactly as it split the indexed
text (see store.wiki_reads), so the two always agree whatever the database's locale.
"""

from __future__ import annotations

import re
import unicodedata

DEFAULT_SEARCH_LIMIT = 20
MAX_SEARCH_LIMIT = 50
MIN_TERM_LENGTH = 2

# A run of letters or digits in any script (`\w` without the underscore).
_TERM = re.compile(r"[^\W_]+")


def normalize_search_terms(query: str) -> list[str]:
    """Lower-cased letter/digit runs of at least two characters, first occurrence kept, in order."""
    folded = unicodedata.normalize("NFKC", query).lower()
    terms = [term for term in _TERM.findall(folded) if len(term) >= MIN_TERM_LENGTH]
    return list(dict.fromkeys(terms))


def clamp_search_limit(limit: int | None) -> int:
    """The resolver's rule: 20 by default, at least 1, at most 50."""
    return max(1, min(DEFAULT_SEARCH_LIMIT if limit is None else limit, MAX_SEARCH_LIMIT))


def escape_like(text: str) -> str:
    """`text` as a literal inside a LIKE pattern (with `ESCAPE '\\'`): `%`, `_` and `\\` match themselves."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
