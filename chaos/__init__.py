"""The fault suite: real faults injected into real processes, and figures (`make chaos`).

Every scenario runs against a Temporal dev server and an embedded Postgres the suite owns (so it
can stop them), with workers in processes of their own, on the 700-memory sample with the scripted
planner, and compares the final wiki with a fault-free reference compile of the same memories.
`python -m chaos` writes docs/RELIABILITY.md.
"""
