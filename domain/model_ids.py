"""Model ids per provider: which form each platform accepts, and the default model on each.

The Anthropic API names a model by an alias or a dated id ("claude-haiku-4-5",
"claude-haiku-4-5-20251001"). Bedrock rejects those: it wants its own model id
("anthropic.claude-haiku-4-5-20251001-v1:0"), a cross-region inference profile (that id behind a
geography prefix: "us.", "eu.", "apac.", "global.", ...) or the ARN of an inference profile. Newer
models are offered on Bedrock only through inference profiles, so the default is one, in the
geography of the configured region.

An OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp's server) names its models itself
("qwen2.5:14b", "Qwen/Qwen2.5-14B-Instruct", a GGUF file's alias): any name is its own form, so only
its shape is checked here (one token, printable), and there is no default: the server's own list
(`GET /v1/models`) says what it serves.
"""

from __future__ import annotations

import re
from typing import Literal

Provider = Literal["scripted", "anthropic", "bedrock", "openai-compatible"]
LOCAL_MODEL_ID_MAX_CHARS = 256

DEFAULT_API_MODEL = "claude-haiku-4-5"
BEDROCK_HAIKU_4_5 = "anthropic.claude-haiku-4-5-20251001-v1:0"
# Region prefix -> inference profile prefix; any other region uses the global profile.
_GEOGRAPHIES = (("us-gov-", "us-gov."), ("us-", "us."), ("eu-", "eu."), ("ap-", "apac."))

_API_ID = re.compile(r"^claude-[a-z0-9]+(?:-[a-z0-9]+)*$")
_BEDROCK_PROFILE_PREFIX = r"(?:(?:us|eu|apac|global|us-gov|jp|au|ca)\.)?"
# Older ids end in a version ("-v1:0"), some newer ones do not ("anthropic.claude-sonnet-4-6").
_BEDROCK_ID = re.compile(rf"^{_BEDROCK_PROFILE_PREFIX}anthropic\.claude-[a-z0-9][a-z0-9.:-]*$")
_BEDROCK_ARN = re.compile(
    r"^arn:aws[a-z-]*:bedrock:[a-z0-9-]+:\d{12}:"
    r"(?:inference-profile|application-inference-profile|provisioned-model)/[A-Za-z0-9.:_-]+$"
    r"|^arn:aws[a-z-]*:bedrock:[a-z0-9-]+::foundation-model/anthropic\.claude-[a-z0-9.:-]+$"
)


def default_model_id(provider: Provider, aws_region: str | None = None) -> str:
    """Claude Haiku 4.5 on every provider: its API alias, or on Bedrock its inference profile for
    the region's geography. An OpenAI-compatible server has no default ("": the setting is required)."""
    if provider == "openai-compatible":
        return ""
    if provider != "bedrock":
        return DEFAULT_API_MODEL
    region = (aws_region or "").lower()
    prefix = next((profile for start, profile in _GEOGRAPHIES if region.startswith(start)), "global.")
    return prefix + BEDROCK_HAIKU_4_5


def model_id_problem(provider: Provider, model_id: str, aws_region: str | None = None) -> str | None:
    """Why `model_id` cannot work on `provider` (one sentence), or None when its form is right.
    Only the form is checked here; whether the account may use the model, the provider says."""
    if provider == "openai-compatible":
        return _local_model_problem(model_id)
    if provider == "bedrock":
        if _BEDROCK_ID.match(model_id) or _BEDROCK_ARN.match(model_id):
            return None
        hint = f" (for {model_id!r} perhaps {default_model_id('bedrock', aws_region)!r})" if _API_ID.match(model_id) else ""
        return (f"{model_id!r} is not a Bedrock model id: use a Bedrock id such as {BEDROCK_HAIKU_4_5!r}, "
                f"an inference profile such as 'us.{BEDROCK_HAIKU_4_5}', or an inference profile ARN{hint}")
    if _API_ID.match(model_id):
        return None
    if _BEDROCK_ID.match(model_id) or _BEDROCK_ARN.match(model_id):
        return (f"{model_id!r} is a Bedrock model id; the Anthropic API names models like "
                f"{DEFAULT_API_MODEL!r} (or set WIKI_LLM=bedrock)")
    return f"{model_id!r} is not a Claude model id on the Anthropic API (expected e.g. {DEFAULT_API_MODEL!r})"


def _local_model_problem(model_id: str) -> str | None:
    if not model_id.strip():
        return ("must be set when WIKI_LLM=openai-compatible: the model name the server serves "
                "(e.g. 'qwen2.5:14b' on Ollama; its GET /v1/models lists them)")
    if len(model_id) > LOCAL_MODEL_ID_MAX_CHARS or not model_id.isprintable() or any(c.isspace() for c in model_id):
        return f"{model_id[:80]!r} is not a model name: one word of printable characters, at most {LOCAL_MODEL_ID_MAX_CHARS}"
    return None
