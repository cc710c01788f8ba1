from __future__ import annotations

from canal.host.checkpoints.compare import changes
from canal.host.checkpoints.scan import Entry
from canal.host.forks.plan import conflicts, selected
from canal.policy.loader import load_policy


def f(ref: str, mode: int = 0o644) -> Entry:
    return ("f", mode, 1, 0, 1000, 1000, f"{ref * 64}-0644-1000-1000")


def d() -> Entry:
    return ("d", 0o755, 0, 0, 1000, 1000, "")


BASE = {"src": d(), "src/a.py": f("a"), "docs": d(), "docs/x.md": f("b")}
NOW = {"src": d(), "src/a.py": f("c"), "docs": d(), "new": d(), "new/deep": d(), "new/deep/n.py": f("d")}


def test_selected_paths_bring_their_new_parent_folders() -> None:
    found = changes(BASE, NOW)
    assert [c.path for c in selected(found, ("new/deep/n.py",), BASE, NOW)] == ["new", "new/deep",
                                                                                 "new/deep/n.py"]
    assert [c.path for c in selected(found, ("src/",), BASE, NOW)] == ["src/a.py"]
    assert len(selected(found, (), BASE, NOW)) == len(found)


def test_conflicts_are_paths_both_sides_changed_including_inside_a_folder() -> None:
    fork = changes(BASE, NOW)
    project = changes(BASE, {**BASE, "docs/x.md": f("e"), "src/a.py": f("f")})
    assert [c.path for c in conflicts(fork, project)] == ["docs/x.md", "src/a.py"]
    untouched = changes(BASE, {**BASE, "other.txt": f("g")})
    assert conflicts(fork, untouched) == []


def test_the_autonomous_profile_asks_nothing_and_still_denies() -> None:
    policy = load_policy("autonomous")
    assert policy.decide("rm -rf build").action == "allow"
    assert policy.decide("git push --force").action == "allow"
    assert policy.decide("rm -rf /").action == "deny"
    assert load_policy("standard").decide("rm -rf build").action == "confirm"
