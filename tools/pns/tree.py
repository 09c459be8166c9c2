"""The kernel tree of a target: Debian's linux-source under git, with the
target's series (patches/<target>/series) applied.

The tree lives in the cache directory, never in the repository. Its first
commit (tag pns-base) is the pristine linux-source; the series is applied
on top with git am. Work done in the tree is never thrown away silently:
when the series changed but the tree has local commits or edits, the
harness stops and says how to keep or drop them. A tree whose commits
already are the series (the same diffs and messages, as after a move of
the patch files) is kept as it is, so that its builds stay valid.
"""

import shutil
import tempfile
from pathlib import Path

from . import target
from .common import (HarnessError, Stamp, hash_paths, logs_dir, output, run,
                     say, step)

BASE_TAG = "pns-base"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "printk-nobkl-stress harness",
    "GIT_AUTHOR_EMAIL": "harness@printk-nobkl-stress.invalid",
    "GIT_COMMITTER_NAME": "printk-nobkl-stress harness",
    "GIT_COMMITTER_EMAIL": "harness@printk-nobkl-stress.invalid",
}


def patches_dir():
    """The target's folder of patches/: its series, patches, cover letter."""
    return target.current().patches


def tree_dir():
    return target.current().cache("linux")


def stamp(name):
    return Stamp(target.current().cache("stamps") / f"{name}.json")


def tree_log():
    return logs_dir() / f"tree{target.current().suffix}.log"


def source_version():
    """The installed linux-source package's version, e.g. 6.1.192-3."""
    try:
        return output(["dpkg-query", "-W", "-f=${Version}", target.current().package]).strip()
    except Exception:
        return "unknown"


def kernel_version(tree=None):
    """VERSION.PATCHLEVEL.SUBLEVEL of the extracted tree."""
    mk = Path(tree or tree_dir()) / "Makefile"
    vals = {}
    for line in mk.read_text().splitlines()[:6]:
        if "=" in line:
            k, _, v = line.partition("=")
            vals[k.strip()] = v.strip()
    return "{VERSION}.{PATCHLEVEL}.{SUBLEVEL}".format(**vals)


COVER_LETTER = "0000-cover-letter.patch"
COVER_SOURCE = "cover-letter.txt"


def series():
    """The patch files listed in the target's series, in order.

    The cover letter (0000-cover-letter.patch) is for reviewers and has no
    diff: it is never listed by make patches and never applied, even when
    someone adds it to the series by hand.
    """
    sfile = patches_dir() / "series"
    if not sfile.exists():
        return []
    names = [ln.split("#")[0].strip() for ln in sfile.read_text().splitlines()]
    files = [patches_dir() / n for n in names if n and n != COVER_LETTER]
    for f in files:
        if not f.exists():
            raise HarnessError(f"{repo_path(sfile)} lists {f.name}, which does not exist")
    return files


def repo_path(path):
    """A path in the repository as the user sees it (patches/6.1/series)."""
    try:
        return str(path.relative_to(target.PATCHES_ROOT.parent))
    except ValueError:
        return str(path)


def series_hash():
    return hash_paths([patches_dir() / "series"] + series())


def git(*args, check=True, log=None):
    cmd = ["git", "-C", str(tree_dir()), *args]
    if log:
        return run(cmd, log=log, env=GIT_ENV, check=check, what="git " + args[0])
    return output(cmd)


def _tarball_id():
    st = target.current().tarball.stat()
    return f"{source_version()}:{st.st_size}:{int(st.st_mtime)}"


