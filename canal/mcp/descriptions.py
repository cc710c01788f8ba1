"""What the model reads about each tool: a small prompt each (what it does, when a sibling fits better,
defaults, consequences, an example that really runs). The server instructions tie them together."""

from __future__ import annotations

INSTRUCTIONS = """\
Canal runs your commands in a hardened sandbox container under a policy, and keeps every file \
operation reversible. The project folder is /workspace in the sandbox; file tools take paths relative \
to it. Every reply ends with what to do next when something went wrong: a CODE on the first line, what \
happened, then "Next:". A CONFIRMATION_REQUIRED reply means nothing ran: ask the user, then repeat the \
same call with confirm_token. Deleted and overwritten files go to a host-side trash: restore(trash_id) \
puts them back. Long or never-ending commands (test suites, builds, dev servers) go to task_start: they \
run in the background while you keep working."""

RUN_COMMAND = """\
Run a shell command (bash) in this project's sandbox and return what it printed, then a footer such \
as [exit:0 | 0.12s]. The working directory and exported variables persist between calls, like one \
terminal; the project folder is /workspace.

Policy decides before anything runs. Allowed commands run. Destructive or unanalysable ones (rm -r, \
git push --force, curl | sh, ...) return CONFIRMATION_REQUIRED with a token and NOTHING RAN: ask the \
user, then call again with the same command and confirm_token; the token works once, for exactly that \
command. Denied commands return POLICY_DENIED and cannot be confirmed. Before a confirmed destructive \
command runs, the files it targets are backed up; the reply names the trash id for restore.

Long output is cut to its first and last lines, and the full output is saved in the sandbox at the \
path the reply names (/canal/output/...): read it with a second run_command (grep -n PATTERN PATH, or \
sed -n '200,300p' PATH) instead of re-running the command. A non-zero exit status is a result, not an \
error: stderr is attached.

A command that may run longer than its timeout, or a server that never ends, belongs in task_start \
instead: it returns at once and runs in the background.

Use view to read a file with line numbers, edit to change one (it returns the diff), remove to delete \
(reversible, no confirmation), restore to undo; list_capabilities for the project's own tools.

Defaults: timeout from canal.yaml (timeouts.command, 120 s unless set); no confirm_token.
Example: {"command": "ls -la && python3 --version"}
Example: {"command": "pytest -q tests/unit", "timeout": 600}
After CONFIRMATION_REQUIRED: {"command": "rm -rf build", "confirm_token": "c_k3j9x2mqa7fe"}"""

VIEW = """\
Show a text file with numbered lines, a folder's entries, or the size and hash of a binary file. \
Read-only. Paths are relative to the project folder; /workspace/... works too; nothing outside the \
project can be read.

Each line starts with its number, right-aligned, and a tab ("     1\\t", as cat -n prints it); the \
last line says which lines were shown. The numbers are for orientation: do not copy them into edit's \
old text. Secrets in the file are shown as placeholders. To search many files use run_command with rg \
or grep -n.

Defaults: path "." (the project folder); range from line 1, at most 2000 lines (the reply says how \
many lines the file has, so you can ask for the next range).
Example: {"path": "README.md", "range": "1:40"}
Example: {"path": "src"}"""

EDIT = """\
Replace exact text in one file, atomically, and return the unified diff of the change.

old must match exactly once, whitespace and indentation included. When it is not found, the reply \
shows the closest lines; when it occurs several times, the reply lists their line numbers. In both \
cases NOTHING IS WRITTEN: call view, then retry with more surrounding text in old (or replace_all). \
Edits are recorded in the audit log.

Use write to create a file or replace all of it, run_command for changes a script makes better; use \
remove to delete a file.

Defaults: replace_all false (exactly one occurrence).
Example: {"path": "src/app.py", "old": "return 1", "new": "return 2"}
Example: {"path": "setup.cfg", "old": "version = 0.1", "new": "version = 0.2", "replace_all": true}"""

REMOVE = """\
Move files or folders to the host-side trash. Nothing is deleted outright, and no confirmation is \
needed because every removal can be undone: each reply line names the trash id for restore.

Every path is checked before the first one moves, so a bad path leaves everything in place. A path \
that is already gone is reported, not an error. Folders need recursive: true. Prefer this tool over \
run_command rm, which asks for confirmation.

Defaults: recursive false.
Example: {"path": "build.log"}
Example: {"path": ["dist", "build"], "recursive": true}"""

RESTORE = """\
Put a trashed file or folder back at the path it was removed from, with its modes. The trash id comes \
from remove, or from a backup line of run_command ("[backup of PATH: call restore {...}]").

Refused when something already exists at that path (nothing is overwritten): move that one away \
first (remove it: it can be restored too), then call restore again.

Example: {"trash_id": "t20250101T120000Z-3f9a2c"}"""

WORKFLOW = """\
Drive one of the project's workflows (a fixed sequence of steps; Canal keeps its state and order).

action "list" shows the workflows you can start (the project's workflows/ folder, then the ones \
shipped with Canal), one line each. action "describe" (name required) shows a workflow's steps in \
order and the fields each interactive step asks for. action "start" (name required) begins a run and \
returns its run_id and the first step's instructions and gate fields. action "advance" (run_id \
required) submits gate_data for the current step: the fields are validated (a rejection lists what \
was wrong, nothing advances), then automated steps run in the sandbox under the same policy until the \
next step that needs you. action "current" (run_id required) shows where a run is, without changing it.

When an automated step needs confirmation, advance returns CONFIRMATION_REQUIRED with a token and the \
step did not run: ask the user, then advance again with confirm_token (same run_id).

Defaults: gate_data none, confirm_token none.
Example: {"action": "list"}
Example: {"action": "describe", "name": "cleanup-build"}
Example: {"action": "start", "name": "cleanup-build"}
Example: {"action": "advance", "run_id": "r_8k2m", "gate_data": {"version": "1.4.0"}}
Example: {"action": "current", "run_id": "r_8k2m"}"""

