"""The adversarial compile eval: a corpus generator with its ground truth, and the metrics it scores.

Outside the product layers (like bench/ and chaos/): product code never imports it. `make eval` runs
`python -m evals`; tests/evals runs a small corpus through the same code.
"""
