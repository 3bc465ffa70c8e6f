"""The model queue's rate from the provider's per-minute limits: the tightest limit decides, for calls of
any mean size (generated)."""

from __future__ import annotations

import random

import pytest

from domain.model_quota import ProviderLimits, calls_per_second


def test_the_tightest_limit_decides_and_no_limit_is_overrun_on_average():
    rng = random.Random(30)
    for _ in range(500):
        limits = ProviderLimits(rng.choice([None, rng.randint(1, 4000)]), rng.choice([None, rng.randint(1000, 10**7)]),
                                rng.choice([None, rng.randint(1000, 10**6)]))
        mean_in, mean_out = rng.uniform(100, 20_000), rng.uniform(10, 4_000)
        headroom = rng.uniform(0.5, 1.0)
        rate = calls_per_second(limits, mean_in, mean_out, headroom)
        if not any((limits.requests_per_minute, limits.input_tokens_per_minute, limits.output_tokens_per_minute)):
            assert rate is None
            continue
        assert rate is not None and rate > 0
        per_minute = rate * 60
        slack = 1e-9
        for limit, size in ((limits.requests_per_minute, 1), (limits.input_tokens_per_minute, mean_in),
                            (limits.output_tokens_per_minute, mean_out)):
            if limit:
                assert (per_minute - slack) * size <= headroom * limit + 1e-6
        assert any(limit and (per_minute + slack) * size >= headroom * limit - 1e-6
                   for limit, size in ((limits.requests_per_minute, 1), (limits.input_tokens_per_minute, mean_in),
                                       (limits.output_tokens_per_minute, mean_out)))


def test_a_headroom_outside_the_unit_interval_is_refused():
    with pytest.raises(ValueError, match="headroom"):
        calls_per_second(ProviderLimits(60), 1, 1, headroom=0)
    with pytest.raises(ValueError, match="headroom"):
        calls_per_second(ProviderLimits(60), 1, 1, headroom=1.5)
