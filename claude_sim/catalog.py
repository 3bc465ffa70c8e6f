"""The models the simulator serves, as each platform names them, with their documented limits.

Deliberately written out here rather than taken from the product's price table: the simulator plays
the provider, and a wrong entry on the product's side must show up as a rejected request, not be
mirrored. Token counts are simulated at four UTF-8 characters a token (no real tokenizer runs here).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

API_VERSIONS = frozenset({"2023-06-01", "2026-10-21"})
BEDROCK_VERSION = "bedrock-2023-05-31"
# The SDK's own version, which Bedrock accepts in the body only for the newest models.
BEDROCK_NEW_VERSION = "2026-10-21"


@dataclass(frozen=True)
class Model:
    family: str  # the API alias
    dated: str | None  # the API's dated id
    bedrock: str | None  # the Bedrock model id (no profile prefix)
    max_output: int
    min_cacheable_tokens: int
    accepts_new_bedrock_version: bool = False


MODELS = (
    Model("claude-haiku-4-5", "claude-haiku-4-5-20251001", "anthropic.claude-haiku-4-5-20251001-v1:0", 64_000, 4096),
    Model("claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "anthropic.claude-sonnet-4-5-20250929-v1:0", 64_000, 1024),
    Model("claude-opus-4-5", "claude-opus-4-5-20251101", "anthropic.claude-opus-4-5-20251101-v1:0", 64_000, 4096),
    Model("claude-sonnet-4-6", None, "anthropic.claude-sonnet-4-6", 64_000, 2048),
    Model("claude-opus-4-6", None, "anthropic.claude-opus-4-6-v1", 128_000, 4096),
    Model("claude-haiku-5-5", None, "anthropic.claude-haiku-5-5", 128_000, 4096, accepts_new_bedrock_version=True),
    Model("claude-sonnet-5-5", None, "anthropic.claude-sonnet-5-5", 128_000, 4096, accepts_new_bedrock_version=True),
)
_PROFILE = re.compile(r"^(?:us|eu|apac|global|us-gov|jp|au|ca)\.")
_PROFILE_ARN = re.compile(r"^arn:aws[a-z-]*:bedrock:[a-z0-9-]+:\d{12}:(?:inference-profile|application-inference-profile)/(.+)$")


def api_model(model_id: str) -> Model | None:
    return next((m for m in MODELS if model_id in (m.family, m.dated)), None)


def bedrock_model(model_id: str) -> Model | None:
    """A Bedrock model id, a cross-region inference profile, or an inference profile ARN."""
    arn = _PROFILE_ARN.match(model_id)
    bare = _PROFILE.sub("", arn.group(1) if arn else model_id)
    return next((m for m in MODELS if m.bedrock and bare == m.bedrock), None)


def tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 4) if text else 0
