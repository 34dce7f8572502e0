"""Per-experiment post-processing for ``qcnsim reproduce``.

A module ``qcnsim.experiments.<name>`` (the scenario name with ``-`` written as ``_``) may define
``post(ctx: qcnsim.reproduce.ExperimentContext) -> (list of figure paths, polars DataFrame or
None)``. ``reproduce`` calls it after running every variant of the scenario and drawing the
common figures; the returned rows are appended to the experiment's summary.
"""
