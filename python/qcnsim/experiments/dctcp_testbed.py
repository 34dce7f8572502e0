"""dctcp-testbed: two long-lived DCTCP flows through one port at the DCTCP testbed's marking
thresholds, 1 Gb/s with K = 20 packets and 10 Gb/s with K = 65 (docs/models/dctcp.md,
``dctcp-testbed``).

:func:`post` adds the rows of :func:`qcnsim.experiments.dctcp_analysis.stats` per variant (the
queue's maximum, minimum, mean, percentiles, amplitude and period beside the §3.3 analysis at the
variant's setting) and draws ``dctcp_testbed_queue.png``.

The paper's testbed measurements (its two-flow queue figures) could not be read here as numbers:
``PUBLISHED`` holds the analysis evaluated at each setting (Q_max = K + N, the amplitude A and the
period), labelled as formulas, not as the paper's measurements.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from .dctcp_analysis import ACK, FRAME, published, queue_figure, stats


def _c_rtt(c_bps: float) -> float:
    # 100 us of propagation, a 1500 B frame and a 64 B ACK on two links each way
    rtt = 100e-6 + 2 * FRAME * 8 / c_bps + 2 * ACK * 8 / c_bps
    return c_bps * rtt / (FRAME * 8)


#: The §3.3 analysis at each setting (two flows): formulas, not the testbed's measurements.
PUBLISHED = published([("1g-k20", 2)], 20, _c_rtt(1e9)) + published([("10g-k65", 2)], 65, _c_rtt(10e9))


def post(ctx):
    out: Path = ctx.out_dir
    if not ctx.runs:
        return [], None
    table = pl.concat([stats(v, res) for v, res in ctx.runs])
    return [queue_figure(ctx.runs, out, "dctcp_testbed_queue.png")], table


#: Figure captions for the reproduction report.
CAPTIONS = {
    "dctcp_testbed_queue.png": "The queue (packets) of two long-lived DCTCP flows at 1 Gb/s with K = 20 and at "
                               "10 Gb/s with K = 65, with the analysis's Q_max = K + N and Q_min (SIGCOMM 2010, "
                               "section 3.3).",
}
