"""examples/quickstart.ipynb runs top to bottom in a Jupyter kernel (nbclient), and its rich
outputs are there: HTML views, figures as PNG."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_quickstart_notebook_executes(tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="the notebook test needs the test extra (nbformat)")
    nbclient = pytest.importorskip("nbclient", reason="the notebook test needs the test extra (nbclient)")
    pytest.importorskip("ipykernel", reason="the notebook test needs the test extra (ipykernel)")
    nb = nbformat.read(REPO / "examples" / "quickstart.ipynb", as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors[0].get("evalue")
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert any("Scenario hw-hotspot-1src" in h for h in html)
    assert any("qcnsim Results" in h for h in html)
    assert any("qcnsim SweepResults" in h for h in html)
    assert len(pngs) == 2  # plot.queue and plot.sweep_metric, each shown once
