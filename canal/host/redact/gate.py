"""Whether a rule with keywords can match a long text at all, for every such rule in one pass.

A rule runs when one of its keywords is in the text (gitleaks' semantics), and some keywords are
common by chance: ``://`` in log output, ``acca`` in hex digests, ``aws`` and ``sk`` in base64. Such a
rule's regex then ran over the whole block (1-9 ms a MiB). Here the rules' patterns, made larger
(``relax``: counted repeats opened, lookarounds dropped), are one Hyperscan database in which each
reports its first match only; a rule whose larger pattern matches nowhere cannot match, and is
skipped. Only ASCII text (Hyperscan's ``\\w``, ``\\s`` and ``\\b`` are then those of the rules), and
only texts of ``BATCH_MIN`` characters or more: the database is compiled with the first such text
(0.1-0.2 s for the built-in rules), not when a redactor is made, and short texts gain little.
Keyword-anchored rules are left to ``anchors``, rules without keywords to ``prefilter``.
"""

from __future__ import annotations

from collections.abc import Sequence

from canal.host.redact.entropy import BATCH_MIN
from canal.host.redact.keywords import hyperscan
from canal.host.redact.prefilter import PatternSet, portable
from canal.host.redact.relax import relaxed
from canal.host.redact.rules import Rule


class RuleGate(PatternSet):
    def __init__(self, rules: Sequence[Rule]) -> None:
        super().__init__(_FLAGS)
        self._wanted = tuple((i, p) for i, r in enumerate(rules) if r.keywords and not r.anchored
                             and (p := _larger(r.expression)) is not None)
        self._built = False

    def possible(self, text: str) -> frozenset[int] | None:
        """Indexes of covered rules that may match ``text``; None when the gate does not apply
        (every rule whose keywords are present then runs)."""
        if hyperscan is None or len(text) < BATCH_MIN or not text.isascii():
            return None
        if not self._built:
            self._use(self._wanted)
            self._built = True
        return None if self._db is None else self._matching(text)


def _larger(pattern: str) -> str | None:
    if not pattern.isascii() or not portable(pattern):
        return None
    return relaxed(pattern)


_FLAGS = 0 if hyperscan is None else (hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_DOTALL
                                      | hyperscan.HS_FLAG_MULTILINE)
