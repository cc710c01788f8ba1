"""``canal port-forward``: reach a port inside a sandbox from the host, which keeps ``network: none``."""

from __future__ import annotations

import json
import queue
import threading

import click

from canal.cli.shared import App, pass_app
from canal.runtime.run.interrupt import on_interrupt
from canal.runtime.sandboxes.start import DEFAULT_SANDBOX


@click.command("port-forward")
@click.argument("args", nargs=-1, required=True, metavar="[SANDBOX] [127.0.0.1:]HOSTPORT:PORT")
@click.option("--json", "as_json", is_flag=True, help="Print the listening address, then at the end the "
              "totals, as one JSON object per line.")
@pass_app
def port_forward(app: App, args: tuple[str, ...], as_json: bool) -> None:
    """Listen on 127.0.0.1:HOSTPORT and relay each connection to PORT inside SANDBOX (default: default),
    until Ctrl-C, like kubectl port-forward.

    The sandbox gets no network: each connection goes through its background agent to the sandbox's own
    loopback. Only your own user can connect; HOSTPORT 0 picks a free port. Opening and closing are
    audited, with the bytes relayed.

    \b
    Example: canal task start -- python3 -m http.server 8000
             canal port-forward 8080:8000      (then: curl http://127.0.0.1:8080/)
    """
    if len(args) > 2:
        msg = "give at most a sandbox and one [127.0.0.1:]HOSTPORT:PORT"
        raise click.UsageError(msg)
    sandbox, spec = (args[0], args[1]) if len(args) == 2 else (DEFAULT_SANDBOX, args[0])
    events: queue.Queue[str] = queue.Queue()
    forwarder = app.canal.tasks.forward(spec, sandbox=sandbox, on_event=lambda e: events.put(e.message))
    stop = threading.Event()
    try:
        if as_json:  # one JSON object per line: a program reads the first as soon as it listens
            click.echo(json.dumps({"status": "forwarding", "listen": forwarder.address, "sandbox": sandbox,
                                   "port": forwarder.spec.port}))
        else:
            click.echo(f"Forwarding {forwarder.address} -> port {forwarder.spec.port} in sandbox {sandbox} "
                       "(this machine only; Ctrl-C stops)")
        with on_interrupt(lambda _why: stop.set()):
            while not stop.is_set() and not (forwarder.closed.is_set() and events.empty()):
                try:
                    click.echo(events.get(timeout=0.2), err=True)  # printed on this call's own thread
                except queue.Empty:
                    continue
    except KeyboardInterrupt:
        pass  # in-process Ctrl-C: stop forwarding
    finally:
        summary = forwarder.close("stopped")
    if as_json:
        click.echo(json.dumps({"status": "stopped", **summary}))
    else:
        click.echo(f"Stopped forwarding {forwarder.address}: {summary['connections']} connection(s), "
                   f"{summary['bytes_to_sandbox']} bytes in, {summary['bytes_from_sandbox']} bytes out.",
                   err=True)
    if forwarder.gone:
        raise SystemExit(1)


def register(cli: click.Group) -> None:
    cli.add_command(port_forward)
