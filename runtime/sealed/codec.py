"""Turning a document into an ``Envelope`` and back, raising a distinct error for each kind of damage."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from runtime.keys.store import KeyStore
from runtime.sealed import crypto
from runtime.sealed.envelope import Envelope
from runtime.sealed.errors import (
    SealedFieldsChangedError,
    SealedInvalidDocumentError,
    SealedSwappedError,
    SealedTamperedError,
    SealedWrongKeyError,
)
from runtime.sealed.paths import Path, pointer, unpointer

SCALARS = (str, int, float, bool, type(None))
SECRETS = "#secrets/"


def redact_tree(node: Any, path: Path, is_sensitive: Callable[[Path], bool],
                redact: Callable[[str], str]) -> Any:
    """A copy of ``node`` with secrets in readable strings replaced by placeholders."""
    if path and is_sensitive(path):
        return node
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if not isinstance(key, str):
                msg = f"key {key!r} at {pointer(path) or '/'} is not a string"
                raise SealedInvalidDocumentError(msg, hint="use string keys only")
            out[redact(key)] = redact_tree(value, (*path, key), is_sensitive, redact)
        return out
    if isinstance(node, list):
        return [redact_tree(v, (*path, i), is_sensitive, redact) for i, v in enumerate(node)]
    if isinstance(node, str):
        return redact(node)
    if isinstance(node, SCALARS):
        return node
    msg = f"value at {pointer(path) or '/'} is a {type(node).__name__}, not JSON"
    raise SealedInvalidDocumentError(msg, hint="pass only dict, list, str, int, float, bool and None")


def encrypt_tree(node: Any, path: Path, is_sensitive: Callable[[Path], bool],
                 seal: Callable[[Path, Any], str]) -> Any:
    if path and is_sensitive(path):
        return seal(path, node)
    if isinstance(node, dict):
        return {k: encrypt_tree(v, (*path, k), is_sensitive, seal) for k, v in node.items()}
    if isinstance(node, list):
        return [encrypt_tree(v, (*path, i), is_sensitive, seal) for i, v in enumerate(node)]
    return node


def seal(plain: Any, *, doc_id: str, revision: int, keys: KeyStore, is_sensitive: Callable[[Path], bool],
         secrets: dict[str, str]) -> Envelope:
    key_id = keys.primary_id
    data_key = crypto.new_data_key()
    aead = AESGCM(data_key)
    sealed: list[str] = []

    def seal_one(path: Path, value: Any) -> str:
        where = pointer(path)
        sealed.append(where)
        return crypto.encrypt_value(aead, doc_id, key_id, where, value)

    disk = encrypt_tree(plain, (), is_sensitive, seal_one)
    env = Envelope(doc_id=doc_id, revision=revision, key_id=key_id,
                   written_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                   data_key=crypto.wrap(keys.material(key_id), key_id, doc_id, data_key), sealed=sealed,
                   secrets={p: crypto.encrypt_value(aead, doc_id, key_id, SECRETS + p, v)
                            for p, v in sorted(secrets.items())},
                   doc=disk, mac="")
    env.mac = crypto.mac(data_key, env.mac_payload(plain))
    return env


def open_data_key(env: Envelope, keys: KeyStore) -> bytes:
    if not keys.has(env.key_id):
        msg = (f"{env.doc_id} was sealed under key {env.key_id}, which this key store does not hold "
               f"(it holds {_usable(keys)})")
        raise SealedWrongKeyError(msg, hint="set CANAL_KEY or restore the key ring that sealed it; "
                                  "canal key show", details={"doc_id": env.doc_id, "key_id": env.key_id})
    try:
        return crypto.unwrap(keys.material(env.key_id), env.key_id, env.doc_id, env.data_key)
    except (InvalidTag, ValueError) as exc:
        raise _tampered(env, "its wrapped data key", "/data_key") from exc


def _usable(keys: KeyStore) -> str:
    return ", ".join(k.id for k in keys.keys() if k.state != "retired") or "none"  # noqa: SIM118


def unseal(env: Envelope, keys: KeyStore) -> Any:
    """The plaintext document (placeholders stay), after checking every value and the MAC."""
    data_key = open_data_key(env, keys)
    aead = AESGCM(data_key)
    plain = env.doc  # parsed for this call only: filled in place
    for where in env.sealed:
        parent, last = _locate(plain, where, env)
        parent[last] = _decrypt_at(aead, env, where, parent[last])
    if not crypto.mac_matches(data_key, env.mac_payload(plain), env.mac):
        msg = f"{env.doc_id} fails its integrity check: a readable field was added, deleted or edited"
        raise SealedFieldsChangedError(msg, hint=_restore_hint(env), details={"doc_id": env.doc_id})
    return plain


def unseal_secrets(env: Envelope, keys: KeyStore) -> dict[str, str]:
    aead = AESGCM(open_data_key(env, keys))
    out: dict[str, str] = {}
    for placeholder, text in env.secrets.items():
        try:
            out[placeholder] = crypto.decrypt_value(aead, env.doc_id, env.key_id, SECRETS + placeholder, text)
        except (InvalidTag, ValueError) as exc:
            raise _tampered(env, f"the sealed secret {placeholder}", SECRETS + placeholder) from exc
    return out


def _decrypt_at(aead: AESGCM, env: Envelope, where: str, text: Any) -> Any:
    try:
        return crypto.decrypt_value(aead, env.doc_id, env.key_id, where, text)
    except (InvalidTag, ValueError) as exc:
        origin = next((o for o in env.sealed if o != where and _opens(aead, env, o, text)), None)
        if origin is not None:
            msg = f"{env.doc_id}: the sealed value at {where} belongs at {origin}; values were swapped"
            raise SealedSwappedError(msg, hint=_restore_hint(env),
                                     details={"doc_id": env.doc_id, "path": where, "origin": origin}) from exc
        raise _tampered(env, f"the sealed value at {where}", where) from exc


def _opens(aead: AESGCM, env: Envelope, where: str, text: Any) -> bool:
    try:
        crypto.decrypt_value(aead, env.doc_id, env.key_id, where, text)
    except (InvalidTag, ValueError):
        return False
    return True


def _locate(root: Any, where: str, env: Envelope) -> tuple[Any, Any]:
    parts = unpointer(where)
    node = root
    try:
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        last: Any = int(parts[-1]) if isinstance(node, list) else parts[-1]
        node[last]
    except (KeyError, IndexError, ValueError, TypeError) as exc:
        msg = f"{env.doc_id}: the sealed field {where} is missing; a field was deleted or moved"
        raise SealedFieldsChangedError(msg, hint=_restore_hint(env),
                                       details={"doc_id": env.doc_id, "path": where}) from exc
    return node, last


def _tampered(env: Envelope, what: str, where: str) -> SealedTamperedError:
    msg = f"{env.doc_id}: {what} does not authenticate; the file was modified outside Canal"
    return SealedTamperedError(msg, hint=_restore_hint(env), details={"doc_id": env.doc_id, "path": where})


def _restore_hint(env: Envelope) -> str:
    return (f"restore {env.doc_id} from a backup or discard it; run canal state verify to check the "
            "other files (Canal will not overwrite it)")
