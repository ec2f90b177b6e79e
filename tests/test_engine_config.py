"""The environment is read in one place (issue 31, item 6): ``tornado_app/settings.py``.

The engines' outside programs (LibreOffice: which executable, sandboxed or not; Tesseract:
API or command line, which language packs folder) are settings the pool hands to its
workers (``render_pool/engine/config.py``), and a program the service starts inherits the
environment the settings give it, without the service's own variables (secrets included).
Before, ``render_pool/engine/office/reader.py``, ``office_sandbox.py``, ``ocr/tesseract.py``
and ``tornado_app/embedded/seaweed_security.py`` read ``os.environ`` themselves, and
tesserocr was chosen and imported when ``tesseract.py`` loaded.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from render_pool.engine import config as engine_config
from render_pool.engine.ocr import tesseract
from render_pool.engine.office import reader as office_lo
from render_pool.engine.office import sandbox as office_sandbox
from tornado_app.documents.setup import pool_from_settings
from tornado_app.embedded.seaweed_security import child_env
from tornado_app.settings import Settings, child_environment

ROOT = Path(__file__).resolve().parents[1]
_READS = re.compile(r"\bos\s*\.\s*(?:environ|environb|getenv|getenvb)\b|\bfrom\s+os\s+import\b"
                    r"[^\n]*\b(?:environ|getenv)\b")


def test_only_the_settings_module_reads_the_environment():
    readers = sorted(str(path.relative_to(ROOT))
                     for package in ("render_pool", "tornado_app")
                     for path in (ROOT / package).rglob("*.py")
                     if _READS.search(path.read_text(encoding="utf-8")))
    assert readers == ["tornado_app/settings.py"], readers


def test_the_settings_hand_the_engines_their_programs(monkeypatch, tmp_path):
    from render_pool.engine.worker_setup import WorkerSetup

    monkeypatch.setenv("S3_SECRET_KEY", "do-not-pass-on")
    monkeypatch.setenv("LANG", "C.UTF-8")
    settings = Settings.from_env({"SOFFICE_PATH": " /opt/lo/program/soffice ",
                                  "OFFICE_SANDBOX": "OFF", "OCR_ENGINE": "cli",
                                  "TESSDATA_PREFIX": str(tmp_path),
                                  "OFFICE_MEMORY_MB": "3000"})
    pool = pool_from_settings(settings)
    try:
        setup = pool.worker_setup
    finally:
        pool.close(wait=False)
    assert isinstance(setup, WorkerSetup)
    given = setup.engine_config
    assert {k: v for k, v in given.items() if k != "environment"} == {
        "soffice_path": "/opt/lo/program/soffice", "office_sandbox": "off",
        "office_memory_mb": 3000, "ocr_engine": "cli", "tessdata_dir": str(tmp_path)}
    assert given["environment"]["LANG"] == "C.UTF-8"
    assert "S3_SECRET_KEY" not in given["environment"]
    with engine_config.configured(**given):
        assert office_lo.soffice_path() == "/opt/lo/program/soffice"
        assert office_sandbox.mode() == "off"
        assert tesseract.engine_name() == "cli"
        assert tesseract.tessdata_dir() == f"{tmp_path}/"
        assert office_lo.memory_bounded(["soffice"])[1] == 3000


def test_unknown_engine_settings_and_values_are_errors():
    with pytest.raises(TypeError, match="soffice"):
        engine_config.configure(soffice="/usr/bin/soffice")
    with pytest.raises(ValueError, match="ocr_engine"):
        engine_config.configure(ocr_engine="tesserocr")
    from render_pool.engine.worker_setup import worker_setup

    with pytest.raises(ValueError, match="office_sandbox"):
        worker_setup(engine_config={"office_sandbox": "no"})
    assert engine_config.current() == engine_config.EngineConfig()


def test_children_get_the_environment_without_the_services_variables(monkeypatch, tmp_path):
    env = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "DOCS_API_TOKEN": "t", "MONGO_URL": "m",
           "WEED_JWT_SIGNING_KEY": "", "weed_master_port": "1"}
    assert child_environment(env) == {"PATH": "/usr/bin", "LANG": "C.UTF-8",
                                      "WEED_JWT_SIGNING_KEY": "", "weed_master_port": "1"}
    assert child_environment(env, drop_prefixes=("WEED_",)) == {"PATH": "/usr/bin",
                                                                "LANG": "C.UTF-8"}
    monkeypatch.setenv("WEED_JWT_SIGNING_KEY", "")
    monkeypatch.setenv("WEBHOOK_SECRET", "secret")
    weed = child_env(tmp_path)
    assert weed["TMPDIR"] == str(tmp_path)
    assert not {"WEED_JWT_SIGNING_KEY", "WEBHOOK_SECRET"} & set(weed)


def test_the_tesseract_command_gets_the_configured_folder_and_environment(monkeypatch,
                                                                          tmp_path):
    runs: list[tuple[list[str], dict[str, str]]] = []

    def fake_run(cmd, **kwargs):
        runs.append((cmd, kwargs["env"]))
        return subprocess.CompletedProcess(cmd, 0, b"", b"")

    monkeypatch.setattr(tesseract.subprocess, "run", fake_run)
    with engine_config.configured(ocr_engine="cli", tessdata_dir=str(tmp_path),
                                  environment={"LANG": "C.UTF-8", "OMP_THREAD_LIMIT": "4"}):
        tesseract._hocr(Image.new("L", (20, 20), 255), "eng", 5)
    (cmd, env), = runs
    assert cmd[cmd.index("--tessdata-dir") + 1] == f"{tmp_path}/"
    assert env["LANG"] == "C.UTF-8" and env["OMP_THREAD_LIMIT"] == "1"


@pytest.mark.slow  # a Python process
def test_loading_the_ocr_engine_module_chooses_no_engine():
    """The engine is the configuration's, looked at on first use: loading the module neither
    reads the environment nor imports tesserocr."""
    code = ("import sys, render_pool.engine.ocr.tesseract as t; "
            "print('tesserocr' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env={"OCR_ENGINE": "api", "PATH": "/usr/bin:/bin"},
                          timeout=60, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.slow  # a pool worker
async def test_a_pool_worker_applies_the_engine_settings(io_loop):
    from render_pool.engine.worker_setup import worker_setup
    from render_pool.runtime.pool import RenderPool

    pool = RenderPool(1, memory_limit_mb=0, worker_setup=worker_setup(engine_config={
        "soffice_path": "/opt/lo/program/soffice", "office_sandbox": "off",
        "ocr_engine": "cli"}))
    try:
        assert await pool.run(office_lo.soffice_path, tenant="co") == "/opt/lo/program/soffice"
        assert await pool.run(office_sandbox.mode, tenant="co") == "off"
        assert await pool.run(tesseract.engine_name, tenant="co") == "cli"
    finally:
        pool.close(wait=False)
