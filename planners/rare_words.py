"""Whether a word is rare in English: wordfreq's Zipf frequency (its word lists ship inside the
package, loaded on first use), below a threshold most common nouns clear."""

from __future__ import annotations

import functools

# Zipf 3 is a word used about once per million words: "brisket" (2.9), "tostada" (1.8) and names such as
# "Oriane" (1.4) or "Quillon" (0) are under it; "lunch", "waited" and "museum" (over 4) and common
# given names ("Lena" 3.6, "Eric" 4.5) are over it, and stay the judge's.
RARE_BELOW_ZIPF = 3.0


@functools.lru_cache(maxsize=65_536)
def is_rare_word(word: str) -> bool:
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en") < RARE_BELOW_ZIPF
