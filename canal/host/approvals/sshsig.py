"""SSH signatures over approvals, with OpenSSH's own tool (``ssh-keygen -Y``), as git's SSH signing does.

The signed message is a few lines of text naming what is approved, so a person (or an auditor off the
host) can read what a signature covers::

    canal-approval/1
    decision approve
    token c_k3j9x2mqa7fe
    project demo-1a2b3c4d5e6f
    command-sha256 <sha256 of the command as shown>
    expires 1767225600

Verification writes an ``allowed_signers`` file (one line per approver with a key, restricted to the
namespace) and asks ``ssh-keygen -Y find-principals`` who signed, then ``-Y verify`` for that principal:
a key nobody configured is ``SIGNER_NOT_ALLOWED``, a signature that does not verify ``SIGNATURE_INVALID``.
Every argument is a separate argv element; nothing passes through a shell.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from canal.host.approvals.errors import SIGNATURE_INVALID, SIGNER_NOT_ALLOWED
from canal.host.approvals.identities import ApproverSpec

NAMESPACE = "canal-approval"
TIMEOUT_S = 20.0
MAX_SIGNATURE = 16 * 1024


def approval_message(fields: Mapping[str, str | int]) -> bytes:
    """The exact bytes signed: a header line, then ``name value`` lines in the order given."""
    lines = ["canal-approval/1", *(f"{k} {v}" for k, v in fields.items())]
    for line in lines:
        if "\n" in line or "\r" in line:
            msg = "a signed field may not hold a line break"
            raise ValueError(msg)
    return ("\n".join(lines) + "\n").encode()


def command_digest(command: str) -> str:
    return hashlib.sha256(command.encode()).hexdigest()


def signature_digest(signature: str) -> str:
    return hashlib.sha256(signature.strip().encode()).hexdigest()


def _keygen() -> str:
    found = shutil.which("ssh-keygen")
    if found is None:
        msg = "ssh-keygen is not installed on this host: SSH-signed approvals cannot be checked"
        raise SIGNATURE_INVALID(msg, hint="apt-get install openssh-client")
    return found


def _run(argv: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, input=data, capture_output=True, timeout=TIMEOUT_S, check=False)


def sign(message: bytes, key_file: Path) -> str:
    """Sign ``message`` with the private key in ``key_file`` (the approver's own process runs this)."""
    done = _run([_keygen(), "-Y", "sign", "-q", "-f", str(key_file), "-n", NAMESPACE], message)
    if done.returncode != 0:
        msg = f"ssh-keygen could not sign with {key_file}: {done.stderr.decode(errors='replace').strip()}"
        raise SIGNATURE_INVALID(msg, hint="check the key path (and touch the security key if it asks)")
    return done.stdout.decode()


def verify(message: bytes, signature: str, approvers: Iterable[ApproverSpec]) -> ApproverSpec:
    """The approver whose configured key made ``signature`` over exactly ``message``."""
    signers = {a.name: a for a in approvers if a.ssh_key is not None}
    if not signature.strip().startswith("-----BEGIN SSH SIGNATURE-----") or len(signature) > MAX_SIGNATURE:
        msg = "the signature is not an SSH signature (ssh-keygen -Y sign output)"
        raise SIGNATURE_INVALID(msg, hint=f"sign with: ssh-keygen -Y sign -n {NAMESPACE} -f KEY")
    with tempfile.TemporaryDirectory(prefix="canal-sshsig-") as tmp:
        allowed = Path(tmp) / "allowed_signers"
        sig = Path(tmp) / "approval.sig"
        allowed.write_text("".join(f'{name} namespaces="{NAMESPACE}" {a.ssh_key}\n'
                                   for name, a in signers.items()))
        fd = os.open(sig, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(signature.strip() + "\n")
        found = _run([_keygen(), "-Y", "find-principals", "-s", str(sig), "-f", str(allowed)], b"")
        names = [n for n in found.stdout.decode(errors="replace").split() if n in signers]
        if found.returncode != 0 or not names:
            msg = "the signature was made by a key that is not an approver's (not in allowed_signers)"
            raise SIGNER_NOT_ALLOWED(msg, hint="add the approver's public key to approvals.approvers "
                                        "in canal.yaml (an approver approves that change)")
        checked = _run([_keygen(), "-Y", "verify", "-f", str(allowed), "-I", names[0], "-n", NAMESPACE,
                        "-s", str(sig)], message)
    if checked.returncode != 0:
        msg = (f"the signature by {names[0]}'s key does not verify over this approval (tampered, or made "
               "for another token, decision or project)")
        raise SIGNATURE_INVALID(msg, hint="sign exactly the text --print-message shows for this token")
    return signers[names[0]]
