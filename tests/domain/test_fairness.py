"""Priority by trigger and fairness keys by tenant: the rules `runtime/priority.py` turns into Temporal's
`Priority`, tested on generated tenant ids and weight settings."""

from __future__ import annotations

import random
import string

import pytest
from temporalio.common import Priority

from domain.fairness import (
    DEFAULT_TENANT_QUOTA_SHARE,
    FAIRNESS_KEY_MAX_BYTES,
    LINT_FAIRNESS_KEY,
    PRIORITY_BY_TRIGGER,
    fairness_key,
    parse_tenant_weights,
    priority_key,
    tenant_calls_per_second,
)
from domain.memory import SCOPE_PATTERN
from messages.compile import Trigger
from runtime.priority import compile_priority, lint_priority
from runtime.settings import Settings
from tests.settings_helpers import refused

TENANT_ALPHABET = string.ascii_letters + string.digits + "_.:@-"


def random_tenant(rng: random.Random) -> str:
    return "".join(rng.choice(TENANT_ALPHABET) for _ in range(rng.randint(1, 128)))


def test_every_trigger_has_a_priority_in_the_order_the_product_promises():
    assert set(PRIORITY_BY_TRIGGER) == set(Trigger.__args__)
    interactive = max(priority_key("memory_retain"), priority_key("admin"), priority_key("forget"))
    assert interactive < priority_key("lint") < min(priority_key("bootstrap_import"), priority_key("rebuild"))
    assert all(1 <= key <= 5 for key in PRIORITY_BY_TRIGGER.values())


def test_fairness_keys_fit_temporal_and_never_collide():
    rng = random.Random(30)
    tenants = {random_tenant(rng) for _ in range(3000)}
    # Tenants that differ only after the kept prefix: the digest must tell them apart.
    tenants |= {"a" * 100 + suffix for suffix in ("x", "y", "xy", "yx")}
    keys = {}
    for tenant in tenants:
        key = fairness_key(tenant)
        assert len(key.encode()) <= FAIRNESS_KEY_MAX_BYTES, tenant
        assert keys.setdefault(key, tenant) == tenant, f"{tenant!r} and {keys[key]!r} share {key!r}"
        if len(tenant) <= FAIRNESS_KEY_MAX_BYTES:
            assert key == tenant
        else:
            assert not SCOPE_PATTERN.fullmatch(key), "a shortened key must not be some tenant's own"
    assert not SCOPE_PATTERN.fullmatch(LINT_FAIRNESS_KEY)


def test_generated_weight_settings_parse_or_fail_in_one_sentence():
    rng = random.Random(7)
    for _ in range(300):
        expected = {random_tenant(rng)[:20]: round(rng.uniform(0.001, 1000), 3) for _ in range(rng.randint(0, 5))}
        text = ", ".join(f"{tenant} = {weight}" for tenant, weight in expected.items())
        assert parse_tenant_weights(text) == expected
    for bad, says in [("acme", "tenant=weight"), ("acme=", "tenant=weight"), ("=2", "tenant=weight"),
                      ("acme=two", "not a number"), ("acme=0", "between"), ("acme=1001", "between"),
                      ("acme=nan", "between"), ("a/b=1", "not a tenant id"), ("acme=1,acme=2", "twice")]:
        with pytest.raises(ValueError, match=says):
            parse_tenant_weights(bad)


def test_a_bad_weight_setting_stops_start_up_naming_the_variable(monkeypatch):
    refused(monkeypatch, "^invalid configuration: WIKI_FAIRNESS_TENANT_WEIGHTS: ",
            WIKI_FAIRNESS_TENANT_WEIGHTS="acme=fast")
    refused(monkeypatch, "WIKI_FAIRNESS_WEIGHT", WIKI_FAIRNESS_TENANT_WEIGHTS="", WIKI_FAIRNESS_WEIGHT="0")
    refused(monkeypatch, "WIKI_LLM_TASK_QUEUE must be set when WIKI_LLM_TENANT_MAX_PER_SECOND",
            WIKI_FAIRNESS_WEIGHT="1", WIKI_LLM_TENANT_MAX_PER_SECOND="2")


def test_a_compile_starts_with_its_trigger_priority_its_tenant_key_and_weight():
    settings = Settings(WIKI_FAIRNESS_WEIGHT=0.5, WIKI_FAIRNESS_TENANT_WEIGHTS="paying=4")
    assert compile_priority(settings, "paying", "memory_retain") == Priority(
        priority_key=1, fairness_key="paying", fairness_weight=4.0)
    assert compile_priority(settings, "free", "bootstrap_import") == Priority(
        priority_key=priority_key("bootstrap_import"), fairness_key="free", fairness_weight=0.5)
    assert lint_priority(settings) == Priority(priority_key=priority_key("lint"), fairness_key=LINT_FAIRNESS_KEY)
    off = Settings(WIKI_FAIRNESS_ENABLED=False)
    assert compile_priority(off, "paying", "memory_retain") is None and lint_priority(off) is None


def test_each_tenant_gets_its_share_of_the_model_queue_rate_and_never_the_whole_of_it():
    rng = random.Random(85)
    for _ in range(500):
        queue = round(rng.uniform(0.01, 500), rng.randint(0, 4)) or 0.01
        share = rng.choice([1.0, DEFAULT_TENANT_QUOTA_SHARE, round(rng.uniform(0.01, 1), 3) or 0.01])
        limit = tenant_calls_per_second(queue, share)
        assert limit >= 0.001 and limit == round(limit, 3)
        assert limit <= max(queue * share, 0.001) + 1e-9
        assert limit > queue * share - 0.001 or limit == 0.001
        if share < 1 and queue * (1 - share) >= 0.001:
            assert limit < queue, "the rest of the rate stays free for the other tenants"


def test_the_tenant_limit_is_the_explicit_one_else_a_share_of_the_queue_rate_with_fairness_on():
    queue = {"WIKI_LLM_TASK_QUEUE": "wiki-llm"}
    assert Settings(**queue).tenant_max_per_second() is None, "no queue rate, no share of it"
    assert Settings(**queue, WIKI_LLM_MAX_PER_SECOND=2).tenant_max_per_second() == 1.7
    assert Settings(**queue, WIKI_LLM_MAX_PER_SECOND=2, WIKI_LLM_TENANT_QUOTA_SHARE=0.5).tenant_max_per_second() == 1.0
    assert Settings(**queue, WIKI_LLM_MAX_PER_SECOND=2, WIKI_LLM_TENANT_MAX_PER_SECOND=0.3).tenant_max_per_second() == 0.3
    # Without fairness keys every call has the same key: a per-key limit would cap the whole queue.
    assert Settings(**queue, WIKI_LLM_MAX_PER_SECOND=2, WIKI_FAIRNESS_ENABLED=False).tenant_max_per_second() is None


@pytest.mark.parametrize("value", ["0", "1.5", "-0.2", "nan", "most"])
def test_a_tenant_quota_share_outside_zero_to_one_is_refused_naming_the_variable(monkeypatch, value):
    refused(monkeypatch, "WIKI_LLM_TENANT_QUOTA_SHARE", WIKI_LLM_TENANT_QUOTA_SHARE=value)
