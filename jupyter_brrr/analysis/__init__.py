"""Where the time went: the span split, per-op limits, advice, per-step and per-rank figures, spreads of repeated timings."""
