"""``qcnsim reproduce multicast-star``: the seeds, figures and metric table of the multicast
star experiment (see :mod:`qcnsim.experiments._multicast`)."""

from __future__ import annotations

from ._multicast import post as _post

# six sources share each 1 Gb/s receiver port: fair share 1 G / 6
FAIR = {"G": 1e9 / 6}


def post(ctx):
    return _post(ctx, FAIR)
