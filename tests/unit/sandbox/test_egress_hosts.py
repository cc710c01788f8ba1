"""The egress proxy's refusal list: the host's interface addresses and the engine's networks."""

from __future__ import annotations

from pathlib import Path

from canal.sandbox.egress_hosts import collapsed, host_networks, refused_destinations
from canal.sandbox.egress_squid import BLOCKED_DESTINATIONS

FIB_TRIE = """Main:
  +-- 0.0.0.0/0 3 0 4
     +-- 127.0.0.0/8 2 0 2
           |-- 127.0.0.1
              /32 host LOCAL
     +-- 172.17.0.0/16 2 0 2
           |-- 172.17.0.0
              /16 link UNICAST
           |-- 172.17.0.1
              /32 host LOCAL
        |-- 172.17.255.255
           /32 link BROADCAST
     +-- 192.168.1.0/24 2 0 2
           |-- 192.168.1.20
              /32 host LOCAL
"""
IF_INET6 = """fe8000000000000000fc00fffe000001 04 40 20 80     eth0
fd000000000000000000000000000002 04 40 00 82     eth0
00000000000000000000000000000001 01 80 10 80       lo
"""


NETWORKS = [
    {"Name": "bridge", "IPAM": {"Config": [{"Subnet": "172.17.0.0/16"}]}},  # docker0: no Gateway key
    {"Name": "host", "IPAM": {"Config": []}},
    {"Name": "none", "IPAM": None},
    {"Name": "other-egress-out", "IPAM": {"Config": [{"Subnet": "172.20.0.0/16", "Gateway": "172.20.0.1"},
                                                     {"Subnet": "fd10::/64", "Gateway": "fd10::1"}]}},
    {"Name": "me-egress-out", "IPAM": {"Config": [{"Subnet": "172.21.0.0/16", "Gateway": "172.21.0.1"}]}},
    {"Name": "me-egress-x-in", "IPAM": {"Config": [{"Subnet": "172.22.0.0/16", "Gateway": "172.22.0.1"}]}},
]


def files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "fib_trie").write_text(FIB_TRIE)
    (tmp_path / "if_inet6").write_text(IF_INET6)
    return tmp_path / "fib_trie", tmp_path / "if_inet6"


def test_every_local_address_of_the_host_v4_and_v6(tmp_path: Path) -> None:
    found = {str(n) for n in host_networks(*files(tmp_path))}
    assert found == {"127.0.0.1/32", "172.17.0.1/32", "192.168.1.20/32", "fe80::fc:ff:fe00:1/128",
                     "fd00::2/128", "::1/128"}


def test_gateways_of_every_network_and_subnets_of_all_but_the_routes_own(tmp_path: Path) -> None:
    host = host_networks(*files(tmp_path))
    refused = refused_destinations(NETWORKS, own=("me-egress-out", "me-egress-x-in"), host=host)
    assert "172.17.0.0/16" in refused  # the default bridge, its gateway (172.17.0.1) inside it
    assert "172.17.0.1" not in refused  # collapsed: squid gets no overlapping entries
    wanted = {"172.20.0.0/16", "fd10::/64", "172.21.0.1", "172.22.0.1", "192.168.1.20", "fd00::2"}
    assert wanted <= set(refused)
    assert not any(r.startswith(("172.21.0.0", "172.22.0.0")) for r in refused)  # the route's own subnets


def test_no_proc_files_still_refuses_the_engines_gateways(tmp_path: Path) -> None:
    assert host_networks(tmp_path / "absent", tmp_path / "absent6") == []


def test_the_fixed_list_and_the_hosts_collapse_into_entries_squid_takes_without_warning() -> None:
    entries = collapsed([*BLOCKED_DESTINATIONS, "127.0.0.1", "fe80::fc:ff:fe00:1", "10.0.0.1/32", "10.0.0.2"])
    assert entries == ["0.0.0.0/8", "10.0.0.1", "10.0.0.2", "127.0.0.0/8", "169.254.0.0/16", "::1",
                       "fe80::/10"]
    assert collapsed(["not-an-address"]) == ["not-an-address"]  # squid refuses it: the proxy does not start
