"""known_hosts read the way OpenSSH reads it, for a paramiko client.

paramiko's own reader stops at the first line it cannot parse, and it cannot parse the two markers
OpenSSH defines: `@cert-authority PATTERNS KEY` (host certificates signed by KEY are trusted for the
hosts matching PATTERNS) and `@revoked PATTERNS KEY` (KEY must never be accepted). A known_hosts
holding either broke every connection. Here each line is read on its own: plain and hashed host
entries, wildcard and negated patterns, both markers; a line that cannot be read is skipped (as
OpenSSH does) and counted, never fatal. Host certificates are verified here too (type, principals,
validity window, critical options, the CA's signature), since paramiko accepts them without a look.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import hashlib
import hmac
import time
from dataclasses import dataclass, field

from ..safeio import read_regular

CERT_SUFFIX = "-cert-v01@openssh.com"
# The plain key types whose certificate variants paramiko can read as host keys, best first.
_CERT_BASES = (
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "rsa-sha2-512",
    "rsa-sha2-256",
)


def known_name(host: str, port: int) -> str:
    """How known_hosts names a host: `host`, or `[host]:port` off port 22."""
    return host if port == 22 else f"[{host}]:{port}"


def _hashed_match(entry: str, name: str) -> bool:
    # |1|base64(salt)|base64(HMAC-SHA1(salt, name))
    parts = entry.split("|")
    if len(parts) != 4 or parts[1] != "1":
        return False
    try:
        salt, digest = base64.b64decode(parts[2]), base64.b64decode(parts[3])
    except (binascii.Error, ValueError):
        return False
    return hmac.compare_digest(hmac.new(salt, name.encode(), hashlib.sha1).digest(), digest)


def host_matches(patterns: list[str], name: str) -> bool:
    """OpenSSH's pattern list: any positive match, unless a negated (`!`) pattern matches. Wildcards
    `*` and `?` (never `[...]` classes, which OpenSSH does not have); hashed entries compared by HMAC."""
    matched = False
    for p in patterns:
        neg = p.startswith("!")
        p = p[1:] if neg else p
        if p.startswith("|1|"):
            hit = _hashed_match(p, name)
        else:
            hit = fnmatch.fnmatchcase(name.lower(), p.lower().replace("[", "[[]"))
        if hit and neg:
            return False
        matched = matched or hit
    return matched


@dataclass
class KnownHosts:
    entries: list[tuple[list[str], object]] = field(default_factory=list)  # (patterns, paramiko PKey)
    authorities: list[tuple[list[str], object]] = field(default_factory=list)
    revoked: set[bytes] = field(default_factory=set)  # public key blobs
    skipped: list[str] = field(default_factory=list)  # "file:line: why"

    def keys_for(self, name: str) -> list:
        return [key for pats, key in self.entries if host_matches(pats, name) and not self.is_revoked(key)]

    def authorities_for(self, name: str) -> list:
        return [key for pats, key in self.authorities if host_matches(pats, name) and not self.is_revoked(key)]

    def is_revoked(self, key) -> bool:
        return key.asbytes() in self.revoked or (
            getattr(key, "public_blob", None) is not None and key.public_blob.key_blob in self.revoked
        )


def _key(key_type: str, b64: str):
    from paramiko import PKey

    try:
        blob = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the key is not base64") from None
    try:
        return PKey.from_type_string(key_type, blob)
    except Exception as exc:  # UnknownKeyType, SSHException, struct errors on a damaged blob
        raise ValueError(f"unreadable {key_type} key ({type(exc).__name__})") from None


def load(paths: list[str]) -> KnownHosts:
    """Every readable file of `paths` (missing ones are skipped, like OpenSSH's defaults)."""
    kh = KnownHosts()
    for path in paths:
        try:
            text = read_regular(path, 16 << 20).decode("utf-8", "replace")  # (a FIFO hung `check host`)
        except FileNotFoundError:
            continue
        except OSError as exc:
            kh.skipped.append(f"{path}: {exc.strerror or exc}")
            continue
        for no, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            words = line.split()
            marker = words.pop(0) if words[0].startswith("@") else None
            if marker not in (None, "@cert-authority", "@revoked") or len(words) < 3:
                kh.skipped.append(
                    f"{path}:{no}: "
                    + (
                        "unknown marker " + marker
                        if marker and marker not in ("@cert-authority", "@revoked")
                        else "too few fields"
                    )
                )
                continue
            patterns, key_type, b64 = words[0].split(","), words[1], words[2]
            try:
                key = _key(key_type, b64)
            except ValueError as exc:
                kh.skipped.append(f"{path}:{no}: {exc}")
                continue
            if marker == "@revoked":
                kh.revoked.add(key.asbytes())
            elif marker == "@cert-authority":
                kh.authorities.append((patterns, key))
            else:
                kh.entries.append((patterns, key))
    return kh


def cert_key_types() -> list[str]:
    """Host-key algorithms with certificates first: asked for when a CA vouches for the host."""
    return [b + CERT_SUFFIX for b in _CERT_BASES] + list(_CERT_BASES)


class CertError(ValueError):
    pass


def _read_cert(blob: bytes):
    """(fields, signed bytes, CA key blob, signature blob) of an OpenSSH certificate (PROTOCOL.certkeys)."""
    from paramiko.message import Message

    m = Message(blob)
    ctype = m.get_text()
    if not ctype.endswith(CERT_SUFFIX):
        raise CertError("not a certificate")
    base = ctype[: -len(CERT_SUFFIX)]
    m.get_string()  # nonce
    if base == "ssh-ed25519":
        m.get_string()
    elif base.startswith("ecdsa-sha2-"):
        m.get_string(), m.get_string()
    elif base in ("ssh-rsa", "rsa-sha2-256", "rsa-sha2-512"):
        m.get_mpint(), m.get_mpint()
    else:
        raise CertError(f"certificate type {ctype} is not supported")
    f = {"serial": m.get_int64(), "type": m.get_int(), "key_id": m.get_text()}
    principals = Message(m.get_string())
    names = []
    while principals.get_remainder():
        names.append(principals.get_text())
    f["principals"] = names
    f["valid_after"], f["valid_before"] = m.get_int64(), m.get_int64()
    f["critical"] = m.get_string()
    m.get_string(), m.get_string()  # extensions, reserved
    ca_blob = m.get_string()
    signed = m.get_so_far()
    sig = m.get_string()
    return f, signed, ca_blob, sig


def verify_host_cert(key, hostname: str, authorities: list, revoked: set[bytes], now: float | None = None) -> str:
    """Check the host certificate a server presented (paramiko keeps it as `key.public_blob`) against the
    CA keys that known_hosts trusts for this host. Returns the certificate's key id; raises CertError."""
    from paramiko.message import Message

    pub = getattr(key, "public_blob", None)
    if pub is None or not str(pub.key_type).endswith(CERT_SUFFIX):
        raise CertError("the host presented a plain key, not a certificate")
    try:
        f, signed, ca_blob, sig = _read_cert(pub.key_blob)
    except CertError:
        raise
    except Exception as exc:  # a truncated or malformed blob
        raise CertError(f"its certificate cannot be read ({type(exc).__name__})") from None
    if f["type"] != 2:
        raise CertError("its certificate is a user certificate, not a host certificate")
    now = time.time() if now is None else now
    if not f["valid_after"] <= now < f["valid_before"]:
        raise CertError("its certificate is outside its validity period")
    if f["critical"]:
        raise CertError("its certificate carries critical options, which no host certificate may hold")
    if hostname not in f["principals"]:
        raise CertError(
            f"its certificate is not valid for {hostname} (principals: {', '.join(f['principals']) or 'none'})"
        )
    if ca_blob in revoked:
        raise CertError("its certificate's CA key is @revoked in known_hosts")
    ca = next((a for a in authorities if a.asbytes() == ca_blob), None)
    if ca is None:
        raise CertError("its certificate is signed by a CA that known_hosts does not trust for this host")
    try:
        ok = ca.verify_ssh_sig(signed, Message(sig))
    except Exception:
        ok = False
    if not ok:
        raise CertError("its certificate's signature does not verify")
    return f["key_id"]


def system_paths() -> list[str]:
    return ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"]
