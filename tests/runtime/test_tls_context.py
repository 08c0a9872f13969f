"""The TLS context every provider verifies with: one per trust store, shared in the process."""

from __future__ import annotations

import shutil
import ssl
from pathlib import Path

import certifi
import pytest

from wayline.runtime.lanes import verify_context


def test_same_trust_store_same_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two providers of one process verify with one context, built once, verifying hosts."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    first = verify_context()
    assert verify_context() is first
    assert first.verify_mode == ssl.CERT_REQUIRED and first.check_hostname
    assert first.cert_store_stats()["x509_ca"] > 0


def test_cert_file_from_environment_gets_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """SSL_CERT_FILE, read when a client is built, names the store; another one, another context."""
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    default = verify_context()
    bundle = tmp_path / "ca.pem"
    text = Path(certifi.where()).read_text()
    # Only the first certificate: a store that differs from the default one in what it trusts.
    end = "-----END CERTIFICATE-----"
    bundle.write_text(text[text.index("-----BEGIN CERTIFICATE-----") : text.index(end) + len(end)])
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    own = verify_context()
    assert own is not default
    assert own.cert_store_stats()["x509_ca"] == 1
    assert verify_context() is own
    copy = tmp_path / "copy.pem"
    shutil.copy(bundle, copy)
    monkeypatch.setenv("SSL_CERT_FILE", str(copy))
    assert verify_context() is not own
