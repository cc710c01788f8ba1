"""Shell parsing: tree-sitter-bash into segments with wrappers unwrapped and code execution marked."""

from canal.policy.shell.model import ParseResult, Redirect, Segment, Word
from canal.policy.shell.parser import PARSER_VERSION, parse

__all__ = ["PARSER_VERSION", "ParseResult", "Redirect", "Segment", "Word", "parse"]
