"""Issue 7, done when: no secret of the corpus appears in any byte of the audit log, of a presented
diff, or of presented output, with the real ``Redactor`` wired as the product wires it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.host.audit import AuditLog
from canal.host.files import Workspace, edit_file
from canal.host.keys import KeyStore
from canal.host.redact import ENV_VAR, Redactor
from canal.presenter import PresenterConfig, present
from canal.runtime.services import Services
from canal.sandbox.result import CapturedOutput, ExecResult

CORPUS = json.loads((Path(__file__).parents[2] / "data" / "secrets" / "corpus.json").read_text())
ENTRIES = CORPUS["secrets"]
KINDS = [e["kind"] for e in ENTRIES]
ARMOUR = re.compile(r"^-----(?:BEGIN|END) [A-Z0-9 ]+-----$")


def forms(secret: str) -> Iterator[bytes]:
    """The secret, each of its lines (a private key must not survive even line by line; its
    ``-----BEGIN/END ...-----`` armour is not secret), and the JSON-escaped spelling of each (the
    audit log is JSON lines)."""
    for part in {secret, *secret.splitlines()}:
        if part.strip() and not ARMOUR.match(part.strip()):
            yield part.encode()
            yield json.dumps(part)[1:-1].encode()


def leaked(blob: bytes) -> list[str]:
    return [e["kind"] for e in ENTRIES if any(f in blob for f in forms(e["secret"]))]


def files_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


@pytest.fixture
def services(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Services:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv(ENV_VAR, raising=False)
    project = tmp_path / "project"
    project.mkdir()
    return Services(project, keys=KeyStore(tmp_path / "keys", env={}))


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor(b"r" * 32)


def test_corpus_secrets_are_caught_by_the_leak_check_itself() -> None:
    # the check below is only meaningful if it would see the raw corpus
    raw = "\n".join(e["text"] for e in ENTRIES).encode()
    assert leaked(raw) == KINDS
    assert leaked(json.dumps([e["text"] for e in ENTRIES]).encode()) == KINDS


def test_no_secret_in_any_byte_of_the_audit_log(services: Services) -> None:
    audit = services.audit
    for entry in ENTRIES:
        audit.append("run.finished", {"command": entry["text"], "exit": 0,
                                      "output": {"stdout": entry["text"], "lines": [entry["text"], 1]}})
    audit.append("run.batch", {"stdout": "\n".join(e["text"] for e in ENTRIES)})
    # commands as they are audited: argv with the secret in its context (a bare password without
    # context is undetectable by any detector: declare such fields sensitive instead)
    audit.append("approval.granted", {"argv": [["bash", "-c", e["text"]] for e in ENTRIES]})
    blob = files_under(services.state_dir / "audit")
    assert b"run.batch" in blob
    assert leaked(blob) == []


def test_no_secret_in_an_audit_log_built_directly(tmp_path: Path, redactor: Redactor) -> None:
    log = AuditLog(tmp_path / "audit" / "audit.jsonl", b"a" * 32, "k-1", redact=redactor)
    for entry in ENTRIES:
        log.append("tool.called", {"argv": ["bash", "-c", entry["text"]], "note": entry["text"]})
    assert leaked(files_under(tmp_path / "audit")) == []


@pytest.mark.parametrize("entry", ENTRIES, ids=KINDS)
def test_no_secret_in_a_presented_diff_or_its_audit_record(tmp_path: Path, services: Services,
                                                           entry: dict[str, str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "config.txt").write_text(f"# settings\nmode = dev\n{entry['text']}\nlast = 1\n")
    workspace = Workspace.at(ws)
    changed = edit_file(workspace, "config.txt", "mode = dev", "mode = prod",
                        redactor=services.redactor, audit=services.audit)  # the secret is context
    added = edit_file(workspace, "config.txt", "last = 1", f"last = 2\n{entry['text']}",
                      redactor=services.redactor, audit=services.audit)  # the secret is added
    removed = edit_file(workspace, "config.txt", f"{entry['text']}\nlast = 2", "last = 3",
                        redactor=services.redactor, audit=services.audit)  # and removed
    for result in (changed, added, removed):
        shown = (result.to_text() + result.model_dump_json()).encode()
        assert leaked(shown) == [], result.diff
    assert "[REDACTED_SECRET:" in added.diff
    assert leaked(files_under(services.state_dir / "audit")) == []
    assert entry["text"] in (ws / "config.txt").read_text()  # the file itself keeps the real value


WHOLE = PresenterConfig(max_lines=100_000, max_bytes=1 << 20, stderr_max_lines=100_000,
                        stderr_max_bytes=1 << 20)


def _result(stdout: str, stderr: str, exit_code: int = 1) -> ExecResult:
    return ExecResult(CapturedOutput.of(stdout.encode()), CapturedOutput.of(stderr.encode()), exit_code, 0.5)


def test_no_secret_in_presented_output(tmp_path: Path, redactor: Redactor) -> None:
    texts = "\n".join(e["text"] for e in ENTRIES) + "\n"
    shown = present(_result(texts, texts), config=WHOLE,
                    output_dir=tmp_path / "out", redact=redactor)
    assert not shown.truncated
    assert shown.text.count("[REDACTED_SECRET:") >= 2 * len(ENTRIES)
    assert leaked(json.dumps(shown.to_json()).encode()) == []


def test_no_secret_in_presented_output_cut_in_head_and_tail(tmp_path: Path, redactor: Redactor) -> None:
    texts = "\n".join(e["text"] for e in ENTRIES)
    filler = "".join(f"line {i} of a long build log\n" for i in range(3000))
    shown = present(_result(f"{texts}\n{filler}{texts}\n", f"{filler}{texts}\n"), config=PresenterConfig(),
                    output_dir=tmp_path / "out", redact=redactor)
    assert shown.truncated
    assert leaked(json.dumps(shown.to_json()).encode()) == []


def test_a_secret_named_only_by_its_field_is_redacted_in_the_audit_log(tmp_path: Path) -> None:
    from canal.host.audit import AuditLog
    from canal.host.redact import Redactor

    log = AuditLog(tmp_path / "audit.jsonl", b"k" * 32, "k-1", redact=Redactor(b"r" * 32))
    log.append("run.started", {"env": {"DB_PASSWORD": "x9Qv7Lr2Tz8Wm4Kp"}, "command": "ls"})
    text = (tmp_path / "audit.jsonl").read_text()
    assert "x9Qv7Lr2Tz8Wm4Kp" not in text
    assert '"command":"ls"' in text
