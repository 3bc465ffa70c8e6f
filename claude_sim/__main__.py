"""Run the simulator: `python -m claude_sim serve [--port N]`, or around a command:
`python -m claude_sim run [--provider anthropic|bedrock] -- wiki demo`, which starts it, runs the
command with the environment aimed at it (WIKI_LLM, the base URL, a key the simulator accepts),
and stops it when the command ends."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from claude_sim.lies import ENV_LIES
from claude_sim.server import ClaudeSimulator, SimConfig


def _share(value: str) -> float:
    share = float(value)
    if not 0.0 <= share <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a share from 0 to 1 (got {value})")
    return share


def _environment(provider: str, url: str, config: SimConfig) -> dict[str, str]:
    env = dict(os.environ, WIKI_LLM=provider)
    if provider == "bedrock":
        access_key, secret = next(iter(config.aws_credentials.items()))
        env.update(ANTHROPIC_BEDROCK_BASE_URL=url, AWS_REGION=config.region, AWS_ACCESS_KEY_ID=access_key,
                   AWS_SECRET_ACCESS_KEY=secret, AWS_EC2_METADATA_DISABLED="true")
        env.pop("AWS_BEARER_TOKEN_BEDROCK", None)
    else:
        env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY=next(iter(config.api_keys)))
    return env


async def _run(provider: str, command: list[str], config: SimConfig) -> int:
    simulator = ClaudeSimulator(config)
    url = await simulator.start()
    print(f"Claude simulator on {url}, serving WIKI_LLM={provider}", file=sys.stderr, flush=True)
    try:
        process = await asyncio.create_subprocess_exec(*command, env=_environment(provider, url, config))
        code = await process.wait()
    finally:
        await simulator.stop()
    calls = [call for call in simulator.calls if call.usage is not None]
    print(f"Claude simulator answered {len(calls)} model calls "
          f"({sum(c.usage.input_tokens for c in calls)} input, {sum(c.usage.output_tokens for c in calls)} output "
          "tokens)", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m claude_sim", description=__doc__)
    sub = parser.add_subparsers(dest="action", required=True)
    serve = sub.add_parser("serve", help="serve until interrupted")
    serve.add_argument("--port", type=int, default=8790)
    run = sub.add_parser("run", help="serve while a command runs against it")
    run.add_argument("--provider", choices=("anthropic", "bedrock"), default="anthropic")
    run.add_argument("command", nargs="+")
    for each in (serve, run):
        each.add_argument("--ttft", type=float, default=0.0, help="seconds to the first token")
        each.add_argument("--batch-seconds", type=float, default=0.0,
                          help="seconds a Message Batch stays in_progress before its results are ready")
        each.add_argument("--tokens-per-second", type=float, default=0.0, help="output rate (0: instant)")
        each.add_argument("--lies", type=_share, default=None, metavar="F",
                          help="share of a leaf plan's lines the simulated model makes lies, six kinds in turn "
                               f"(0-1; default ${ENV_LIES} or 0)")
    args = parser.parse_args(argv)
    config = SimConfig(ttft_seconds=args.ttft, output_tokens_per_second=args.tokens_per_second,
                       batch_processing_seconds=args.batch_seconds)
    if args.lies is not None:
        config.lies = args.lies
    if args.action == "serve":
        return ClaudeSimulator(config).serve_until_interrupted(
            args.port, lambda url: f"Claude simulator on {url} (ANTHROPIC_BASE_URL / ANTHROPIC_BEDROCK_BASE_URL); "
                                   f"API key {next(iter(config.api_keys))!r}")
    return asyncio.run(_run(args.provider, args.command, config))


if __name__ == "__main__":
    sys.exit(main())
