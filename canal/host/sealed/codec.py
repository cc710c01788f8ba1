"""Turning a document into an ``Envelope`` and back, raising a distinct error for each kind of damage."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from canal.core.next import act
from canal.host.keys.store import KeyStore
from canal.host.sealed import crypto
from canal.host.sealed.envelope import Envelope
from canal.host.sealed.errors import (
    SEALED_FIELDS_CHANGED,
    SEALED_INVALID_DOCUMENT,
    SEALED_SWAPPED,
    SEALED_TAMPERED,
    SEALED_WRONG_KEY,
    SealedError,
)
from canal.host.sealed.paths import Path, pointer, unpointer

SCALARS = (str, int, float, bool, type(None))
SECRETS = "#secrets/"


RedactMany = Callable[[list[str]], tuple[Callable[[str], str], dict[str, str]]]
Slot = tuple[Any, Any]  # (container, key or index)


def no_redaction(_texts: list[str]) -> tuple[Callable[[str], str], dict[str, str]]:
    return (lambda text: text), {}


class _Split:
    """One walk over the caller's document: a plaintext copy, a disk copy, the readable string slots
    (for one batched redaction pass) and the sealed slots (to encrypt)."""

    def __init__(self, is_sensitive: Callable[[Path], bool]) -> None:
        self.is_sensitive = is_sensitive
        self.strings: list[tuple[Slot, Slot]] = []  # (plain slot, disk slot)
        self.sealed: list[tuple[Slot, Path, Any]] = []  # (disk slot, path, plaintext value)
        self.keys: list[str] = []

    def copy(self, node: Any, path: Path) -> tuple[Any, Any]:
        if isinstance(node, dict):
            plain: dict[str, Any] = {}
            disk: dict[str, Any] = {}
            for key, value in node.items():
                if not isinstance(key, str):
                    msg = f"key {key!r} at {pointer(path) or '/'} is not a string"
                    raise SEALED_INVALID_DOCUMENT(msg, hint="use string keys only")
                self.keys.append(key)
                self._child(plain, disk, key, value, (*path, key))
            return plain, disk
        if isinstance(node, list):
            plain_list: list[Any] = [None] * len(node)
            disk_list: list[Any] = [None] * len(node)
            for index, value in enumerate(node):
                self._child(plain_list, disk_list, index, value, (*path, index))
            return plain_list, disk_list
        if isinstance(node, SCALARS):
            return node, node
        msg = f"value at {pointer(path) or '/'} is a {type(node).__name__}, not JSON"
        raise SEALED_INVALID_DOCUMENT(msg, hint="pass only dict, list, str, int, float, bool and None")

    def _child(self, plain: Any, disk: Any, key: Any, value: Any, path: Path) -> None:
        if self.is_sensitive(path):
            plain[key] = disk[key] = value
            self.sealed.append(((disk, key), path, value))
        elif isinstance(value, str):
            plain[key] = disk[key] = value
            self.strings.append(((plain, key), (disk, key)))
        else:
            plain[key], disk[key] = self.copy(value, path)


def prepare(doc: Any, is_sensitive: Callable[[Path], bool],
            redact_many: RedactMany) -> tuple[Any, Any, list[tuple[Slot, Path, Any]], dict[str, str]]:
    """(plaintext with placeholders, disk tree awaiting encryption, sealed slots, secrets found)."""
    split = _Split(is_sensitive)
    plain, disk = split.copy(doc, ())
    texts = [p[k] for (p, k), _ in split.strings]
    redact, found = redact_many([*texts, *split.keys])
    if found:
        if any(redact(k) != k for k in split.keys):  # a secret in a key: rare, rebuild with keys redacted
            return prepare(_redact_keys(doc, redact), is_sensitive, redact_many)
        for ((p, pk), (d, dk)), text in zip(split.strings, texts, strict=True):
            p[pk] = d[dk] = redact(text)
    return plain, disk, split.sealed, found


def _redact_keys(node: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(node, dict):
        return {redact(k) if isinstance(k, str) else k: _redact_keys(v, redact) for k, v in node.items()}
    if isinstance(node, list):
        return [_redact_keys(v, redact) for v in node]
    return node


def seal(doc: Any, *, doc_id: str, revision: int, keys: KeyStore, is_sensitive: Callable[[Path], bool],
         secrets: dict[str, str], redact_many: RedactMany = no_redaction) -> Envelope:
    """Seal ``doc``; secrets found in readable strings are added to ``secrets`` (in place)."""
    plain, disk, slots, found = prepare(doc, is_sensitive, redact_many)
    secrets.update(found)
    key_id = keys.primary_id
    data_key = crypto.new_data_key()
    aead = AESGCM(data_key)
    try:
        for (container, key), path, value in slots:
            container[key] = crypto.encrypt_value(aead, doc_id, key_id, pointer(path), value)
        sealed_secrets = {p: crypto.encrypt_value(aead, doc_id, key_id, SECRETS + p, v)
                          for p, v in sorted(secrets.items())}
        env = Envelope(doc_id=doc_id, revision=revision, key_id=key_id,
                       written_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                       data_key=crypto.wrap(keys.material(key_id), key_id, doc_id, data_key),
                       sealed=[pointer(path) for _, path, _ in slots], secrets=sealed_secrets,
                       doc=disk, mac="")
        env.mac = crypto.mac(data_key, env.mac_payload(plain))
    except (TypeError, ValueError) as exc:
        msg = f"{doc_id} holds a value that is not JSON (or a NaN/infinite float): {exc}"
        raise SEALED_INVALID_DOCUMENT(msg, hint="pass only JSON values (no NaN or infinity)") from exc
    return env


def open_data_key(env: Envelope, keys: KeyStore) -> bytes:
    if not keys.has(env.key_id):
        msg = (f"{env.doc_id} was sealed under key {env.key_id}, which this key store does not hold "
               f"(it holds {_usable(keys)})")
        raise SEALED_WRONG_KEY(msg, hint="set CANAL_KEY or restore the key ring that sealed it",
                                  next=act("key.show"), details={"doc_id": env.doc_id, "key_id": env.key_id})
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
        raise SEALED_FIELDS_CHANGED(msg, hint=_restore_hint(env), next=CHECK_OTHERS,
                                       details={"doc_id": env.doc_id})
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
            raise SEALED_SWAPPED(msg, hint=_restore_hint(env), next=CHECK_OTHERS,
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
        raise SEALED_FIELDS_CHANGED(msg, hint=_restore_hint(env), next=CHECK_OTHERS,
                                       details={"doc_id": env.doc_id, "path": where}) from exc
    return node, last


def _tampered(env: Envelope, what: str, where: str) -> SealedError:
    msg = f"{env.doc_id}: {what} does not authenticate; the file was modified outside Canal"
    return SEALED_TAMPERED(msg, hint=_restore_hint(env), next=CHECK_OTHERS,
                               details={"doc_id": env.doc_id, "path": where})


CHECK_OTHERS = act("state.verify", "checks the other files")


def _restore_hint(env: Envelope) -> str:
    return f"restore {env.doc_id} from a backup or discard it (Canal will not overwrite it)"
