"""A throw-away certificate authority for the dev stack and the tests (``cryptography``).

``ThrowAwayCA.create(folder)`` writes ``ca.pem`` (the CA certificate) and keeps its key in memory;
``issue(name)`` writes ``<name>.pem`` (certificate) and ``<name>-key.pem`` (key, mode 0600) for a server
(names 127.0.0.1, ::1, localhost and this host) or a client, valid for a day; ``combined()`` puts both in one
PEM file, ``pkcs12(password)`` in a PKCS12 store (``<name>.p12``, what a JVM reads as its key store).
Nothing here is for production: there a real CA issues the certificates and only the paths go into
``hbrep.*.tls.*`` / ``hbase.rpc.tls.*``.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=1)


@dataclass(frozen=True)
class IssuedCert:
    """The PEM files of one issued certificate."""

    cert: Path
    key: Path

    def combined(self) -> Path:
        """``<name>-combined.pem``: key then certificate, one file (ZooKeeper's PEM key store)."""
        path = self.cert.with_name(self.cert.stem + "-combined.pem")
        path.write_bytes(self.key.read_bytes() + self.cert.read_bytes())
        path.chmod(0o600)
        return path

    def pkcs12(self, password: str) -> Path:
        """``<name>.p12``: key and certificate in a PKCS12 store sealed with ``password`` (a Java key store)."""
        key = serialization.load_pem_private_key(self.key.read_bytes(), password=None)
        cert = x509.load_pem_x509_certificate(self.cert.read_bytes())
        sealed = pkcs12.serialize_key_and_certificates(
            self.cert.stem.encode(), key, cert, None,  # type: ignore[arg-type]
            serialization.BestAvailableEncryption(password.encode()),
        )  # fmt: skip
        path = self.cert.with_suffix(".p12")
        path.write_bytes(sealed)
        path.chmod(0o600)
        return path


class ThrowAwayCA:
    """A self-signed CA that signs server and client certificates for loopback use."""

    def __init__(self, folder: Path, key: ec.EllipticCurvePrivateKey, cert: x509.Certificate):
        self.folder = folder
        self._key = key
        self.certificate = cert
        self.cert_path = folder / "ca.pem"

    @classmethod
    def create(cls, folder: str | os.PathLike[str], name: str = "hbrep throw-away CA") -> ThrowAwayCA:
        """A new CA; writes ``<folder>/ca.pem``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256())
        )
        ca = cls(folder, key, cert)
        ca.cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return ca

    def issue(self, name: str, *, client: bool = False) -> IssuedCert:
        """A certificate for ``name`` signed by this CA: server+client use, loopback names; files in the folder."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        names: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.DNSName(socket.gethostname())]
        names += [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.IPAddress(ipaddress.ip_address("::1"))]
        usages = [ExtendedKeyUsageOID.CLIENT_AUTH] if client else [
            ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH
        ]  # fmt: skip
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(self.certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        cert_path, key_path = self.folder / f"{name}.pem", self.folder / f"{name}-key.pem"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        key_path.chmod(0o600)
        return IssuedCert(cert_path, key_path)