WRITE = """\
Write a whole file: create it (and its folders), or replace all of its content. A file it replaces is \
kept in the host-side trash first (the reply names the trash id for restore), and a checkpoint is taken \
before, so the write can be undone.

Use edit to change part of a file (it returns the diff); use view to read a file first.

Example: {"path": "notes/todo.md", "content": "- write the tests\\n"}"""

TRASH = """\
List what is in this project's host-side trash, oldest first: one line each with the trash id, when \
it was removed, what it is, its size and its path. Read-only. restore(trash_id) puts one back.

Example: {}"""

LIST_CAPABILITIES = """\
List the project's own tools (defined in tools/*.yaml) and the workflows you can start: one line each, \
name and what it does. Read-only.

Use this first when the user asks for something the project has a tool for; then describe_capability \
for one tool's fields, and call_capability to run it. For plain shell commands use run_command.

Defaults: no query (everything).
Example: {}
Example: {"query": "deploy staging"}"""

DESCRIBE_CAPABILITY = """\
Show one project tool's fields: name, type, required (*) or not, defaults, allowed values, notes, and \
an example call. Read-only. Call this before call_capability when you do not know the fields.

Example: {"name": "create_project"}"""

CALL_CAPABILITY = """\
Run one project tool in the sandbox. The arguments are validated like a form first (a missing or \
wrong field is rejected with the list of fields; nothing runs); values reach the tool only as whole \
arguments or environment variables, never spliced into a shell string. The call goes through the same \
policy as run_command: CONFIRMATION_REQUIRED means nothing ran; ask the user, then call again with the \
same name and arguments and confirm_token.

Defaults: arguments {} (no fields); no confirm_token.
Example: {"name": "list_files", "arguments": {"path": "src"}}"""

CHECKPOINTS = """\
List the workspace's newest checkpoints (Default: 20; limit asks for up to 500), oldest first: id, \
time, the command that followed, and which files changed after it; how many older ones were left out \
is said. \
Canal takes one before every command that may change the project, so anything a command did can be \
undone. What a checkpoint did not cover (.gitignore'd paths, files over the size cap) is listed under \
it: changes there cannot be undone. Read-only.

Example: {"limit": 5}"""

DIFF = """\
Show what changed in the project since a checkpoint: a unified diff of text files, then binary, mode, \
symlink and deletion lines. Read-only. Use it after a command did something unexpected, before undo.

Defaults: checkpoint = the newest (what the last command changed).
Example: {}
Example: {"checkpoint": "cp-12"}"""

UNDO = """\
Put the project back exactly as it was at a checkpoint: bytes, modes and symlinks. A checkpoint is \
taken first, so the reply names the id that reverts this undo. Paths the checkpoint did not cover are \
left alone. No confirmation is needed: undo itself can be undone.

Defaults: checkpoint = before the newest command that changed something (the reply names it).
Example: {}
Example: {"checkpoint": "cp-12"}"""

FORK = """\
SANDBOX MODE for an autonomous subagent: start a new sandbox whose /workspace is a copy-on-write copy \
of the project (now, or at a checkpoint). It is isolated: the real project is not mounted in it, so \
commands there run WITHOUT confirmations (deny rules still apply, a strict project's secret files \
stay unreadable, and its network is the project's). \
Work there with run_command {"sandbox": NAME, ...}; nothing you do reaches the project. Your work is \
a PROPOSAL: changes shows it as a patch, and apply carries it to the project only after the user \
confirms; discard drops it.

Defaults: from_checkpoint none (the project as it is now).
Example: {"name": "try-upgrade"}
Example: {"name": "bisect", "from_checkpoint": "cp-7"}"""

CHANGES = """\
Show what a fork changed since it was made: a git-apply-compatible patch, then binary, mode, symlink \
and deletion lines, and what apply cannot carry (files over the size cap, pipes). Read-only.

Example: {"name": "try-upgrade"}"""

APPLY = """\
Propose a fork's changes to the real project. The first call lists the files and returns \
CONFIRMATION_REQUIRED: NOTHING WAS APPLIED; ask the user, then call again with the same name and paths \
and confirm_token. Then the project is checkpointed, and the changes are written (undo with the \
checkpoint the reply names). Paths that also changed in the real project since the fork are refused \
as FORK_CONFLICT and nothing is written: apply only the other paths, or ask the user.

Defaults: paths [] (every change); no confirm_token.
Example: {"name": "try-upgrade"}
Example: {"name": "try-upgrade", "paths": ["src/"]}
After CONFIRMATION_REQUIRED: {"name": "try-upgrade", "confirm_token": "c_k3j9x2mqa7fe"}"""

DISCARD = """\
Remove a fork: its sandbox and its copy of the project. The real project is not touched, and a \
discarded fork's changes are gone.

Example: {"name": "try-upgrade"}"""
