# Production image: the service with Debian's python3, Chromium (headless shell), fonts and
# redis-server baked in.
# Real MongoDB, Redis and S3 are given through MONGO_URL, REDIS_URL and S3_* (see
# docker-compose.yml); without them the embedded servers (redis-server, SecantusDB, SeaweedFS)
# start inside the container with their data under /data.
#
#   just image          (buildah, else docker/podman; makes a local debian:bookworm-slim
#                        stand-in with debootstrap when no registry can be reached)
#   docker build -t docservice .
#
# Build as docker format (`buildah bud --format docker`): OCI images have no HEALTHCHECK.
ARG BASE_IMAGE=debian:bookworm-slim

# ---- deps: a virtualenv with the locked runtime packages (rebuilt when the lock changes) ----
FROM ${BASE_IMAGE} AS deps
ENV DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates binutils file \
 && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/venv
WORKDIR /src
COPY requirements.lock pyproject.toml deploy/lockcheck.py ./
# Wheels only (no compiler anywhere). The optional build secret `pip_ca` is a CA bundle for pip
# where a TLS-inspecting egress proxy sits between the builder and PyPI (deploy/build-image.sh
# passes the host's bundle); it is never written to a layer.
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=pip_ca \
    if [ -s /run/secrets/pip_ca ]; then export PIP_CERT=/run/secrets/pip_ca; fi \
 && python3 lockcheck.py requirements pyproject.toml >runtime.txt \
 && /opt/venv/bin/pip install --only-binary=:all: -c requirements.lock -r runtime.txt \
 && /opt/venv/bin/python lockcheck.py verify requirements.lock
# What the service never loads, out of the packages (each measured in README, Deployment):
# - symbols: Playwright's node (33 MB) and the extension modules (11 MB). Not the libraries
#   auditwheel grafted into `*.libs/`: patchelf rewrote their headers, and after strip they no
#   longer load ("ELF load command address/offset not page-aligned", numpy's OpenBLAS); every
#   stripped file is loaded once below so that a bad strip fails the build, not the service.
# - the packages' own test suites (numpy, shapely, greenlet: 21 MB), C headers and type stubs;
# - the parts of Playwright's driver for other tools: the trace viewer, recorder, HTML report
#   and dashboard web apps, TypeScript types, the Chrome/Edge (re)install scripts (6 MB).
#   `run-driver`, which the Python client starts, needs none of them.
RUN site="$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
 && strip --strip-all "$site/playwright/driver/node" \
 && find "$site" -type f -name '*.so*' -not -path '*.libs/*' -print0 \
      | xargs -0 file | grep -E 'ELF.*not stripped' | cut -d: -f1 >/tmp/stripped \
 && xargs -r strip --strip-unneeded </tmp/stripped \
 && /opt/venv/bin/python -c 'import ctypes, sys; [ctypes.CDLL(p.strip()) for p in open(sys.argv[1])]' /tmp/stripped \
 && echo "stripped $(wc -l </tmp/stripped) extension modules" && rm /tmp/stripped \
 && find "$site" -mindepth 2 -type d -name tests -prune -exec rm -rf {} + \
 && find "$site" \( -name '*.pyi' -o -name '*.h' \) -type f -delete \
 && rm -rf "$site/numpy/_core/include" \
      "$site"/playwright/driver/package/lib/vite "$site"/playwright/driver/package/types \
      "$site"/playwright/driver/package/index.d.ts "$site"/playwright/driver/package/bin

# ---- venv: the same without pip and setuptools, as it goes into the image ----
FROM deps AS venv
RUN /opt/venv/bin/pip uninstall -q -y pip setuptools

# ---- project: `pip install --no-deps .` into a tree of its own, laid over the venv below ----
FROM deps AS project
COPY tornado_app ./tornado_app
COPY render_pool ./render_pool
COPY store ./store
COPY ui ./ui
# ui/ is served from beside the installed package (tornado_app/ui.py), so it goes there too.
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=pip_ca \
    if [ -s /run/secrets/pip_ca ]; then export PIP_CERT=/run/secrets/pip_ca; fi \
 && site="$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
 && /opt/venv/bin/pip install --no-deps --no-compile --target "/out$site" . \
 && cp -r ui "/out$site/ui" \
 && /opt/venv/bin/python -m compileall -q -s /out /out

# ---- runtime ----
FROM ${BASE_IMAGE}
ENV DEBIAN_FRONTEND=noninteractive
# Chromium is Debian's `chromium-headless-shell`: the same Chromium source and version as the
# `chromium` package, built for headless use only (the build Playwright itself uses for
# headless), so without GTK, dbus and systemd, which `chromium` pulls in (about 150 MB).
# `fontconfig` builds the font cache at install time (`chromium` brought it in).
# Files a headless Chromium never loads are not unpacked (dpkg path-exclude, as the slim base
# does for docs, so the package database stays consistent): Mesa's GPU drivers with LLVM and
# Z3 (chromium-common depends on them; with --disable-gpu Chromium never opens them), the
# Vulkan validation layer, and the full browser's resource packs and icons.
# LibreOffice (the `-nogui` Writer, Calc and Impress) converts ODT/ODS/ODP/DOC/XLS/PPT/RTF to
# OOXML for the readers (render_pool/engine/office/reader.py); it adds about 330 MB to the image.
# bubblewrap is its sandbox (OFFICE_SANDBOX=required): it needs user namespaces, which
# Docker's default seccomp profile refuses; without them those formats answer 50001.
# Tesseract 5 and its language packs read scanned pages and images (OCR_LANGUAGES): the
# packs of deploy/ocr-languages.txt, named as Debian packages by deploy/ocr-packages.sh (the
# justfile asks the same script, so the list is written once).
COPY deploy/dpkg-headless.cfg /etc/dpkg/dpkg.cfg.d/headless
COPY deploy/ocr-languages.txt deploy/ocr-packages.sh /tmp/ocr/
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 chromium-headless-shell fontconfig \
      fonts-wqy-microhei fonts-dejavu-core fonts-noto-core redis-server openssl tini ca-certificates \
      libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui bubblewrap \
      $(sh /tmp/ocr/ocr-packages.sh /tmp/ocr/ocr-languages.txt) \
 && rm -rf /tmp/ocr /var/lib/apt/lists/* /var/cache/apt/* /var/cache/debconf/*-old \
      /var/log/apt /var/log/dpkg.log /var/log/alternatives.log
# The service user: no login shell, no root. /data is its volume (the embedded servers' data).
RUN groupadd --gid 10001 app \
 && useradd --uid 10001 --gid app --no-log-init --create-home --home-dir /home/app \
      --shell /usr/sbin/nologin app \
 && install -d -o app -g app -m 0750 /data
# The locked packages (a large layer, cached until the lock changes), then the project's own.
COPY --from=venv /opt/venv /opt/venv
COPY --from=project /out/ /

ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 \
    DATA_DIR=/data CHROMIUM_PATH=/usr/lib/chromium/chromium-headless-shell HOME=/home/app
USER app
WORKDIR /home/app
VOLUME ["/data"]
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8080/health', timeout=4)"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["python", "-m", "tornado_app", "serve", "--host", "0.0.0.0", "--port", "8080"]
