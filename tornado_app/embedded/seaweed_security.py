"""The ``security.toml`` that locks every port of the embedded ``weed mini`` except S3.

``weed`` reads ``./security.toml`` first (the launcher runs it in its data directory), so:

- master, volume, filer and admin HTTP are HTTPS that requires a client certificate from the
  data directory's private CA (``[https.*]``); the components reach each other with that
  certificate (``[https.client]``);
- every gRPC port (master, volume, filer, S3, admin) is mutual TLS with the same CA
  (``[grpc.*]``), so ``weed shell`` or any other gRPC client without the certificate gets no
  further than the handshake;
- on top of that, volume reads and writes and filer reads and writes need a JWT signed with keys
  only this file holds (``[jwt.*]``), so even the filer's unix socket (in the 0700 data
  directory) answers 401 without one.

The S3 port stays plain HTTP: it checks AWS signatures against ``s3.json``. The keys are made
once per data directory and kept (file mode 0600).
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from tornado_app.embedded.tls import TlsFiles, ensure_tls
from tornado_app.settings import child_environment

SECURITY_FILE = "security.toml"
TLS_DIR = "tls"
JWT_SECTIONS = ("jwt.signing", "jwt.signing.read", "jwt.filer_signing", "jwt.filer_signing.read")
GRPC_COMPONENTS = ("master", "volume", "filer", "s3", "admin", "worker", "client")
HTTPS_SERVERS = ("master", "volume", "filer", "admin")
_KEY_LINE = re.compile(r'^\[(?P<section>[a-z_.]+)\]\s*\nkey = "(?P<key>[0-9a-f]{64})"', re.M)


def _existing_keys(path: Path) -> dict[str, str]:
    """The JWT keys of an earlier ``security.toml`` (written by :func:`_render`), by section."""
    try:
        text = path.read_text("utf-8")
    except OSError:
        return {}
    return {m["section"]: m["key"] for m in _KEY_LINE.finditer(text)
            if m["section"] in JWT_SECTIONS}


def _render(keys: dict[str, str], tls: TlsFiles) -> str:
    def q(p: Path) -> str:
        return '"' + str(p).replace("\\", "\\\\").replace('"', '\\"') + '"'

    out = ["# Written by tornado_app.embedded.seaweed_security: do not edit.\n"]
    for section in JWT_SECTIONS:
        out.append(f'[{section}]\nkey = "{keys[section]}"\nexpires_after_seconds = 10\n')
    out.append("[access]\nui = false\n")
    out.append(f"[grpc]\nca = {q(tls.ca)}\n")
    for comp in GRPC_COMPONENTS:
        out.append(f"[grpc.{comp}]\ncert = {q(tls.cert)}\nkey = {q(tls.key)}\n")
    out.append(f"[https.client]\nenabled = true\ncert = {q(tls.cert)}\nkey = {q(tls.key)}\n"
               f"ca = {q(tls.ca)}\ninsecure_skip_verify = false\n")
    for comp in HTTPS_SERVERS:
        out.append(f"[https.{comp}]\ncert = {q(tls.cert)}\nkey = {q(tls.key)}\nca = {q(tls.ca)}\n")
    return "\n".join(out)


def write_security(root: Path) -> TlsFiles:
    """Make (or refresh) ``root/security.toml`` and the certificates under ``root/tls``;
    JWT keys already in the file are kept. Returns the certificate set (the launcher's own
    client certificate for its readiness probe)."""
    tls = ensure_tls(root / TLS_DIR)
    path = root / SECURITY_FILE
    keys = _existing_keys(path)
    for section in JWT_SECTIONS:
        keys.setdefault(section, secrets.token_hex(32))
    text = _render(keys, tls)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return tls


def child_env(tmp_dir: Path) -> dict[str, str]:
    """The environment for ``weed``: the one the settings hand to children, with no
    ``WEED_*`` variable (each would override a value of ``security.toml``, e.g. blank a JWT
    key), glog files in the private ``tmp_dir``."""
    return {**child_environment(drop_prefixes=("WEED_",)), "TMPDIR": str(tmp_dir)}
