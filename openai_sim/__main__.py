"""Run the fake: `python -m openai_sim serve [--port N]`, or around a command:
`python -m openai_sim run [--server ollama] -- wiki demo`, which starts it, runs the command with the
environment aimed at it (WIKI_LLM=openai-compatible, WIKI_OPENAI_BASE_URL, WIKI_OPENAI_SERVER and a
model it serves as WIKI_MODEL_ID), and stops it when the command ends."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from openai_sim.profiles import PROFILES
from openai_sim.server import OpenAISimulator, SimConfig

DEFAULT_MODEL = "qwen2.5:14b"
DEFAULT_PORT = 11435  # beside Ollama's 11434, so both can run
# The servers the product knows by name; a fake with another profile is "other" to it.
_KNOWN_SERVERS = ("ollama", "vllm", "lm-studio", "llama-cpp")


def environment(simulator: OpenAISimulator, profile: str, model: str) -> dict[str, str]:
    env = dict(os.environ, WIKI_LLM="openai-compatible", WIKI_OPENAI_BASE_URL=simulator.base_url,
               WIKI_OPENAI_SERVER=profile if profile in _KNOWN_SERVERS else "other", WIKI_MODEL_ID=model)
    if simulator.config.api_keys:
        env["WIKI_OPENAI_API_KEY"] = next(iter(simulator.config.api_keys))
    return env


def _config(args: argparse.Namespace) -> SimConfig:
    config = SimConfig(profile=PROFILES[args.server], ttft_seconds=args.ttft,
                       output_tokens_per_second=args.tokens_per_second)
    config.models.add(args.model)
    if args.api_key:
        config.api_keys = {args.api_key}
    return config


async def _run(command: list[str], config: SimConfig, model: str) -> int:
    simulator = OpenAISimulator(config)
    await simulator.start()
    print(f"OpenAI-compatible fake ({config.profile.name}) on {simulator.base_url}, serving "
          f"WIKI_LLM=openai-compatible WIKI_MODEL_ID={model}", file=sys.stderr, flush=True)
    try:
        process = await asyncio.create_subprocess_exec(*command, env=environment(simulator, config.profile.name,
                                                                                 model))
        code = await process.wait()
    finally:
        await simulator.stop()
    answered = [call for call in simulator.calls if call.status == 200]
    modes = sorted({call.mode for call in answered if call.mode})
    print(f"OpenAI-compatible fake answered {len(answered)} model calls ({sum(c.prompt_tokens for c in answered)} "
          f"prompt, {sum(c.completion_tokens for c in answered)} completion tokens; structured output: "
          f"{', '.join(modes) or 'none'}); {len(simulator.invalid_requests())} invalid requests", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m openai_sim", description=__doc__)
    sub = parser.add_subparsers(dest="action", required=True)
    serve = sub.add_parser("serve", help="serve until interrupted")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT)
    run = sub.add_parser("run", help="serve while a command runs against it")
    run.add_argument("command", nargs="+")
    for each in (serve, run):
        each.add_argument("--server", choices=sorted(PROFILES), default="ollama",
                          help="which server to play (what it accepts: openai_sim/profiles.py)")
        each.add_argument("--model", default=DEFAULT_MODEL, help="a chat model it serves")
        each.add_argument("--api-key", default="", help="a key it asks for (default: none, as a local server)")
        each.add_argument("--ttft", type=float, default=0.0, help="seconds to the first token")
        each.add_argument("--tokens-per-second", type=float, default=0.0, help="output rate (0: instant)")
    args = parser.parse_args(argv)
    config = _config(args)
    if args.action == "serve":
        return OpenAISimulator(config).serve_until_interrupted(
            args.port, lambda url: f"OpenAI-compatible fake ({config.profile.name}) on {url} (WIKI_OPENAI_BASE_URL); "
                                   f"models: {', '.join(sorted(config.models))}")
    return asyncio.run(_run(args.command, config, args.model))


if __name__ == "__main__":
    sys.exit(main())
