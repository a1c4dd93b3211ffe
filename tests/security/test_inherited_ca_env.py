"""A step's pip never trusts a certificate authority another user can change, named by the
environment `remedy run --local` inherited (REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, SSL_CERT_FILE,
SSL_CERT_DIR), as it already did not through `PIP_CERT`.

The attack, for real: root's environment names root's package index (`PIP_INDEX_URL`, an
https URL: root's choice, kept) and a CA bundle in uid 65534's directory (a CI job's, a
shared tools dir). uid 65534 writes its own CA into the bundle; whoever answers for the index
host (here a local HTTPS server standing in for a DNS answer, a proxy or a shared LAN) shows a
certificate that CA signed and serves `nvidia_cuda_cccl-13.0.85` carrying a `.pth`. Root's
`pip-install` step took TLS as proof of the index and installed the wheel (the canary: the
.pth in root's site-packages), where PIP_CERT naming the same file was already left out. Now
those variables, naming a place another user can change, are left out too: pip checks the
index against its own CA list and refuses the certificate. Control: root's own bundle is used.
"""

from __future__ import annotations

import contextlib
import datetime
import http.server
import ipaddress
import os
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a CA file another user owns")
NOBODY = 65534
WHEEL = "nvidia_cuda_cccl-13.0.85-py3-none-any.whl"


def _certs(d: Path) -> tuple[Path, Path, Path]:
    """(ca.pem, server cert, server key) for 127.0.0.1, signed by a CA made here."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("uid 65534's CA")).issuer_name(
        name("uid 65534's CA")).public_key(ca_key.public_key()).serial_number(1)
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False),
                       critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256()))  # fmt: skip
    cert = (x509.CertificateBuilder().subject_name(name("127.0.0.1")).issuer_name(ca.subject)
        .public_key(key.public_key()).serial_number(2)
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(
            ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256()))  # fmt: skip
    d.mkdir()
    pem = serialization.Encoding.PEM
    (d / "ca.pem").write_bytes(ca.public_bytes(pem))
    (d / "cert.pem").write_bytes(cert.public_bytes(pem))
    (d / "key.pem").write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()))  # fmt: skip
    return d / "ca.pem", d / "cert.pem", d / "key.pem"


@contextlib.contextmanager
def _index(root: Path, cert: Path, key: Path) -> Iterator[str]:
    """An HTTPS simple index serving root/ at 127.0.0.1: the index URL."""
    from test_sudo_home_config import _wheel

    _wheel(root / "files")
    page = root / "simple" / "nvidia-cuda-cccl"
    page.mkdir(parents=True)
    (page / "index.html").write_text(f'<a href="../../files/{WHEEL}">{WHEEL}</a>\n')

    class H(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(root), **kw)

        def log_message(self, *a) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"https://127.0.0.1:{srv.server_address[1]}/simple/"
    finally:
        srv.shutdown()
        srv.server_close()


def _run(tmp_path: Path, monkeypatch, var: str, owner: int) -> Path:
    import test_sudo_home_config as t

    tmp_path.chmod(0o755)
    env = t._venv(tmp_path)
    ca, cert, key = _certs(tmp_path / "tls")
    cadir = tmp_path / f"ca-{owner}"
    cadir.mkdir()
    bundle = cadir / "ca-bundle.pem"
    bundle.write_bytes(ca.read_bytes())
    os.chown(cadir, owner, owner)
    os.chown(bundle, owner, owner)
    root_home = tmp_path / "root-home"
    root_home.mkdir()
    for k in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR",
              "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):  # fmt: skip
        monkeypatch.delenv(k, raising=False)
    real = t.apply_locally
    with _index(tmp_path / "index", cert, key) as url:

        def with_var(*a, **kw):  # _apply clears PIP_*: set them after that
            monkeypatch.setenv("PIP_INDEX_URL", url)
            monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
            monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            monkeypatch.setenv("PIP_RETRIES", "0")
            monkeypatch.setenv("NO_PROXY", "127.0.0.1")
            monkeypatch.setenv(var, str(bundle))
            return real(*a, **kw)

        monkeypatch.setattr(t, "apply_locally", with_var)
        with contextlib.suppress(Exception):  # a failed step is fine: what pip installed counts
            t._apply(tmp_path, env, root_home, monkeypatch)
    return env


@pytest.mark.parametrize("var", ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"])
def test_a_ca_bundle_another_user_owns_is_not_roots_trust(tmp_path: Path, monkeypatch, var):
    from test_sudo_home_config import _planted

    env = _run(tmp_path, monkeypatch, var, NOBODY)
    assert not _planted(env), f"root's pip took the index uid 65534's CA ({var}) vouched for"


def test_control_roots_own_ca_bundle_is_used(tmp_path: Path, monkeypatch):
    from test_sudo_home_config import _planted

    env = _run(tmp_path, monkeypatch, "REQUESTS_CA_BUNDLE", 0)
    assert _planted(env), "root's own CA bundle was not used"


def test_ca_variables_naming_another_users_place_are_left_out(tmp_path: Path):
    """SSL_CERT_FILE (OpenSSL's default file: pip with truststore, curl, apt's https) and the
    SSL_CERT_DIR list get the same rule; root's places are kept."""
    from remedy.transport.base import own_config_env

    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    env = {b"SSL_CERT_FILE": os.fsencode(theirs / "ca.pem"),
           b"SSL_CERT_DIR": b"/etc/ssl/certs:" + os.fsencode(theirs)}  # fmt: skip
    assert own_config_env(env) == {b"SSL_CERT_FILE": None, b"SSL_CERT_DIR": b"/etc/ssl/certs"}
    assert own_config_env({b"SSL_CERT_FILE": b"/etc/ssl/certs/ca-certificates.crt"}) == {}
