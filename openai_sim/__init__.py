"""A wire-level fake of the OpenAI chat-completions and embeddings protocol (not part of the product).

It plays a local model server (Ollama, vLLM, LM Studio, llama.cpp's server: `profiles.py` says what
each accepts) on loopback for the tests, the benchmarks and `make demo-simulated
PROVIDER=openai-compatible`. It validates requests as those servers do, reports usage, streams
server-sent events, and injects the failures a local server shows (`faults.py`). Its answers come
from the Claude simulator through one adapter (`brain_adapter.py`). The product reaches it only
through the `openai` SDK's base URL (WIKI_OPENAI_BASE_URL); no product module imports it.
"""

from openai_sim.faults import Fault
from openai_sim.profiles import PROFILES, ServerProfile
from openai_sim.server import Call, OpenAISimulator, SimConfig

__all__ = ["PROFILES", "Call", "Fault", "OpenAISimulator", "ServerProfile", "SimConfig"]
