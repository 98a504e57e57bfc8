"""Test TLS material made with `cryptography`: a CA, a server certificate for 127.0.0.1/localhost, a client one."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Identity:
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    def key_pem(self, password: bytes | None = None) -> bytes:
        encryption = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
        return self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)

    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(subject: str, issuer: str, key: ec.EllipticCurvePrivateKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2)))


def make_ca() -> Identity:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (_builder("icefloe test CA", "icefloe test CA", key)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False),
                           critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return Identity(key, cert)


def issue(ca: Identity, common_name: str, *, server: bool) -> Identity:
    key = ec.generate_private_key(ec.SECP256R1())
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (_builder(common_name, "icefloe test CA", key)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()),
                              critical=False))
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return Identity(key, builder.sign(ca.key, hashes.SHA256()))


def write_pem_store(path: Path, identity: Identity, ca: Identity) -> Path:
    """One PEM file with the key and the certificate chain, as Connect's ssl.keystore.type=PEM reads it."""
    path.write_bytes(identity.key_pem() + identity.cert_pem() + ca.cert_pem())
    return path


def write_pkcs12_store(path: Path, identity: Identity, ca: Identity, password: bytes) -> Path:
    path.write_bytes(pkcs12.serialize_key_and_certificates(
        b"server", identity.key, identity.cert, [ca.cert], serialization.BestAvailableEncryption(password)))
    return path


def write_pkcs12_trust_store(path: Path, ca: Identity, password: bytes) -> Path:
    path.write_bytes(pkcs12.serialize_key_and_certificates(
        None, None, None, [ca.cert], serialization.BestAvailableEncryption(password)))
    return path
