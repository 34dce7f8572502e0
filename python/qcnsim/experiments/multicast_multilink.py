"""``qcnsim reproduce multicast-multilink``: the seeds, figures and metric table of the
multiple-bottleneck multicast experiment (see :mod:`qcnsim.experiments._multicast`)."""

from __future__ import annotations

from ._multicast import post as _post

# max-min fair shares on the chain (all links 1 Gb/s, every source offers 200 Mb/s): G1 and G2
# (twelve sources) share sw2->sw3; G3 (six sources) is alone on sw3->R3/R4.
FAIR = {"G1, G2": 1e9 / 12, "G3": 1e9 / 6}


def post(ctx):
    return _post(ctx, FAIR)
