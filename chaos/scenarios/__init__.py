"""The scenarios of the fault suite, by the issue's numbering: each is `async (suite) -> Outcome`."""

from chaos.scenarios import (
    bad_input,
    concurrency,
    model_output,
    outages,
    prompt_injection,
    replay,
    throttling,
    worker_kills,
)

SCENARIOS = {
    1: worker_kills.run,
    2: outages.temporal_restart,
    3: outages.postgres_outage,
    4: throttling.run,
    5: model_output.run,
    6: concurrency.run,
    7: bad_input.run,
    8: prompt_injection.run,
    9: replay.run,
}
