"""An example MCP stdio server on the standard library: a ticket tracker kept in /tmp/tickets.json of
its sandbox (a server's sandbox has no workspace unless its settings ask for one, read-only).

Its tools say what they do in MCP annotations, which Canal's policy reads: list_tickets only reads,
open_ticket adds without destroying anything, close_ticket says nothing (so it may destroy: Canal asks).
"""

import json
import pathlib
import sys

STORE = pathlib.Path("/tmp/tickets.json")
TOOLS = [
    {"name": "list_tickets", "description": "List the open tickets",
     "inputSchema": {"type": "object", "properties": {}}, "annotations": {"readOnlyHint": True}},
    {"name": "open_ticket", "description": "Open a ticket and return it",
     "inputSchema": {"type": "object", "required": ["title", "priority"], "properties": {
         "title": {"type": "string", "description": "What is wrong, in one line"},
         "priority": {"type": "integer", "description": "Priority: 1-urgent,2-normal,3-low"},
         "id": {"type": "integer", "description": "Assigned by the tracker"}}},
     "outputSchema": {"type": "object"}, "annotations": {"destructiveHint": False}},
    {"name": "close_ticket", "description": "Close a ticket",
     "inputSchema": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}},
]


def load():
    return json.loads(STORE.read_text()) if STORE.exists() else []


def call(name, args):
    tickets = load()
    if name == "list_tickets":
        lines = [f"#{t['id']} [p{t['priority']}] {t['title']}" for t in tickets] or ["no open tickets"]
        return {"content": [{"type": "text", "text": "\n".join(lines)}]}
    if name == "open_ticket":
        ticket = {"id": max([t["id"] for t in tickets], default=0) + 1, "title": args["title"],
                  "priority": args["priority"]}
        STORE.write_text(json.dumps([*tickets, ticket]))
        return {"content": [{"type": "text", "text": json.dumps(ticket)}], "structuredContent": ticket}
    if name == "close_ticket":
        left = [t for t in tickets if t["id"] != args["id"]]
        if len(left) == len(tickets):
            return {"content": [{"type": "text", "text": f"no ticket #{args['id']}"}], "isError": True}
        STORE.write_text(json.dumps(left))
        return {"content": [{"type": "text", "text": f"closed #{args['id']}"}]}
    return None


def reply(ident, **body):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, **body}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        continue  # notifications
    if method == "initialize":
        reply(ident, result={"protocolVersion": message["params"]["protocolVersion"],
                             "capabilities": {"tools": {}},
                             "serverInfo": {"name": "tickets", "version": "1"}})
    elif method == "tools/list":
        reply(ident, result={"tools": TOOLS})
    elif method == "tools/call":
        result = call(message["params"]["name"], message["params"].get("arguments") or {})
        if result is None:
            reply(ident, error={"code": -32602, "message": "unknown tool"})
        else:
            reply(ident, result=result)
    else:
        reply(ident, error={"code": -32601, "message": f"no method {method}"})
