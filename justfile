# Recipes for a fresh Debian machine (run as root, or with sudo available).
# The virtualenv lives at .venv; Python packages come from requirements.lock.

set shell := ["bash", "-euo", "pipefail", "-c"]
# Recipe arguments reach commands as typed ("$@"), so `--name "Acme Ltd"` stays one argument.
set positional-arguments := true

venv := ".venv"
py := venv / "bin/python"
# Tesseract's packages come from the one language list, deploy/ocr-languages.txt (as in the Dockerfile).
apt_packages := "redis-server openssl chromium fonts-wqy-microhei fonts-dejavu-core fonts-noto-core poppler-utils pandoc libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui bubblewrap " + `sh deploy/ocr-packages.sh deploy/ocr-languages.txt`
image_name := env_var_or_default("IMAGE", "localhost/docservice:latest")

# Start the service on embedded defaults (private redis-server, SecantusDB, SeaweedFS).
run *ARGS: setup
    {{py}} -m tornado_app serve "$@"

# Convert documents from the command line with the service's readers and writers, no servers:
# `just convert report.pdf > report.md`, `just convert docs/ -o out/ --export html`.
convert *ARGS: setup
    {{py}} -m tornado_app convert "$@"

# Create a company and its ADMIN from a terminal: asks what --company/--name/--username omit, the password without echo.
create-admin *ARGS: setup
    {{py}} -m tornado_app create-admin "$@"

# With no ARGS the run ends with `just image-test` where this machine can build images (root
# and buildah present; IMAGE_TEST=0 skips it), and says clearly when it skipped it. Under CI
# (CI=true) it also skips while the image is not in the local store yet: a cold build takes
# 5-8 min and would push the run past 15 min (IMAGE_TEST=1 runs it anyway).
# Run the whole test suite (ruff, the layer contract, mypy, pytest, then the container image test when possible).
test *ARGS: setup axe
    {{venv}}/bin/ruff check .
    {{venv}}/bin/lint-imports
    {{venv}}/bin/mypy
    {{py}} -m pytest "$@"
    @[ "$#" -gt 0 ] || {{just_executable()}} _image-test-if-possible

# Tests marked `slow` (real servers, the render pool's processes, Chromium, any other process
# such as LibreOffice, Tesseract or pandoc; see tests/conftest.py, which fails a test that starts
# a process unmarked) are left out: engines, model, writers, settings and units in under a minute.
# It needs only Python and the virtualenv: no apt packages, no npm.
# Run the fast test subset (ruff, the layer contract, mypy, pytest -m "not slow").
test-fast *ARGS: venv
    {{venv}}/bin/ruff check .
    {{venv}}/bin/lint-imports
    {{venv}}/bin/mypy
    {{py}} -m pytest -m "not slow" "$@"

_image-test-if-possible:
    #!/usr/bin/env bash
    set -euo pipefail
    if [ "${IMAGE_TEST:-1}" = 0 ]; then
        echo "image test SKIPPED: IMAGE_TEST=0"
    elif [ "$(id -u)" -ne 0 ] || ! command -v buildah >/dev/null; then
        echo "image test SKIPPED: this machine cannot build images (needs root and buildah;" \
             "apt-get install buildah debootstrap, then: just image-test)"
    elif [ "${CI:-}" = true ] && [ "${IMAGE_TEST:-}" != 1 ] \
         && ! buildah inspect --type image {{image_name}} >/dev/null 2>&1; then
        echo "image test SKIPPED: CI=true and {{image_name}} is not in this machine's image" \
             "store yet; a cold build (base, Debian packages, virtualenv: 5-8 min) would push" \
             "the run past 15 min. Run \`just image-test\` once on this machine (afterwards" \
             "only changed layers are rebuilt), or set IMAGE_TEST=1 to build it in this run."
    else
        {{just_executable()}} image-test
    fi

# Write docs/configuration.md from the settings declared in tornado_app/settings.py (a test fails when it is stale).
config-doc: venv
    {{py}} -m tornado_app.settings --markdown > docs/configuration.md

# Install system packages (when missing) and the locked Python packages into .venv.
setup: apt-deps venv

