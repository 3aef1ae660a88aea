"""The compare page as a browser shows it: headless Chromium takes a screenshot of the HTML page;
the test checks it has the requested size, is not blank, and shows the highlighted ratio cells.

Skips, saying why, where no Chromium is installed (Debian/Ubuntu: `apt-get install
chromium-headless-shell`, or `chromium`; $P2PBENCH_CHROMIUM names another binary).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess

import numpy as np
import pytest
from make_fixtures import DATA
from matplotlib import image
from p2pbench_report.importers import import_nvbandwidth
from test_equivalent_configs import _load_config, synthetic_run

CANDIDATES = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
              "headless_shell")
WIDTH, HEIGHT = 1280, 7000  # tall enough for the tables at the bottom of the page
HIGHLIGHTS = {"worse": (0xF8, 0xD0, 0xCC), "better": (0xCF, 0xE8, 0xCF)}  # compare_view.HIGHLIGHT_STYLE


def chromium() -> str | None:
    named = os.environ.get("P2PBENCH_CHROMIUM")
    if named:
        return shutil.which(named) or (named if os.access(named, os.X_OK) else None)
    return next((path for name in CANDIDATES if (path := shutil.which(name))), None)


def png_size(path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and header[12:16] == b"IHDR"
    return struct.unpack(">II", header[16:24])


def screenshot(binary: str, page, png, width: int, height: int) -> None:
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--force-device-scale-factor=1", f"--window-size={width},{height}", f"--screenshot={png}",
               page.resolve().as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and png.is_file(), f"{' '.join(command)}\n{done.stderr[-2000:]}"


def test_compare_page_renders_in_chromium(cli, write_json, tmp_path):
    binary = chromium()
    if binary is None:
        pytest.skip("no Chromium binary found (tried $P2PBENCH_CHROMIUM, " + ", ".join(CANDIDATES)
                    + "): apt-get install chromium-headless-shell")
    config = dict(_load_config("nvbandwidth-equivalent.json"), methods=["ce", "ldst"])  # fewer figures: faster
    run = write_json("p2pbench.json", synthetic_run(config))
    nvb = write_json("nvbandwidth.json", import_nvbandwidth(DATA / "nvbandwidth-h200-nv18.json"))
    page, png = tmp_path / "compare.html", tmp_path / "compare.png"
    code, _, err = cli("compare", run, nvb, "--html", page)
    assert code == 0, err
    screenshot(binary, page, png, WIDTH, HEIGHT)
    assert png_size(png) == (WIDTH, HEIGHT)
    pixels = np.round(image.imread(png)[:, :, :3] * 255).astype(int)
    ink = (pixels < 250).any(axis=2)
    assert ink.mean() > 0.02, "the screenshot is (nearly) blank"
    assert len(np.unique(pixels.reshape(-1, 3)[::97], axis=0)) > 50  # text, figures, tables: many colours
    for name, colour in HIGHLIGHTS.items():
        matches = (np.abs(pixels - np.array(colour)) <= 2).all(axis=2)
        assert matches.sum() > 200, f"no {name} ratio cell highlighted in the screenshot"
