"""Private certificates for the embedded servers' mutual TLS, made with the ``openssl`` CLI.

One throwaway CA signs one certificate (usable as server and as client, for 127.0.0.1 and
localhost); the CA key is deleted once it has signed, so nobody, not even a reader of the data
directory later, can mint another certificate the servers would accept. Every file is written
under umask 077 (keys 0600) into a directory the caller keeps 0700.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

CA_CERT = "ca.crt"
NODE_CERT = "node.crt"
NODE_KEY = "node.key"
NODE_PEM = "node.pem"  # certificate + key in one file, as pymongo's tlsCertificateKeyFile wants
DAYS = 3650  # the embedded servers' own loopback certificate, renewed with the data dir
_EXTENSIONS = (
    "basicConstraints=critical,CA:FALSE\n"
    "keyUsage=critical,digitalSignature,keyEncipherment\n"
    "extendedKeyUsage=serverAuth,clientAuth\n"
    "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n"
)


class TlsError(RuntimeError):
    """Certificates could not be made; the message names the fix."""


@dataclass(frozen=True)
class TlsFiles:
    """Paths of a CA certificate and of the one certificate/key it signed."""

    directory: Path

    @property
    def ca(self) -> Path:
        return self.directory / CA_CERT

    @property
    def cert(self) -> Path:
        return self.directory / NODE_CERT

    @property
    def key(self) -> Path:
        return self.directory / NODE_KEY

    @property
    def pem(self) -> Path:
        return self.directory / NODE_PEM

    def complete(self) -> bool:
        """True when every file exists (a half-made set is made again)."""
        return all(p.is_file() for p in (self.ca, self.cert, self.key, self.pem))


def _openssl(*args: str, cwd: Path) -> None:
    binary = shutil.which("openssl")
    if binary is None:
        raise TlsError("openssl not found; install it with `apt-get install openssl`")
    done = subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=60)
    if done.returncode:
        raise TlsError(f"openssl {args[0]} failed: {done.stderr.strip()[-400:]}")


def ensure_tls(directory: Path, name: str = "docservice-embedded") -> TlsFiles:
    """Return the certificate set in ``directory``, making it first when incomplete."""
    files = TlsFiles(directory)
    if files.complete():
        return files
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    old = os.umask(0o077)
    try:
        ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
        _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", CA_CERT, "-days", str(DAYS),
                 "-subj", f"/CN={name} CA", cwd=directory)
        _openssl("req", *ec, "-keyout", NODE_KEY, "-out", "node.csr", "-subj", f"/CN={name}",
                 cwd=directory)
        (directory / "node.ext").write_text(_EXTENSIONS, "ascii")
        _openssl("x509", "-req", "-in", "node.csr", "-CA", CA_CERT, "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", NODE_CERT, "-days", str(DAYS),
                 "-extfile", "node.ext", cwd=directory)
        pem = files.cert.read_bytes() + files.key.read_bytes()
        fd = os.open(files.pem, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
    finally:
        os.umask(old)
        for scrap in ("ca.key", "ca.srl", "node.csr", "node.ext"):
            (directory / scrap).unlink(missing_ok=True)
    return files
