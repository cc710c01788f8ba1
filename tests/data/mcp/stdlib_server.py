"""A minimal MCP stdio server on the standard library only (it runs in the default image).

Its tools are read from mcp/tools.json in the workspace at every tools/list (a server with
``workspace: ro``), so a test changes them between discover runs; without a workspace it lists
``DEFAULT``. Each call is appended to /tmp/calls.jsonl in its sandbox. ``--mode`` makes it misbehave the
ways a broken server does: hang, not-json, malformed.
"""

import hashlib
import json
import os
import sys
import time

WORKSPACE = "/workspace/mcp"
CALLS = "/tmp/calls.jsonl"
EMPTY = {"type": "object", "properties": {}}
DEFAULT = [{"name": "list_projects", "description": "List the projects", "inputSchema": EMPTY,
            "annotations": {"readOnlyHint": True}},
           {"name": "token_fingerprint", "description": "What the server was given", "inputSchema": EMPTY,
            "annotations": {"readOnlyHint": True}},
           {"name": "workspace_files", "description": "What the server sees of the project",
            "inputSchema": EMPTY, "annotations": {"readOnlyHint": True}}]
mode = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else "serve"


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tools():
    if not os.path.exists(f"{WORKSPACE}/tools.json"):
        return DEFAULT
    with open(f"{WORKSPACE}/tools.json") as fh:
        return json.load(fh)


def call(name, arguments):
    with open(CALLS, "a") as fh:
        fh.write(json.dumps({"tool": name, "arguments": arguments}) + "\n")
    if name == "list_projects":
        return {"content": [{"type": "text", "text": "alpha\nbeta"}]}
    if name == "create_project":
        made = {"created": arguments["name"], "kind": arguments["kind"], "id": 7}
        return {"content": [{"type": "text", "text": json.dumps(made)}], "structuredContent": made}
    if name == "token_fingerprint":  # what the server got from Canal's environment, as a digest only
        token = os.environ.get("BACKEND_TOKEN", "")
        return {"content": [{"type": "text", "text": hashlib.sha256(token.encode()).hexdigest()[:12]}]}
    if name == "delete_project":
        return {"content": [{"type": "text", "text": f"deleted {arguments['id']}"}]}
    if name == "workspace_files":
        found = sorted(os.listdir("/workspace")) if os.path.isdir("/workspace") else []
        return {"content": [{"type": "text", "text": json.dumps(found)}]}
    if name == "dump":
        return {"content": [{"type": "text", "text": "x" * (10 * 1024 * 1024)}]}
    if name == "fail":
        return {"content": [{"type": "text", "text": "the backend refused: quota exceeded"}], "isError": True}
    return None


for line in sys.stdin:
    message = json.loads(line)
    if mode == "hang":
        time.sleep(3600)
    if mode == "not-json":
        print("hello, I am not an MCP server", flush=True)
        continue
    if mode == "malformed":
        send({"jsonrpc": "2.0", "id": message.get("id")})
        continue
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        continue  # notifications
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "stdlib-backend", "version": "1"}}})
    elif method == "tools/list":
        listed, cursor = tools(), message.get("params", {}).get("cursor")
        start = int(cursor or 0)
        page = {"tools": listed[start:start + 2]}
        if start + 2 < len(listed):
            page["nextCursor"] = str(start + 2)
        send({"jsonrpc": "2.0", "id": ident, "result": page})
    elif method == "tools/call":
        params = message["params"]
        result = call(params["name"], params.get("arguments") or {})
        if result is None:
            error = {"code": -32602, "message": f"no tool {params['name']}"}
            send({"jsonrpc": "2.0", "id": ident, "error": error})
        else:
            send({"jsonrpc": "2.0", "id": ident, "result": result})
    else:
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": method}})
