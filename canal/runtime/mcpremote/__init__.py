"""Tools from MCP backends (``tools.mcp_servers`` in canal.yaml; docs/tools.md).

``canal discover`` lists each server's tools into the same catalog local tools use; a call goes through
the policy (``scope: tool`` rules over the tool's annotations), a confirmation when it asks for one,
the audit log and the presenter. A stdio server runs inside a sandbox of its own, started from the
approved bytes of the files its command names, so neither the agent's commands nor an edit of those
files reach its credentials.
"""
