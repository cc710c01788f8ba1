"""The on-disk shape of a sealed file (``canal.sealed/1``): readable structure, sealed values."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class Envelope(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["canal.sealed/1"] = "canal.sealed/1"
    doc_id: str
    revision: int
    written_at: str
    key_id: str
    data_key: str
    sealed: list[str]  # JSON pointers of the sealed values, in document order
    secrets: dict[str, str]  # redaction placeholder -> sealed value
    doc: Any
    mac: str

    def mac_payload(self, plain_doc: Any) -> dict[str, Any]:
        """Everything but the MAC itself, with the document in plaintext."""
        return {**self.model_dump(exclude={"mac", "doc"}), "doc": plain_doc}
