"""Fixtures for the reader's local path: JupyterLab as `make lab` sets it up, in a browser."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from posenc_site.sitecheck import chromium

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"

TOKEN = "posenc-test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on 127.0.0.1 over a folder, started by `make lab` itself, or by
    ``jupyter`` (the path to one, e.g. a reader's fresh environment's) as a reader would."""

    def __init__(self, folder: Path, home: Path, jupyter: Path | None = None,
                 env: dict | None = None):
        self.folder, self.port = folder, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(env or os.environ, HOME=str(home), JUPYTER_CONFIG_DIR=str(home / "config"),
                   JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
                   JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"))
        # the README's knobs; make adds --allow-root when run as root, as in a container
        lab_args = (f"--no-browser --IdentityProvider.token={TOKEN} "
                    "--LabApp.expose_app_in_browser=True")
        if jupyter is None:
            # -o: `make local` has just brought .venv up to date; never reinstall it here
            args = ["make", "--no-print-directory", "-o", ".venv/.installed", "lab",
                    f"LAB_PORT={self.port}", f"LAB_DIR={folder}", f"LAB_ARGS={lab_args}"]
        else:
            args = [str(jupyter), "lab", f"--port={self.port}", "--ip=127.0.0.1",
                    f"--notebook-dir={folder}", *lab_args.split()]
            if os.getuid() == 0:
                args.append("--allow-root")
        # Test-only user setting: every cell stays in the page, so the test can find it.
        settings = home / "settings" / "@jupyterlab" / "notebook-extension"
        settings.mkdir(parents=True)
        (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
        self.log = open(home / "lab.log", "w")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(args, cwd=ROOT, env=env, stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{self.url}/api/status?token={TOKEN}", timeout=2)
                return
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"JupyterLab did not start: {(home / 'lab.log').read_text()[-2000:]}")

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(f"{self.url}/api/{path}?token={TOKEN}", method=method)
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else None

    def stop(self):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)  # make and the server it started
        self.process.wait(timeout=30)
        self.log.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chapters")
    home = tmp_path_factory.mktemp("home")
    server = Lab(folder, home)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b
