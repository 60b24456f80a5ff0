"""A headless Chromium for checks and screenshots of the web pages (Selenium over the system's
``chromium`` and ``chromedriver``; nothing is downloaded).

``python -m rummyzoo.cli.browser RUN OUT_DIR`` takes the README's screenshots of a training
run: its TensorBoard dashboard, the replay page of its last sample game and a game in progress
in ``rummyzoo serve``.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["browser_missing", "free_port", "headless_chromium", "serve_in_thread", "tensorboard"]

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def _binary(names: tuple[str, ...]) -> str | None:
    return next((path for name in names if (path := shutil.which(name))), None)


def browser_missing() -> str | None:
    """Why no headless browser can run here (None when one can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    if _binary(CHROMIUM_NAMES) is None:
        return "no chromium binary on PATH (apt-get install chromium)"
    if _binary(("chromedriver",)) is None:
        return "no chromedriver on PATH (apt-get install chromium-driver)"
    return None


@contextlib.contextmanager
def headless_chromium(width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A Selenium driver of a headless Chromium (closed on exit).

    :raises RuntimeError: what is missing (:func:`browser_missing`), before anything starts."""
    why = browser_missing()
    if why is not None:
        raise RuntimeError(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    # a profile of our own, removed once the browser has quit: with the one chromedriver makes,
    # Chromium left its process singleton's folder (org.chromium.Chromium.*) in the temp dir
    with tempfile.TemporaryDirectory(
        prefix="rummyzoo-chromium-", ignore_cleanup_errors=True
    ) as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = _binary(CHROMIUM_NAMES)
        for arg in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--window-size={width},{height}",
            f"--user-data-dir={profile}",
        ):
            options.add_argument(arg)
        driver = webdriver.Chrome(options=options, service=Service(_binary(("chromedriver",))))
        try:
            yield driver
        finally:
            driver.quit()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve_in_thread(runs_dir: str | Path) -> Iterator[str]:
    """``rummyzoo serve`` on a free local port in a thread; yields its base URL."""
    from werkzeug.serving import make_server

    from rummyzoo.cli.serve import create_app

    server = make_server("127.0.0.1", 0, create_app(runs_dir), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


@contextlib.contextmanager
def tensorboard(logdir: str | Path, timeout: float = 90.0) -> Iterator[str]:
    """TensorBoard on ``logdir`` at a free local port, started as a process; yields its URL
    once its data has loaded (the scalar tags are listed)."""
    port = free_port()
    command = [
        sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--port", str(port),
        "--host", "127.0.0.1", "--reload_interval", "1",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"tensorboard exited: {process.stderr.read().decode()[-2000:]}"  # type: ignore[union-attr]
                )
            try:
                with urllib.request.urlopen(f"{url}/data/plugin/scalars/tags", timeout=5) as r:
                    if r.status == 200 and len(r.read()) > 2:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"tensorboard did not serve {logdir} within {timeout:.0f} s")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def screenshots(run: str | Path, out_dir: str | Path) -> list[Path]:
    """The README's screenshots of a run (see the module docstring).

    :raises FileNotFoundError: the run has no sample games; :raises RuntimeError: no browser
        (what is missing), both before anything is written."""
    run, out_dir = Path(run).resolve(), Path(out_dir)
    samples = sorted((run / "games").glob("sample_*.json"))
    if not samples:
        raise FileNotFoundError(f"no sample games in {run / 'games'} (train the run first)")
    why = browser_missing()
    if why is not None:
        raise RuntimeError(why)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from rummyzoo.cli.viewer import write_replay_html

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with headless_chromium(1400, 1000) as driver:
        with tensorboard(run / "tb") as url:
            driver.get(f"{url}/?darkMode=false#custom_scalars")
            time.sleep(8)  # the charts draw after their data arrives
            path = out_dir / "dashboard.png"
            driver.save_screenshot(str(path))
            written.append(path)
            driver.get(f"{url}/#images")
            time.sleep(6)
            path = out_dir / "dashboard_cross_table.png"
            driver.save_screenshot(str(path))
            written.append(path)
        page = write_replay_html(samples[-1], out_dir / "replay.html")
        driver.get(page.resolve().as_uri())
        for _ in range(12):
            driver.find_element(By.ID, "next").click()
        path = out_dir / "replay.png"
        driver.save_screenshot(str(path))
        written.append(path)
        page.unlink()
        with serve_in_thread(run.parent) as base:
            driver.get(f"{base}/play")
            driver.find_element(By.ID, "variant").send_keys("Ditch Rummy")
            driver.find_element(By.ID, "seed").send_keys("7")
            driver.find_element(By.ID, "opponent").send_keys("ditch.smart")
            driver.find_element(By.ID, "start").click()
            wait = WebDriverWait(driver, 30)
            for _ in range(6):
                wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".move-button"))
                driver.find_elements(By.CSS_SELECTOR, ".move-button")[0].click()
                time.sleep(0.3)
            wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".move-button"))
            path = out_dir / "play.png"
            driver.save_screenshot(str(path))
            written.append(path)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m rummyzoo.cli.browser RUN OUT_DIR")
    try:
        shots = screenshots(sys.argv[1], sys.argv[2])
    except (FileNotFoundError, RuntimeError) as exc:
        sys.exit(f"error: {exc}")
    for shot in shots:
        print(f"wrote {shot}")
