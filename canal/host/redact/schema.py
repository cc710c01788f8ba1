"""The gitleaks TOML rule format, as parsed from a file (built-in or an operator's).

Unknown keys are ignored rather than refused: gitleaks adds fields over time (``tags``, ``[extend]``,
report options) and an operator must be able to load the upstream default config of any version.
Fields that would change what a rule matches are all modelled here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class RawAllowlist(_Model):
    description: str = ""
    regex_target: Literal["secret", "match", "line"] = Field("secret", alias="regexTarget")
    regexes: tuple[str, ...] = ()
    stopwords: tuple[str, ...] = ()
    condition: Literal["OR", "AND", "or", "and"] = "OR"
    paths: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()


class RawRule(_Model):
    id: str = Field(min_length=1)
    description: str = ""
    regex: str | None = None
    path: str | None = None
    secret_group: int = Field(0, alias="secretGroup", ge=0)
    entropy: float = Field(0.0, ge=0.0)
    keywords: tuple[str, ...] = ()
    allowlists: tuple[RawAllowlist, ...] = ()
    allowlist: RawAllowlist | None = None  # gitleaks before v8.21: one allowlist per rule


class RawConfig(_Model):
    title: str = ""
    rules: tuple[RawRule, ...] = ()
    allowlist: RawAllowlist | None = None  # the global allowlist (gitleaks before v8.25)
    allowlists: tuple[RawAllowlist, ...] = ()  # global allowlists (gitleaks v8.25 and later)
