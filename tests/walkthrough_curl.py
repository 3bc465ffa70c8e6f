"""A stand-in for the few curl options the README's first session uses, for a machine that has only
Python: tests/test_walkthrough.py puts it on PATH as `curl` when there is no curl. Options: -s, -H,
-d, --retry N, --retry-delay S, --retry-connrefused (without it a refused connection is not retried,
as with curl)."""

from __future__ import annotations

import argparse
import sys
import time

import httpx


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="curl")
    parser.add_argument("url")
    parser.add_argument("-s", "--silent", action="store_true")
    parser.add_argument("-H", "--header", action="append", default=[])
    parser.add_argument("-d", "--data")
    parser.add_argument("--retry", type=int, default=0)
    parser.add_argument("--retry-delay", type=float, default=1.0)
    parser.add_argument("--retry-connrefused", action="store_true")
    args = parser.parse_args(argv)
    headers = dict(header.split(":", 1) for header in args.header)
    headers = {name.strip(): value.strip() for name, value in headers.items()}
    method = "POST" if args.data is not None else "GET"
    for attempt in range(args.retry + 1):
        try:
            response = httpx.request(method, args.url, headers=headers, content=args.data, timeout=60)
        except httpx.ConnectError:
            if not args.retry_connrefused or attempt == args.retry:
                print("curl: (7) Failed to connect", file=sys.stderr)
                return 7
            time.sleep(args.retry_delay)  # curl's own retry delay, between attempts to connect
            continue
        sys.stdout.write(response.text)
        return 0
    return 7


if __name__ == "__main__":
    sys.exit(main())
