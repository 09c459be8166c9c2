"""Kernel targets: each has its own patches/ folder and its own cache
paths, the first keeps the layout it had before targets, and a tree whose
commits already are the series is kept (its builds stay valid)."""

import dataclasses
import subprocess

import pytest

from tools.pns import kernel, module, runner, target, tree
from tools.pns.common import HarnessError


def test_unknown_target_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("KERNEL", "5.10")
    with pytest.raises(HarnessError, match=r"KERNEL='5.10': no such target; have 6.1 .*, 6.12 "):
        target.current()


@pytest.mark.parametrize("name, tree_name, build_name", [
    ("6.1", "linux", "debug-x86_64"),
    ("6.12", "linux-6.12", "debug-x86_64-6.12"),
])
def test_each_target_has_its_own_cache_paths(monkeypatch, tmp_path, name, tree_name, build_name):
    monkeypatch.setenv("PNS_CACHE", str(tmp_path))
    monkeypatch.setenv("KERNEL", name)
    assert tree.tree_dir() == tmp_path / tree_name
    assert kernel.build_dir("debug", "x86_64") == tmp_path / "build" / build_name
    assert tree.patches_dir() == target.PATCHES_ROOT / name
    assert (tree.patches_dir() / "series").exists()


def test_the_first_target_lists_its_series_and_the_second_may_be_empty(monkeypatch):
    monkeypatch.setenv("KERNEL", "6.1")
    assert tree.series() and all(p.parent == target.PATCHES_ROOT / "6.1" for p in tree.series())
    monkeypatch.setenv("KERNEL", "6.12")
    assert all(p.parent == target.PATCHES_ROOT / "6.12" for p in tree.series())


def test_a_target_without_the_stressor_refuses_runs_before_building(monkeypatch, tmp_path):
    monkeypatch.setenv("PNS_CACHE", str(tmp_path))
    monkeypatch.setenv("KERNEL", "6.12")
    no_stressor = dataclasses.replace(target.BY_NAME["6.12"], stressor=False)
    monkeypatch.setattr(target, "current", lambda: no_stressor)
    built = []
    monkeypatch.setattr(kernel, "build", lambda *a: built.append(a))
    for call in (runner.build_all, runner.built,
                 lambda: module.build("debug", "x86_64", tmp_path)):
        with pytest.raises(HarnessError, match="KERNEL=6.12: lib-printk-stress does not build"):
            call()
    assert built == []



@pytest.mark.parametrize("kernel_target, console, line", [
    ("6.1", "nobkl", "earlycon=uart8250"),
    ("6.1", "legacy", "console=ttyS0"),
    ("6.12", "nobkl", "console=ttyS0"),
])
def test_each_target_boots_its_own_console(monkeypatch, kernel_target, console, line):
    monkeypatch.setenv("KERNEL", kernel_target)
    monkeypatch.setenv("CONSOLE", console)
    assert line in runner.console_cmdline().read_text()


def test_a_console_the_target_lacks_is_refused(monkeypatch):
    monkeypatch.setenv("KERNEL", "6.12")
    monkeypatch.setenv("CONSOLE", "legacy")
    with pytest.raises(HarnessError, match="CONSOLE=legacy: KERNEL=6.12 has nobkl"):
        runner.console_cmdline()

def _git(cwd, *args):
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                          text=True, env={"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x",
                                          "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x",
                                          "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}).stdout


@pytest.fixture
def small_tree(monkeypatch, tmp_path):
    """A two-commit tree over pns-base in a cache of its own, its series
    written by `make patches` into a patches folder of its own."""
    monkeypatch.setenv("PNS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNEL", "6.1")
    linux = tree.tree_dir()
    linux.mkdir(parents=True)
    _git(linux, "init", "-q", "-b", "nobkl")
    (linux / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\n")
    _git(linux, "add", "Makefile")
    _git(linux, "commit", "-q", "-m", "base")
    _git(linux, "tag", tree.BASE_TAG)
    for n in (1, 2):
        (linux / f"f{n}.c").write_text(f"int f{n};\n")
        _git(linux, "add", f"f{n}.c")
        _git(linux, "commit", "-q", "-m", f"printk: Add f{n}\n\nWhy f{n}.")
    patches = tmp_path / "patches"
    monkeypatch.setattr(tree, "patches_dir", lambda: patches)
    monkeypatch.setattr(tree, "extract", lambda log: False)
    with monkeypatch.context() as m:
        m.setattr(tree, "prepare", lambda: linux)
        tree.export_patches()
    assert [p.name for p in tree.series()] == ["0001-printk-Add-f1.patch",
                                               "0002-printk-Add-f2.patch"]
    return linux, patches


def test_a_tree_that_carries_its_series_is_kept(small_tree):
    linux, patches = small_tree
    head = _git(linux, "rev-parse", "HEAD")
    # the files moved (their names are part of the series' hash)
    tree.stamp("applied").write(series="before the move", head=head.strip())
    assert tree.carries(tree.series())
    assert tree.apply_series(log=tree.tree_log()) is False
    assert _git(linux, "rev-parse", "HEAD") == head
    assert tree.stamp("applied").read()["series"] == tree.series_hash()


def test_commits_written_out_by_hand_are_kept_as_the_series(small_tree):
    linux, patches = small_tree
    (linux / "f3.c").write_text("int f3;\n")
    _git(linux, "add", "f3.c")
    _git(linux, "commit", "-q", "-m", "printk: Add f3\n\nWhy f3.")
    head = _git(linux, "rev-parse", "HEAD")
    _git(linux, *tree.FORMAT_PATCH, "-o", str(patches), f"{tree.BASE_TAG}..HEAD")
    (patches / "series").write_text("".join(
        p.name + "\n" for p in sorted(patches.glob("000*.patch"))))
    assert tree.apply_series(log=tree.tree_log()) is False
    assert _git(linux, "rev-parse", "HEAD") == head
    assert tree.stamp("applied").read() == {"series": tree.series_hash(), "head": head.strip()}
    # an uncommitted edit is local work still: refused, not applied over
    (linux / "f3.c").write_text("int f3 = 1;\n")
    (patches / "series").write_text("0001-printk-Add-f1.patch\n")
    with pytest.raises(HarnessError, match="local commits or edits"):
        tree.apply_series(log=tree.tree_log())


def test_a_tree_whose_commits_differ_from_the_series_gets_it_applied(small_tree):
    linux, patches = small_tree
    second = tree.series()[1]
    second.write_text(second.read_text().replace("Why f2.", "Why f2, said better."))
    assert not tree.carries(tree.series())
    assert tree.apply_series(log=tree.tree_log()) is True
    assert "Why f2, said better." in _git(linux, "log", "-1", "--format=%B")
