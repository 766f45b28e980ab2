#!/usr/bin/env python3
"""Renders the sample's error-analysis page in headless Chromium and checks it as a reader would see it.

Aligns data/sample twice (the default, with an explain file, and --reranker none), writes `termalign report` of the
two runs, opens it in chromium-headless-shell through the DevTools protocol (--remote-debugging-pipe: no port, no
third-party module), and checks that the page loaded with no console error, no exception and no request beyond
itself; that its scores equal `termalign evaluate --json --breakdown`; that the search box filters the term table;
and that its screenshot (saved as PNG) is not blank. Exits 77 (skipped) where no Chromium is installed.

Usage: check_report.py TERMALIGN_CLI SOURCE_DIR WORK_DIR SCREENSHOT_PNG
"""
import json
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

SKIP = 77
BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")


def find_browser():
    override = os.environ.get("TERMALIGN_CHROMIUM")
    if override:
        return override if os.access(override, os.X_OK) else None
    for name in BROWSERS:
        path = shutil.which(name) or (f"/usr/bin/{name}" if os.access(f"/usr/bin/{name}", os.X_OK) else None)
        if path:
            return path
    return None


def run(command):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stderr}")
    return result.stdout


class DevTools:
    """Chromium driven over --remote-debugging-pipe: JSON messages ended by NUL, commands on fd 3, replies on fd 4."""

    def __init__(self, binary, profile):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def give_pipes():
            # Copies above every open descriptor first, so that dup2 onto 3 and 4 never clobbers one of them.
            command, reply = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(command, 3)
            os.dup2(reply, 4)

        self.process = subprocess.Popen(
            [binary, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--hide-scrollbars", "--force-device-scale-factor=1",
             f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=give_pipes, close_fds=False)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method:
                    return event
            self.events.append(self._read_message(deadline))

    def drain(self, seconds):
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._read_message(deadline))
        except TimeoutError:
            pass

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:  # the browser may be gone already; it is killed below
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def png_pixels(data):
    """Width, height, channels and the unfiltered rows of an 8-bit RGB or RGBA PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    at, idat = 8, b""
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour_type = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    if depth != 8 or colour_type not in (2, 6):
        raise ValueError(f"unexpected PNG format: depth {depth}, colour type {colour_type}")
    channels = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(channels, stride):
                row[i] = (row[i] + row[i - channels]) & 0xFF
        elif kind == 2:
            row = bytearray((a + b) & 0xFF for a, b in zip(row, previous))
        elif kind == 3:
            for i in range(stride):
                left = row[i - channels] if i >= channels else 0
                row[i] = (row[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = row[i - channels] if i >= channels else 0
                b, c = previous[i], previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(row)
        previous = row
    return width, height, channels, rows


def check_not_blank(path):
    width, height, channels, rows = png_pixels(open(path, "rb").read())
    colours, ink, vivid = set(), 0, 0
    for row in rows:
        for x in range(0, width * channels, channels):
            r, g, b = row[x], row[x + 1], row[x + 2]
            colours.add((r, g, b))
            ink += r < 235 or g < 235 or b < 235
            vivid += max(r, g, b) - min(r, g, b) > 80
    pixels = width * height
    print(f"screenshot {path}: {width} x {height}, {len(colours)} colours, {100 * ink / pixels:.1f} % ink, "
          f"{vivid} vivid pixels")
    assert len(colours) >= 64, "the screenshot has few colours: a blank page?"
    assert ink >= 0.03 * pixels, "the screenshot is nearly all white"
    assert vivid >= 5000, "the screenshot shows no coloured chart"


PAGE_FIGURES = """JSON.stringify(Array.from(document.querySelectorAll('td[data-key]'),
    c => [Number(c.dataset.run), c.dataset.key, c.textContent]))"""
SEARCH = """(() => { const box = document.getElementById('term-search');
  const rows = Array.from(document.querySelectorAll('#term-table tbody tr'));
  const term = rows[rows.length - 1].cells[0].textContent;
  box.value = term; box.dispatchEvent(new Event('input'));
  const shown = rows.filter(r => r.style.display !== 'none').length;
  box.value = ''; box.dispatchEvent(new Event('input'));
  // A chart's marks are drawn when they sit right in their svg and take room on the screen.
  const marks = Array.from(document.querySelectorAll('svg.chart polyline, svg.chart rect[fill]')).filter(
      m => m.parentNode.tagName === 'svg' && m.getBoundingClientRect().width > 0);
  return JSON.stringify([rows.length, shown, rows.filter(r => r.style.display !== 'none').length,
                         document.querySelectorAll('svg.chart').length, marks.length]); })()"""


def expected_cell(run, key):
    """A summary or breakdown cell as the page prints it, from `evaluate --json`'s object of the run."""
    value = run
    for part in key.split("."):
        value = value.get(part, "") if isinstance(value, dict) else ""
    if isinstance(value, float) or key in ("ap", "precision", "recall", "f1", "ap_interpolated", "ap_capped") \
            or key.startswith("p_at") or key.endswith(("recall", ".ap")):
        return f"{float(value):.6f}"
    return str(value)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    cli, source, work, screenshot = sys.argv[1:]
    browser = find_browser()
    if browser is None:
        print("SKIPPED: no Chromium (Debian chromium-headless-shell) is installed")
        return SKIP
    os.makedirs(work, exist_ok=True)
    sample = os.path.join(source, "data", "sample")
    vectors = [f"--src-vectors={source}/models/sample/en.vec", f"--tgt-vectors={source}/models/sample/fr.vec"]
    default, plain = os.path.join(work, "default.tsv"), os.path.join(work, "plain.tsv")
    explain, page = os.path.join(work, "default.explain.tsv"), os.path.join(work, "report.html")
    run([cli, "-q", "align", "--data-dir", sample, *vectors, "--out", default, "--explain", explain])
    run([cli, "-q", "align", "--data-dir", sample, *vectors, "--reranker", "none", "--out", plain])
    run([cli, "-q", "report", "--data-dir", sample, "--pred", default, "--pred", plain, "--explain", explain,
         "--out", page])
    evaluation = json.loads(run([cli, "-q", "evaluate", "--gold", f"{sample}/terms-en-fr.txt", "--src-terms",
                                 f"{sample}/terms-en.txt", "--tgt-terms", f"{sample}/terms-fr.txt", "--breakdown",
                                 "--json", "--pred", default, "--pred", plain]))

    with tempfile.TemporaryDirectory() as profile:
        tools = DevTools(browser, profile)
        try:
            target = tools.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = tools.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for method in ("Runtime.enable", "Log.enable", "Page.enable", "Network.enable"):
                tools.call(method, session=session)
            tools.call("Emulation.setDeviceMetricsOverride",
                       {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=session)
            url = "file://" + os.path.abspath(page)
            tools.call("Page.navigate", {"url": url}, session=session)
            tools.wait_for("Page.loadEventFired")
            tools.drain(0.5)
            figures = json.loads(tools.call("Runtime.evaluate", {"expression": PAGE_FIGURES, "returnByValue": True},
                                            session=session)["result"]["value"])
            listed, found, restored, charts, marks = json.loads(tools.call(
                "Runtime.evaluate", {"expression": SEARCH, "returnByValue": True}, session=session)["result"]["value"])
            height = tools.call("Page.getLayoutMetrics", session=session)["cssContentSize"]["height"]
            shot = tools.call("Page.captureScreenshot",
                              {"format": "png", "captureBeyondViewport": True,
                               "clip": {"x": 0, "y": 0, "width": 1280, "height": min(height, 2400), "scale": 1}},
                              session=session)
            tools.drain(0.2)
        finally:
            tools.close()

    import base64
    with open(screenshot, "wb") as out:
        out.write(base64.b64decode(shot["data"]))
    problems = []
    for event in tools.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert", "warning"):
            problems.append(f"console {params['type']}: {params.get('args')}")
        elif method == "Runtime.exceptionThrown":
            problems.append(f"exception: {params.get('exceptionDetails')}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
            problems.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}")
        elif method == "Network.requestWillBeSent" and params.get("request", {}).get("url") != url:
            problems.append(f"request beyond the page: {params['request'].get('url')}")
    assert not problems, "\n".join(problems)

    assert len(evaluation) == 2 and figures, "no figures on the page"
    for run_index, key, text in figures:
        expected = expected_cell(evaluation[run_index], key)
        assert text == expected, f"run {run_index + 1} {key}: the page shows {text}, evaluate gives {expected}"
    keys = {key for _, key, _ in figures}
    assert {"ap", "ap_interpolated", "precision", "recall", "f1", "p_at.10", "cap", "breakdown.far.ap"} <= keys
    assert charts == 4, f"{charts} charts on the page"
    # Two runs: a line each on the two curves, a bar each per subset (5) on the two bar charts.
    assert marks == 2 * 2 + 2 * 5 * 2, f"{marks} chart lines and bars drawn"
    assert 0 < found < listed and restored == listed, f"search: {found} of {listed} rows, then {restored}"
    print(f"{len(figures)} figures equal evaluate --json; {charts} charts, {marks} lines and bars; search kept {found} of {listed} rows")
    check_not_blank(screenshot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
