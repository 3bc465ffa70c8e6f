"""Model ids per provider: the forms each platform accepts and the default on each."""

from __future__ import annotations

import pytest

from domain.model_ids import default_model_id, model_id_problem
from runtime.settings import ConfigError
from runtime.temporal_client import compile_options
from tests.compile.helpers import test_settings


@pytest.mark.parametrize(("region", "expected"), [
    ("us-east-1", "us.anthropic.claude-haiku-4-5-20251001-v1:0"),
    ("eu-west-3", "eu.anthropic.claude-haiku-4-5-20251001-v1:0"),
    ("ap-northeast-1", "apac.anthropic.claude-haiku-4-5-20251001-v1:0"),
    ("sa-east-1", "global.anthropic.claude-haiku-4-5-20251001-v1:0"),
])
def test_the_bedrock_default_is_a_haiku_45_inference_profile_of_the_regions_geography(region, expected) -> None:
    assert default_model_id("bedrock", region) == expected
    assert default_model_id("anthropic") == "claude-haiku-4-5"


@pytest.mark.parametrize("model_id", [
    "anthropic.claude-haiku-4-5-20251001-v1:0", "global.anthropic.claude-haiku-4-5-20251001-v1:0",
    "anthropic.claude-sonnet-4-6",
    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0",
])
def test_bedrock_accepts_its_ids_profiles_and_arns_and_the_api_refuses_them(model_id) -> None:
    assert model_id_problem("bedrock", model_id) is None
    assert model_id_problem("anthropic", model_id) is not None


@pytest.mark.parametrize("model_id", ["claude-haiku-4-5", "claude-haiku-4-5-20251001", "claude-opus-4-6"])
def test_the_api_accepts_its_aliases_and_bedrock_refuses_them(model_id) -> None:
    assert model_id_problem("anthropic", model_id) is None
    assert "is not a Bedrock model id" in model_id_problem("bedrock", model_id)


def test_a_compile_with_a_model_of_the_wrong_form_is_refused_naming_the_option() -> None:
    with pytest.raises(ConfigError, match="--model: 'us.anthropic"):
        compile_options(test_settings(), model_id="us.anthropic.claude-haiku-4-5-20251001-v1:0")
