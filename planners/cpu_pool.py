"""CPU-bound steps run off the event loop, on a few threads of their own.

A worker runs its activities as coroutines on one event loop, and that loop also sends every
activity's heartbeats. A step that computes for seconds on the loop (the scripted planner's plan,
a section rebuilt from thousands of memories, the grounding of a plan's lines, the static
embedding model) stops every other activity's heartbeats for that long: past the heartbeat
timeout Temporal cancels them and runs them again, and on a busy machine that redoes the same
work over and over. Such steps go through `off_loop`, which runs them on this pool and awaits them,
so the loop stays free to heartbeat and to poll.

Threads, not processes. Measured on the 10,000-memory sample (bench/offload.py, the bootstrap part),
threads keep the loop's longest stall well under a second, and a process pool computes a batch of
section rewrites somewhat faster (two interpreters, no GIL between them) once its inputs are pickled
across. It is not used because a child process keeps memoised functions of memory text (the content
words, the fact rules' readings) where a forget cannot reach them: a forget empties this process's
caches (domain/process_caches.py), not another's. The pool has one thread per CPU this process may
run on: under the GIL more threads add no throughput, only a longer wait for the loop each time it
needs the interpreter.

The functions run here must not share mutable state between calls (pure functions of their input,
memoised caches that are thread-safe, or per-thread objects: domain/sentences.py keeps one sentence
splitter per thread).
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_threads: int | None = None


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity, which a container's cpuset narrows)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def cpu_threads() -> int:
    """The pool's size: set by `configure`, else one thread per available CPU."""
    return _threads or available_cpus()


def configure(threads: int | None) -> None:
    """Size the pool (None: one thread per CPU). Only before its first use: a running pool keeps its size."""
    global _threads
    with _lock:
        if _pool is None:
            _threads = threads


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=cpu_threads(), thread_name_prefix="wiki-cpu")
        return _pool


async def off_loop(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`fn(*args, **kwargs)` on the CPU pool, awaited. If the awaiting task is cancelled the step still
    runs to its end on its thread (a thread cannot be interrupted); its result is dropped."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor(), functools.partial(fn, *args, **kwargs))
