"""Host-only port forwarding into a sandbox that keeps ``network: none`` (see ``listener.py``)."""

from canal.runtime.sandboxes.forward.listener import Forwarder, ForwardEvent
from canal.runtime.sandboxes.forward.spec import ForwardSpec, parse_forward

__all__ = ["ForwardEvent", "ForwardSpec", "Forwarder", "parse_forward"]
