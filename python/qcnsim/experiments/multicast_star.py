"""``qcnsim reproduce multicast-star``: the seeds, figures and metric table of the multicast
star experiment (see :mod:`qcnsim.experiments._multicast`)."""

from __future__ import annotations

from ._multicast import HEADLINE  # noqa: F401  (reproduce reads it)
from ._multicast import post as _post

# six sources share each 1 Gb/s receiver port: fair share 1 G / 6
FAIR = {"G": 1e9 / 6}

_S = "002"  # the multicast QCN study, sec. 4.2-4.3 (star topology)
#: The study's figures (its text quotes them), beside qcnsim's mean over seeds (802.1Q CP).
PUBLISHED = [
    dict(metric="mc_feedback_rate (mean over seeds)", variant="standard-qeq25", value=13.16, unit="%",
         source=f"{_S}: 'when the Qeq=25 frames it is equal to 13.16%'"),
    dict(metric="mc_feedback_rate (mean over seeds)", variant="standard-qeq50", value=11.98, unit="%",
         source=f"{_S}: 'when the Qeq=50 frames this rate is equal to 11.98% of the total frame stream'"),
    dict(metric="mc_feedback_rate (mean over seeds)", variant="standard-qeq75", value=3.8, unit="%",
         source=f"{_S}: 'when the Qeq=75 frames the feedback rate is equal to 3.8% of the total frame stream'"),
    dict(metric="mc_feedback_rate (mean over seeds)", variant="representative-qeq25", value=8.04, unit="%",
         source=f"{_S}: 'when the Qeq=25 frames it is equal to 8.04%'"),
    dict(metric="mc_feedback_rate (mean over seeds)", variant="representative-qeq50", value=5.63, unit="%",
         source=f"{_S}: 'when the Qeq=50 frames this rate is equal to 5.63%'"),
    dict(metric="mc_feedback_rate (mean over seeds)", variant="representative-qeq75", value=2.27, unit="%",
         source=f"{_S}: 'when the Qeq=75 frames the feedback rate is equal to 2.27%'"),
    dict(metric="mc_loss_rate (mean over seeds)", variant="standard-qeq25", value=0.0, unit="%",
         source=f"{_S}: 'when the Qeq=25 frames the loss rate is equal to 0% of the total frame stream'"),
    dict(metric="mc_loss_rate (mean over seeds)", variant="standard-qeq50", value=3.15, unit="%",
         source=f"{_S}: 'when the Qeq=50 frames this rate is equal to 3.15% of the total frame stream'"),
    dict(metric="mc_loss_rate (mean over seeds)", variant="standard-qeq75", value=26.59, unit="%",
         source=f"{_S}: 'when the Qeq=75 frames it is equal to 26.59% of the total frame stream'"),
    dict(metric="mc_loss_rate (mean over seeds)", variant="representative-qeq25", value=0.0, unit="%",
         source=f"{_S}: 'when the Qeq=25 frames the loss rate is equal to 0% of the total frame stream'"),
    dict(metric="mc_loss_rate (mean over seeds)", variant="representative-qeq50", value=2.17, unit="%",
         source=f"{_S}: 'when the Qeq=50 frames this rate is equal to 2.17%'"),
    dict(metric="mc_loss_rate (mean over seeds)", variant="representative-qeq75", value=29.98, unit="%",
         source=f"{_S}: 'when the Qeq=75 frames it is equal to 29.98%'"),
]

#: The same published values beside the standard and enhanced schemes under the reading the control
#: (the standard scheme) matches best (readings.md; docs/models/multicast.md, "Identifying the
#: study's CP on its control").
PUBLISHED += [dict(e, metric=e["metric"].replace("(mean over seeds)", "(control's best reading)"))
              for e in list(PUBLISHED)]


def post(ctx):
    return _post(ctx, FAIR, PUBLISHED)


#: Figure captions for the reproduction report.
CAPTIONS = {
    "cr_vs_time.png": "Current rate of every source over time (first seed), one panel per scheme and Qeq; dashed: "
                      "the fair share.",
    "metrics_vs_qeq.png": "Each multicast metric against Qeq for the standard and representative schemes: mean and "
                          "standard deviation over the seeds.",
    "fbhat_trace_802.1Q.png": "The representative scheme as published (802.1Q CP), one panel per Qeq: F̂b at each RP "
                              "(Algorithm 1 replayed on the CNMs it received) and each CP's qntzFb at every queue "
                              "sample. F̂b settles above what the CPs' queues can produce and never reaches 63, so no "
                              "CP is representative and the sources run uncontrolled.",
}