def extract(log):
    """Extract linux-source into the cache and commit it as the baseline."""
    tgt = target.current()
    tarball = tgt.tarball
    if not tarball.exists():
        raise HarnessError(f"{tarball} is missing: run tools/deps.sh "
                           f"(apt-get install {tgt.package})")
    done = stamp("extract")
    tid = _tarball_id()
    if done.matches(tarball=tid) and (tree_dir() / ".git").exists():
        return False
    tree = tree_dir()
    if tree.exists():
        if (tree / ".git").exists() and _has_local_work():
            raise HarnessError(
                f"linux-source changed ({tid}) but {tree} has local work; "
                "save it with 'make patches' or move the tree away")
        shutil.rmtree(tree)
    tmp = tgt.cache("extract.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with step(f"extract {tarball.name} ({source_version()})"):
        run(["tar", "-C", str(tmp), "-xf", str(tarball)], log=log, what="tar")
        top = [p for p in tmp.iterdir() if p.is_dir()]
        if len(top) != 1:
            raise HarnessError(f"unexpected layout in {tarball}")
        top[0].rename(tree)
        shutil.rmtree(tmp)
    with step(f"git baseline of {kernel_version()}"):
        git("init", "-q", "-b", "nobkl", log=log)
        git("add", "-A", "-f", ".", log=log)
        git("commit", "-q", "-m", f"{tgt.package} {source_version()} "
            f"(Linux {kernel_version()})", log=log)
        git("tag", "-f", BASE_TAG, log=log)
    done.write(tarball=tid)
    stamp("applied").write()
    return True


def _uncommitted_edits():
    return bool(git("status", "--porcelain", "--untracked-files=no").strip())


def _has_local_work():
    """True when the tree has edits or commits the harness did not make."""
    if _uncommitted_edits():
        return True
    applied = stamp("applied").read()
    return git("rev-parse", "HEAD").strip() != applied.get("head")


# How `make patches` writes the series; carries() writes the tree's
# commits the same way to compare them with the files.
FORMAT_PATCH = ("format-patch", "-q", "--no-signature", "--zero-commit", "--numbered",
                "--abbrev=9")


def carries(patches):
    """True when the tree's commits over pns-base are exactly `patches`:
    git format-patch writes each commit as its file, byte for byte."""
    if len(git("rev-list", f"{BASE_TAG}..HEAD").split()) != len(patches):
        return False
    with tempfile.TemporaryDirectory(prefix="pns-carries-") as tmp:
        git(*FORMAT_PATCH, "-o", tmp, f"{BASE_TAG}..HEAD")
        made = sorted(Path(tmp).glob("*.patch"))
        return [m.read_bytes() for m in made] == [p.read_bytes() for p in patches]


def apply_series(force=False, log=None):
    """Make the tree match the target's series. Returns True when it changed."""
    applied = stamp("applied")
    want = series_hash()
    state = applied.read()
    if state.get("series") == want:
        return False  # local development in the tree is kept as it is
    patches = series()
    # Commits made in the tree and written out by hand (git format-patch
    # as make patches runs it) are the series already: keep them.
    if state.get("head") and not _uncommitted_edits() and carries(patches):
        applied.write(series=want, head=git("rev-parse", "HEAD").strip())
        return False
    if state.get("head") and _has_local_work() and not force:
        raise HarnessError(
            f"{repo_path(patches_dir())}/ changed, but the kernel tree {tree_dir()} has "
            "local commits or edits. Save them with 'make patches', or discard "
            "them with 'make tree FORCE=1'.")
    with step(f"apply {len(patches)} patches to Linux {kernel_version()} "
              f"(linux-source {source_version()})"):
        git("am", "--abort", check=False, log=log)
        git("reset", "-q", "--hard", BASE_TAG, log=log)
        git("clean", "-q", "-fdx", log=log)
        for p in patches:
            proc = git("am", "-q", "--keep-cr", str(p), check=False, log=log)
            if proc.returncode != 0:
                git("am", "--abort", check=False, log=log)
                applied.write(series="failed", head=git("rev-parse", "HEAD").strip())
                raise HarnessError(
                    f"patch {p.name} does not apply to linux-source "
                    f"{source_version()} (Linux {kernel_version()}); "
                    f"details in {log}")
    applied.write(series=want, head=git("rev-parse", "HEAD").strip())
    return True


def prepare(force=False):
    """Extract (once) and apply the series: the tree is ready to build."""
    log = tree_log()
    extract(log)
    apply_series(force=force, log=log)
    return tree_dir()


def state():
    """Describe the tree for a results directory."""
    return {
        "target": target.current().name,
        "linux_source": source_version(),
        "kernel_version": kernel_version(),
        "series": [p.name for p in series()],
        "series_hash": series_hash(),
        "tree_head": git("rev-parse", "HEAD").strip(),
        "tree_log": git("log", "--oneline", f"{BASE_TAG}..HEAD").splitlines(),
        "tree_dirty": bool(git("status", "--porcelain", "--untracked-files=no").strip()),
    }


def export_patches():
    """Regenerate the target's patches from the tree's commits with git
    format-patch."""
    prepare()
    log = tree_log()
    out = patches_dir()
    if _uncommitted_edits():
        raise HarnessError(f"{tree_dir()} has uncommitted edits: commit them first")
    for old in out.glob("*.patch"):
        old.unlink()
    out.mkdir(parents=True, exist_ok=True)
    # A fixed abbreviation: git sizes the default to the object count, so
    # trees extracted at other times would rewrite every index line.
    # [PATCH n/N] subjects and a cover letter (0000-cover-letter.patch)
    # whose subject and text come from the target's cover-letter.txt.
    git(*FORMAT_PATCH, "--cover-letter", "-o", str(out), f"{BASE_TAG}..HEAD", log=log)
    fill_cover_letter(out / COVER_LETTER, out / COVER_SOURCE)
    names = sorted(p.name for p in out.glob("*.patch") if p.name != COVER_LETTER)
    (out / "series").write_text("".join(n + "\n" for n in names))
    stamp("applied").write(series=series_hash(), head=git("rev-parse", "HEAD").strip())
    say(f"[patches] wrote {len(names)} patches to {out}")


def fill_cover_letter(cover, source):
    """Put the subject and text of `source` into git's cover letter template.

    `source` has the subject on its first line, then a blank line and the
    text. The cover letter gets the author and date of the last patch, so
    that exporting the same commits again gives the same file.
    """
    if not cover.exists():
        return
    text = cover.read_text()
    if source.exists():
        subject, _, body = source.read_text().partition("\n")
        text = text.replace("*** SUBJECT HERE ***", subject.strip(), 1)
        text = text.replace("*** BLURB HERE ***", body.strip("\n"), 1)
    last = sorted(p for p in cover.parent.glob("*.patch") if p != cover)
    if last:
        head = last[-1].read_text(errors="replace").split("\n\n", 1)[0]
        lines = text.split("\n")
        for ln in head.splitlines():
            for key in ("From: ", "Date: "):
                if ln.startswith(key):
                    idx = next((i for i, l in enumerate(lines) if l.startswith(key)), None)
                    if idx is not None:
                        lines[idx] = ln
        text = "\n".join(lines)
    cover.write_text(text)

