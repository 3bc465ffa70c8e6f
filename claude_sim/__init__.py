"""A wire-level Claude simulator for tests, benchmarks and the demo (not part of the product).

It serves the Anthropic Messages API and Bedrock's InvokeModel / InvokeModelWithResponseStream on
loopback, validates requests as the real services document, reports usage with prompt-cache
semantics, simulates latency and rate limits, and injects faults. Its answers come from the request
as sent (claude_sim/brain.py), never from the product's code, which it does not import; it can lie
in six kinds (claude_sim/lies.py). The product reaches it only through the anthropic SDK's base-URL
settings (ANTHROPIC_BASE_URL, ANTHROPIC_BEDROCK_BASE_URL); no product module imports it. See
claude_sim/server.py.
"""

from claude_sim.accounting import Limits, Usage
from claude_sim.faults import Fault
from claude_sim.lies import Lie
from claude_sim.server import Call, ClaudeSimulator, SimConfig

__all__ = ["Call", "ClaudeSimulator", "Fault", "Lie", "Limits", "SimConfig", "Usage"]
