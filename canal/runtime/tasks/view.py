"""What a reader sees of a task: the presenter's view of its output so far (head and tail of a long
output, where the whole of it is, a footer), and its log as redacted text for ``logs``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from canal.host.ports import Redactor
from canal.presenter import PresenterConfig, format_size
from canal.presenter.overflow import render_overflow
from canal.presenter.scan import scan
from canal.presenter.sniff import classify
from canal.presenter.text import clean_text, decode
from canal.runtime.tasks.models import TaskRecord
from canal.runtime.tasks.output import read_range

LOG_CHUNK = 64 * 1024


@dataclass(frozen=True)
class TaskView:
    record: TaskRecord
    output: str  # head and tail, or all of it; redacted
    footer: str
    text: str  # what an agent reads: output, then footer

    def to_json(self) -> dict[str, object]:
        return {"status": "ok", "task": self.record.to_json(), "output": self.output, "footer": self.footer}


def footer(record: TaskRecord) -> str:
    """``[running | 12.3s | task t-3f9a2c | 1.2 KiB]``, ``[exit:0 | 5.02s | task t-3f9a2c]``..."""
    duration = f"{record.duration_s or 0:.2f}s"
    parts = ["running" if record.running else f"exit:{'-' if record.exit_code is None else record.exit_code}",
             duration]
    if ending := record.ending():
        parts.append(ending)
    parts.append(f"task {record.id}" + (f" ({record.name})" if record.name else ""))
    if record.running:
        parts.append(f"{format_size(record.output_bytes)} so far")
    for forward in record.forwards:
        parts.append(f"forward {forward.host} -> {forward.port}")
    return "[" + " | ".join(parts) + "]"


def render(record: TaskRecord, host_log: Path, config: PresenterConfig, redact: Redactor) -> TaskView:
    output = _output(host_log, record, config, redact)
    foot = footer(record)
    return TaskView(record, output, foot, f"{output}\n{foot}" if output else foot)


def _output(host_log: Path, record: TaskRecord, config: PresenterConfig, redact: Redactor) -> str:
    try:
        src = host_log.open("rb")
    except OSError:
        if record.output_bytes:
            return "[the output is gone: it was removed with its sandbox]"
        return ""
    with src:
        sample = src.read(config.binary_sample_bytes)
        if not sample:
            return ""
        kind = classify(sample, config.binary_threshold)
        if kind is not None:
            return (f"[binary output not shown: {kind.label}, {format_size(record.output_bytes)}. "
                    f"The whole output: {record.output_file}]")
        src.seek(0)
        limits = config.stdout_limits()
        small = src.read(limits.max_bytes + 1)
        lines = small.count(b"\n") + (0 if small.endswith(b"\n") else 1)
        if len(small) <= limits.max_bytes and lines <= limits.max_lines:
            return redact(clean_text(decode(small)))
        src.seek(0)
        index = scan(src, head=limits.head_lines, tail=limits.tail_lines, chunk_bytes=config.chunk_bytes)
        return render_overflow(src, index, limits, saved=record.output_file, save_error="",
                               redact=redact).text()


def log_text(host_log: Path, offset: int, limit: int, redact: Redactor, *, final: bool) -> tuple[str, int]:
    """Redacted text of the log from ``offset`` (at most ``limit`` bytes, whole lines unless ``final``);
    returns it and the offset to read from next."""
    data = read_range(host_log, offset, limit)
    if not final and len(data) >= limit:
        cut = data.rfind(b"\n")
        data = data[:cut + 1] if cut >= 0 else data  # one line longer than a chunk goes out as it is
    elif not final:
        cut = data.rfind(b"\n")
        data = data[:cut + 1] if cut >= 0 else b""  # a partial last line waits for its end
    return redact(decode(data)), offset + len(data)
