"""examples/quickstart.ipynb runs top to bottom in a Jupyter kernel (nbclient), and its rich
outputs are there: HTML views, figures as PNG."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _execute(name: str, tmp_path):
    """Run examples/NAME top to bottom in a Jupyter kernel; return its code cells' outputs."""
    nbformat = pytest.importorskip("nbformat", reason="the notebook test needs the test extra (nbformat)")
    nbclient = pytest.importorskip("nbclient", reason="the notebook test needs the test extra (nbclient)")
    pytest.importorskip("ipykernel", reason="the notebook test needs the test extra (ipykernel)")
    nb = nbformat.read(REPO / "examples" / name, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors[0].get("evalue")
    return outputs


def test_quickstart_notebook_executes(tmp_path):
    outputs = _execute("quickstart.ipynb", tmp_path)
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert any("Scenario hw-hotspot-1src" in h for h in html)
    assert any("qcnsim Results" in h for h in html)
    assert any("qcnsim SweepResults" in h for h in html)
    assert len(pngs) == 2  # plot.queue and plot.sweep_metric, each shown once


def test_incast_dcqcn_notebook_executes(tmp_path):
    """examples/incast_dcqcn.ipynb: a leaf-spine incast, PFC + DCQCN vs PFC only, and a sweep over
    three seeds. The notebook asserts what it promises (every message finishes with no drop, the
    queue at the incast port lower with DCQCN in one run, on average over the seeds and seed by
    seed, n = 3 for the FCT statistics); here: it ran, and showed its tables and figures."""
    import re

    outputs = _execute("incast_dcqcn.ipynb", tmp_path)
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    finished = re.findall(r"(PFC only|PFC \+ DCQCN): (\d+) of (\d+) messages finished, (\d+) frames dropped", text)
    assert [f[0] for f in finished] == ["PFC only", "PFC + DCQCN"]
    assert all(int(done) == int(total) > 0 and dropped == "0" for _, done, total, dropped in finished)
    assert "median FCT with DCQCN / with PFC only:" in text
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("Scenario incast-dcqcn" in h for h in html)
    assert any("qcnsim SweepResults" in h for h in html)
    assert any("ci95_low" in h and "p99" in h for h in html)  # the FCT statistics with their intervals
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(pngs) == 4  # queue, throughput, rates, the sweep's metric: each shown once