apt-deps:
    #!/usr/bin/env bash
    set -euo pipefail
    missing=$(for p in {{apt_packages}}; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
    if [ -n "$missing" ]; then
        sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
        $sudo_cmd apt-get update -q
        DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q $missing
    fi

# axe-core from the npm registry, pinned by tests/axe/package-lock.json, for the browser
# app's accessibility checks (tests/test_ui_first_day.py). Only the tests use it, so the image
# has no Node. npm comes from Debian when missing.
axe:
    #!/usr/bin/env bash
    set -euo pipefail
    if ! command -v npm >/dev/null; then
        sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
        $sudo_cmd apt-get update -q
        DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q npm
    fi
    stamp=tests/axe/node_modules/.lock-$(sha256sum tests/axe/package-lock.json | cut -c1-16)
    if [ ! -f "$stamp" ]; then
        npm ci --prefix tests/axe --no-audit --no-fund
        touch "$stamp"
    fi

venv:
    #!/usr/bin/env bash
    set -euo pipefail
    [ -x {{py}} ] || python3 -m venv {{venv}}
    stamp={{venv}}/.lock-$(sha256sum requirements.lock pyproject.toml | sha256sum | cut -c1-16)
    if [ ! -f "$stamp" ]; then
        {{venv}}/bin/pip install -q --upgrade pip
        {{venv}}/bin/pip install -q -r requirements.lock
        {{venv}}/bin/pip install -q --no-deps -e .
        rm -f {{venv}}/.lock-*; touch "$stamp"
    fi

# Benchmarks: prints tables of ratios against baselines measured in the same run.
# `just bench convert --quick` runs one section briefly. The conversion section compares with
# pandoc (Debian package, installed here when missing) and with mammoth and markitdown, which
# it installs itself into their own virtualenvs under bench/.peers/ (never into .venv); the
# pdf-layout section likewise installs pymupdf4llm, markitdown, pdfplumber and PyMuPDF, and
# the ocr section ocrmypdf. HTTP load comes from wrk (Debian package, installed when missing).
bench *ARGS: setup
    #!/usr/bin/env bash
    set -euo pipefail
    missing=$(for p in pandoc wrk; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
    if [ -n "$missing" ]; then
        sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
        $sudo_cmd apt-get update -q
        DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q $missing
    fi
    {{py}} -m bench "$@"

# Soak: mixed load on one service for SOAK_SECONDS (300) s; errors, p50/p99, memory (--faults).
soak *ARGS: setup
    {{py}} -m bench.soak "$@"

# Uses buildah (installed with debootstrap from Debian when no builder is present), else podman
# or docker. Without a reachable registry the base is a local debian:bookworm-slim stand-in
# made once with debootstrap. Layers are cached.
# Build the container image localhost/docservice:latest (IMAGE=... to rename).
image:
    #!/usr/bin/env bash
    set -euo pipefail
    need=""
    if ! command -v buildah >/dev/null && ! command -v podman >/dev/null \
       && ! { command -v docker >/dev/null && docker info >/dev/null 2>&1; }; then
        need="buildah debootstrap"
    elif command -v buildah >/dev/null && ! command -v debootstrap >/dev/null; then
        need="debootstrap"
    fi
    if [ -n "$need" ]; then
        sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
        $sudo_cmd apt-get update -q
        DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q $need
    fi
    IMAGE={{image_name}} deploy/build-image.sh

# deploy/image_test.py: health, ready, login, DOCX and PDF conversions, CJK fonts, non-root,
# SIGTERM; prints the image size. Needs root and buildah.
# Build the image, run it on the embedded defaults and check it from outside over HTTP.
image-test: venv image
    {{py}} deploy/image_test.py {{image_name}}

# Lint and format check only.
lint: venv
    {{venv}}/bin/ruff check .

# The schemathesis run of tests/test_openapi.py against the real app with FUZZ_EXAMPLES examples
# per operation and phase (default 100) plus the coverage phase; FUZZ_STRICT=1 also sends the
# inputs of the known bugs listed in the test. Prints the statuses per operation and the totals.
# Fuzz both APIs against openapi.json with schemathesis (FUZZ_EXAMPLES, default 100).
fuzz *ARGS: setup
    FUZZ_EXAMPLES="${FUZZ_EXAMPLES:-100}" {{py}} -m pytest tests/test_openapi.py -k fuzz -q -o timeout=1800 "$@"
