"""The arguments of each MCP tool: one pydantic model each, the source of both the advertised input
schema and the validation. A field's description is its constraint; an invalid call repeats it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, WithJsonSchema

from canal.mcp.args import Command, JsonObject, LineRange, PathList, ProjectPath, Seconds, Token

MAX_TIMEOUT_S = 3600.0
SANDBOX_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,40}$"
CHECKPOINT_DOC = "A checkpoint id (cp-12) from a run_command footer or checkpoints."


class ToolArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _f(description: str, *aliases: str, default: Any = ..., **kw: Any) -> Any:
    alias = AliasChoices(*aliases) if aliases else None
    if "default_factory" in kw:
        return Field(description=description, validation_alias=alias, **kw)
    return Field(default, description=description, validation_alias=alias, **kw)


TOKEN_DOC = ("The token from a CONFIRMATION_REQUIRED reply (c_...). Valid once, for exactly the same "
             "command, until it expires. Default: none.")


class RunCommandArgs(ToolArgs):
    command: Command = _f("The shell command, as one string (bash syntax). A list is joined with shell "
                          "quoting.", "command", "cmd", "script", min_length=1)
    timeout: Seconds | None = _f(f"Seconds before the command is killed, above 0 and at most "
                                 f"{MAX_TIMEOUT_S:.0f}. Default: canal.yaml timeouts.command (120 unless "
                                 "set).",
                                 "timeout", "timeout_s", "timeout_seconds", default=None, gt=0,
                                 le=MAX_TIMEOUT_S)
    confirm_token: Token | None = _f(TOKEN_DOC, "confirm_token", "confirm", "token", default=None)
    sandbox: Token | None = _f("Run in this existing sandbox: a fork's name (from fork) runs it in the "
                               "fork's copy of the project; a name that is no sandbox or fork is refused "
                               "(SANDBOX_UNKNOWN, with the existing ones). Default: the project's own "
                               "sandbox.",
                               "sandbox", "fork", default=None, pattern=SANDBOX_NAME)


RangeSchema = WithJsonSchema({"type": "string", "pattern": r"^\d*:\d*$",
                              "description": "Lines A:B, 1-based and inclusive; A: to the end; :B from the "
                                             "start. Default: from line 1, at most 2000 lines."})


class ViewArgs(ToolArgs):
    path: ProjectPath = _f("A file or folder, relative to the project folder (a /workspace/... path "
                           "works too). Default: \".\" (the project folder).",
                           "path", "file", "file_path", "filename", default=".")
    range: Annotated[LineRange | None, RangeSchema] = _f(
        "Lines A:B, 1-based and inclusive; A: to the end; :B from the start. Default: from line 1, at "
        "most 2000 lines.", "range", "lines", "line_range", default=None)


class EditArgs(ToolArgs):
    path: ProjectPath = _f("The file to change, relative to the project folder (a /workspace/... path "
                           "works too).", "path", "file", "file_path", "filename", min_length=1)
    old: str = _f("The exact text to replace, whitespace and indentation included, without view's "
                  "line-number prefixes. Must not be empty.", "old", "old_string", "old_str", "search")
    new: str = _f("The text to put in its place (may be empty to delete the text).",
                  "new", "new_string", "new_str", "replace", "replacement")
    replace_all: bool = _f("Replace every occurrence instead of exactly one. Default: false.",
                           "replace_all", "all", default=False)


class RemoveArgs(ToolArgs):
    path: PathList = _f("One path or a list of paths, relative to the project folder (/workspace/... "
                        "works too). A space-separated string is split like a shell would.",
                        "path", "paths", "file", "files", min_length=1)
    recursive: bool = _f("Needed to remove a folder with everything in it. Default: false.",
                         "recursive", "r", default=False)


class RestoreArgs(ToolArgs):
    trash_id: Token = _f("The trash id from remove or a backup line of run_command (t2025...-xxxxxx).",
                         "trash_id", "id", "entry_id", "trash", min_length=1)


class WorkflowArgs(ToolArgs):
    action: Literal["list", "describe", "start", "advance", "current"] = _f(
        "list (the workflows you can start), describe (needs name: its steps and fields), start (needs "
        "name), advance (needs run_id; gate_data for the current step), or current (needs run_id).",
        "action", "op")
    name: str | None = _f("The workflow to describe or start, as list prints it. Default: none.", "name",
                          "workflow", default=None)
    run_id: Token | None = _f("The run id that start returned (for advance and current). Default: none.",
                              "run_id", "run", "id", default=None)
    gate_data: JsonObject | None = _f("The current step's gate fields as one JSON object (for advance). "
                                      "Default: none.", "gate_data", "data", "gate", default=None)
    confirm_token: Token | None = _f(TOKEN_DOC, "confirm_token", "confirm", "token", default=None)


class WriteArgs(ToolArgs):
    path: ProjectPath = _f("The file to write, relative to the project folder (a /workspace/... path works "
                           "too). Missing folders are created.", "path", "file", "file_path", "filename",
                           min_length=1)
    content: str = _f("The whole new content of the file (text).", "content", "text", "data", "contents")


class TrashArgs(ToolArgs):
    """No arguments: the whole trash of this project, oldest first."""


class ListCapabilitiesArgs(ToolArgs):
    query: str | None = _f("Words to filter by (matched against names and descriptions, all must "
                           "match). Default: none (list everything).", "query", "q", "search", "filter",
                           default=None)


class DescribeCapabilityArgs(ToolArgs):
    name: Token = _f("The capability name exactly as list_capabilities prints it.", "name", "tool",
                     "capability", min_length=1)


class CallCapabilityArgs(ToolArgs):
    name: Token = _f("The capability name exactly as list_capabilities prints it.", "name", "tool",
                     "capability", min_length=1)
    arguments: JsonObject = _f("Its fields as one JSON object, as describe_capability lists them. "
                               "Default: {} (no fields).", "arguments", "args", "params", "input",
                               default_factory=dict)
    confirm_token: Token | None = _f(TOKEN_DOC, "confirm_token", "confirm", "token", default=None)


MAX_LISTED = 500


class CheckpointsArgs(ToolArgs):
    limit: int = _f(f"How many of the newest checkpoints to list, 1 to {MAX_LISTED}. Default: 20.",
                    "limit", "count", "n", default=20, ge=1, le=MAX_LISTED)


class DiffArgs(ToolArgs):
    checkpoint: Token | None = _f(CHECKPOINT_DOC + " Default: the newest (what the last command changed).",
                                  "checkpoint", "id", "checkpoint_id", default=None)


class UndoArgs(ToolArgs):
    checkpoint: Token | None = _f(CHECKPOINT_DOC + " Default: before the newest command that changed "
                                  "something.",
                                  "checkpoint", "id", "checkpoint_id", default=None)


class ForkArgs(ToolArgs):
    name: Token = _f("The fork's name: letters, digits, '_', '.', '-' (at most 41).", "name", "fork",
                     min_length=1, pattern=SANDBOX_NAME)
    from_checkpoint: Token | None = _f(CHECKPOINT_DOC + " Default: the project as it is now.",
                                       "from_checkpoint", "from", "checkpoint", default=None)


class ForkNameArgs(ToolArgs):
    name: Token = _f("The fork's name, as given to fork.", "name", "fork", min_length=1, pattern=SANDBOX_NAME)


class ApplyArgs(ToolArgs):
    name: Token = _f("The fork's name, as given to fork.", "name", "fork", min_length=1, pattern=SANDBOX_NAME)
    paths: PathList = _f("Apply only these paths (files or folders, relative to the project). Default: "
                         "every change.", "paths", "path", default_factory=list)
    confirm_token: Token | None = _f("The token from apply's CONFIRMATION_REQUIRED reply (c_...). Valid "
                                     "once, for exactly the same change set. Default: none.",
                                     "confirm_token", "confirm", "token", default=None)
