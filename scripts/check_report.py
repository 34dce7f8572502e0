#!/usr/bin/env python3
"""Open a qcnsim report (report.html) in headless Chromium and say how it reads.

    python scripts/check_report.py results/all/report.html [--shots DIR]

Checks that Chromium renders it (the DOM it builds has the overview table and one section per
experiment), writes two screenshots into DIR (default: beside the report): ``first-screen.png``
(1280x900, what a reader sees first) and ``full-page.png``; prints the file size, the rendered
height of the page with the <details> sections closed as shipped, and how far down the overview
ends. Exit status 1 if the overview is missing or does not fit the first screen, 2 if no Chromium
is installed (``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WIDTH, FIRST_SCREEN = 1280, 900
TALL = 16000  # the full-page screenshot's window height; a taller page is reported as ">= TALL"


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        p = shutil.which(name)
        if p:
            return p
    return ""


def _run(exe: str, args, timeout: int = 120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="qcnsim-chromium-") as profile:
        return subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                               f"--user-data-dir={profile}", *args], capture_output=True, text=True,
                              timeout=timeout)


def content_height(png: Path) -> int:
    """Rows from the top to the last row that is not plain background."""
    import numpy as np
    from matplotlib import image

    img = image.imread(str(png))[..., :3]
    bg = img[-1, -1]
    rows = np.where((np.abs(img - bg) > 0.02).any(axis=(1, 2)))[0]
    return int(rows[-1]) + 1 if rows.size else 0


def check(report: Path, shots: Path) -> dict:
    exe = chromium()
    if not exe:
        raise FileNotFoundError("no Chromium found: apt-get install chromium")
    url = report.resolve().as_uri()
    dom = _run(exe, ["--dump-dom", url])
    if dom.returncode != 0:
        raise RuntimeError(f"chromium --dump-dom failed: {dom.stderr[-500:]}")
    html = dom.stdout
    shots.mkdir(parents=True, exist_ok=True)
    first, full = shots / "first-screen.png", shots / "full-page.png"
    _run(exe, [f"--window-size={WIDTH},{FIRST_SCREEN}", f"--screenshot={first}", url])
    _run(exe, [f"--window-size={WIDTH},{TALL}", f"--screenshot={full}", url])
    # Where the overview ends: render the report cut right after the overview table.
    src = report.read_text(encoding="utf-8")
    cut = src.find("</table>", src.find("id='overview'"))
    overview_px = None
    if cut > 0:
        with tempfile.TemporaryDirectory() as d:
            head = Path(d) / "overview.html"
            head.write_text(src[:cut + len("</table>")] + "</body></html>", encoding="utf-8")
            shot = Path(d) / "overview.png"
            _run(exe, [f"--window-size={WIDTH},{TALL}", f"--screenshot={shot}", head.as_uri()])
            overview_px = content_height(shot) if shot.is_file() else None
    return {
        "bytes": report.stat().st_size,
        "overview_in_dom": "id=\"overview\"" in html or "id='overview'" in html,
        "sections": len(re.findall(r"<h2 id=\"x-", html)),
        "height_px": content_height(full) if full.is_file() else None,
        "overview_px": overview_px,
        "first_screen": str(first),
        "full_page": str(full),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--shots", type=Path, help="where to write the screenshots (default: beside the report)")
    a = ap.parse_args(argv)
    try:
        r = check(a.report, a.shots or a.report.parent)
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    tall = f">= {TALL}" if r["height_px"] and r["height_px"] >= TALL else r["height_px"]
    print(f"{a.report}: {r['bytes'] / 1e6:.2f} MB, {r['sections']} experiment section(s), page height {tall} px "
          f"at {WIDTH} px wide (folded sections closed), overview ends at {r['overview_px']} px "
          f"(first screen: {FIRST_SCREEN} px); screenshots: {r['first_screen']}, {r['full_page']}")
    ok = r["overview_in_dom"] and r["overview_px"] is not None and r["overview_px"] <= FIRST_SCREEN
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
