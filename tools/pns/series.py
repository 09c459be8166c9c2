"""Review checks of the patch series: checkpatch and bisectability.

`make check-series` runs scripts/checkpatch.pl --strict on every patch and
then builds the directories the series touches (kernel/printk/, the
changed drivers, ...) after each patch in turn, in a git worktree of the
kernel tree with its own build directory, so the main build is left alone.
It also links vmlinux after every patch (`make check-series LINK=0`, --no-link, skips it),
which finds what the touched directories alone do not (a caller of a
changed interface elsewhere, a missing export, the link itself).
"""

import os
import re
import shutil

from . import kernel, target, tree
from .common import HarnessError, logs_dir, run, say, setting, step


def touched_dirs(patch):
    """Directories with .c files a patch changes (what to build after it)."""
    dirs = set()
    for m in re.finditer(r"^\+\+\+ b/(\S+)\.c$", patch.read_text(errors="replace"), re.M):
        dirs.add(m.group(1).rsplit("/", 1)[0] + "/")
    return sorted(dirs)


def checkpatch(patches, log):
    """Run checkpatch --strict; return {patch name: summary line} for the unclean."""
    script = tree.tree_dir() / "scripts" / "checkpatch.pl"
    # checkpatch runs scripts/spdxcheck.py with the first python3 on PATH;
    # it needs Debian's (python3-ply), not a user's own Python.
    env = {"PATH": "/usr/bin:" + os.environ.get("PATH", "")}
    unclean = {}
    for p in patches:
        proc = run([str(script), "--strict", "--no-signoff", str(p)],
                   log=log, check=False, cwd=tree.tree_dir(), env=env)
        if proc.returncode != 0:
            text = log.read_text(errors="replace").splitlines()
            total = [ln for ln in text if ln.startswith("total:")]
            unclean[p.name] = total[-1] if total else "not clean"
    return unclean


def build_targets(dirs, link):
    """What to build after a patch: its directories, and vmlinux with link."""
    return [*dirs, "vmlinux"] if link else list(dirs)


def bisect_build(patches, variant, arch, log, link=False):
    """Build the touched directories (and vmlinux with link) after each
    patch; return failures."""
    wt = target.current().cache("series-check") / "linux"
    bdir = target.current().cache("series-check") / f"build-{variant}-{arch}"
    commits = tree.git("rev-list", "--reverse", f"{tree.BASE_TAG}..HEAD").split()
    if len(commits) != len(patches):
        raise HarnessError(f"the tree has {len(commits)} commits over {tree.BASE_TAG} "
                           f"but {tree.repo_path(tree.patches_dir() / 'series')} lists {len(patches)}: "
                           "run make tree or make patches")
    if not (wt / ".git").exists():
        shutil.rmtree(wt, ignore_errors=True)
        wt.parent.mkdir(parents=True, exist_ok=True)
        tree.git("worktree", "prune", log=log)
        tree.git("worktree", "add", "--detach", str(wt), tree.BASE_TAG, log=log)
    bdir.mkdir(parents=True, exist_ok=True)
    shutil.copy2(kernel.build_dir(variant, arch) / ".config", bdir / ".config")
    failures = {}
    jobs = setting("JOBS")
    for patch, commit in zip(patches, commits):
        targets = build_targets(touched_dirs(patch), link)
        with step(f"bisect build {patch.name[:50]}: {' '.join(targets) or '(no .c files)'}"):
            run(["git", "-C", str(wt), "checkout", "-q", "--detach", commit], log=log)
            proc = run(["make", "-C", str(wt), f"O={bdir}", f"ARCH={arch}", f"-j{jobs}",
                        "olddefconfig"], log=log, check=False)
            if proc.returncode == 0 and targets:
                proc = run(["make", "-C", str(wt), f"O={bdir}", f"ARCH={arch}",
                            f"-j{jobs}", "W=1", *targets], log=log, check=False)
            if proc.returncode != 0:
                failures[patch.name] = f"build failed (see {log})"
    return failures


def check(variant, arch, link=True):
    log = logs_dir() / "check-series.log"
    log.write_text("")
    tree.prepare()
    kernel.configure(variant, arch)
    patches = tree.series()
    if not patches:
        say(f"[check-series] {tree.repo_path(tree.patches_dir() / 'series')} is empty: "
            "nothing to check")
        return 0
    with step(f"checkpatch --strict on {len(patches)} patches"):
        unclean = checkpatch(patches, log)
    for name, why in unclean.items():
        say(f"[check-series]   checkpatch: {name}: {why}")
    failures = bisect_build(patches, variant, arch, log, link=link)
    for name, why in failures.items():
        say(f"[check-series]   {name}: {why}")
    say(f"[check-series] {len(patches)} patches: {len(unclean)} not checkpatch-clean, "
        f"{len(failures)} do not build (log: {log})")
    return 1 if failures else 0
