"""The deployment files agree with the code and the lock, checked without any image tooling.

The image itself is built and run by `just image-test` (deploy/image_test.py); these fast checks
catch the drifts that would only show up there or in production: a runtime dependency that the
lock does not pin (the image build refuses it), a locked package that Debian bookworm's Python
cannot install, and an nginx body limit that differs from the service's.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from tornado_app.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
BOOKWORM_PYTHON = "3.11.2"  # Debian bookworm's python3, the image's interpreter


def _lockcheck():
    spec = importlib.util.spec_from_file_location("lockcheck", ROOT / "deploy" / "lockcheck.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_runtime_dependency_is_pinned_by_the_lock_at_the_same_version():
    lockcheck = _lockcheck()
    pins = lockcheck.lock_pins(ROOT / "requirements.lock")
    for line in lockcheck.runtime_requirements(ROOT / "pyproject.toml"):
        req = Requirement(line)
        name = lockcheck.normalize(req.name)
        assert name in pins, f"{req.name} is not in requirements.lock"
        assert req.specifier.contains(pins[name]), f"{line} vs lock {pins[name]}"


def test_locked_packages_install_on_debian_bookworm_python():
    lockcheck = _lockcheck()
    pins = lockcheck.lock_pins(ROOT / "requirements.lock")
    checked = 0
    for dist in metadata.distributions():
        name = lockcheck.normalize(dist.metadata["Name"])
        if pins.get(name) != dist.version:
            continue
        requires = dist.metadata.get("Requires-Python")
        if requires:
            assert SpecifierSet(requires).contains(BOOKWORM_PYTHON), (
                f"{name}=={dist.version} needs Python {requires}; the image has "
                f"{BOOKWORM_PYTHON}: pin a release that supports it")
        checked += 1
    assert checked > 20


def test_lockcheck_refuses_an_unpinned_or_differently_pinned_package(tmp_path):
    lockcheck = _lockcheck()
    lock = tmp_path / "requirements.lock"
    lock.write_text("pytest==0.0.1\n")  # installed here, but at another version
    problems = lockcheck.unlocked(lock)
    assert any(p.startswith("pytest==") and "lock: 0.0.1" in p for p in problems)
    assert any("lock: absent" in p for p in problems)


def test_nginx_body_limit_matches_the_service():
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    match = re.search(r"client_max_body_size\s+(\d+)m;", conf)
    assert match, "client_max_body_size missing"
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    configured = int(compose["x-app"]["environment"]["MAX_UPLOAD_BYTES"])
    assert configured == Settings.from_env({}).max_upload_bytes
    # The service takes MAX_UPLOAD_BYTES plus 1 MiB of multipart overhead (tornado_app/__main__.py).
    assert int(match.group(1)) * 1024 * 1024 == configured + 1024 * 1024
    assert "proxy_buffering off;" in conf


@pytest.mark.parametrize("profile", [None, "replicas"])
def test_compose_services_per_profile(profile):
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    active = {name for name, svc in compose["services"].items()
              if not svc.get("profiles") or profile in svc["profiles"]}
    assert {"app", "mongo", "redis", "minio"} <= active
    if profile == "replicas":
        assert {"app-a", "app-b", "nginx"} <= active
        assert compose["services"]["nginx"]["image"] == "nginx:stable"
        upstreams = re.findall(r"server (app-[ab]):8080", (ROOT / "deploy" / "nginx.conf").read_text())
        assert upstreams == ["app-a", "app-b"]
    else:
        assert not {"app-a", "app-b", "nginx"} & active


def _ocr_packs() -> list[str]:
    """The Tesseract packs of deploy/ocr-languages.txt, comments and blank lines left out."""
    text = (ROOT / "deploy" / "ocr-languages.txt").read_text(encoding="utf-8")
    return [kept for line in text.splitlines() if (kept := line.split("#")[0].strip())]


def test_the_ocr_language_list_is_written_once():
    """The packs ``just setup`` and the image install come from deploy/ocr-languages.txt
    (through deploy/ocr-packages.sh), and OCR_LANGUAGES reads the same packs by default.
    Before, the list was written in the justfile, the Dockerfile and the settings."""
    assert "+".join(_ocr_packs()) == Settings.from_env({}).ocr_languages
    justfile = (ROOT / "justfile").read_text(encoding="utf-8")
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    for name, text in (("justfile", justfile), ("Dockerfile", dockerfile)):
        assert not re.findall(r"tesseract-ocr-\w+", text), f"{name} names a pack itself"
    assert "`sh deploy/ocr-packages.sh deploy/ocr-languages.txt`" in justfile
    assert "COPY deploy/ocr-languages.txt deploy/ocr-packages.sh /tmp/ocr/" in dockerfile
    assert "$(sh /tmp/ocr/ocr-packages.sh /tmp/ocr/ocr-languages.txt)" in dockerfile


@pytest.mark.slow  # runs sh and just
def test_the_justfile_installs_tesseract_with_the_listed_packs():
    packages = subprocess.run(["sh", "deploy/ocr-packages.sh", "deploy/ocr-languages.txt"],
                              cwd=ROOT, capture_output=True, text=True, check=True,
                              timeout=30).stdout.split()
    assert packages == ["tesseract-ocr", "tesseract-ocr-osd",
                        *(f"tesseract-ocr-{p.replace('_', '-')}" for p in _ocr_packs())]
    just = Path(sys.executable).with_name("just")
    if not just.exists():
        pytest.skip("rust-just is not installed in this virtualenv")
    apt = subprocess.run([str(just), "--evaluate", "apt_packages"], cwd=ROOT,
                         capture_output=True, text=True, check=True, timeout=30).stdout.split()
    assert apt[-len(packages):] == packages and "bubblewrap" in apt
