"""Shared helpers: paths, settings, progress lines, logged commands, stamps."""

import hashlib
import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LINUX_TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")


class HarnessError(Exception):
    """A failure with a message meant for the user (no traceback)."""


def setting(name, default):
    """Return a harness setting from the environment (make passes them)."""
    value = os.environ.get(name, "")
    return value if value != "" else default


def cache_dir():
    return Path(setting("PNS_CACHE", str(Path.home() / ".cache" / "printk-nobkl-stress")))


def logs_dir():
    d = cache_dir() / "logs"
    d.mkdir(parents=True, exist_ok=True)
    return d


def say(msg):
    print(msg, flush=True)


@contextmanager
def step(what):
    """Print one progress line per long step with its duration."""
    start = time.monotonic()
    say(f"[{what}] ...")
    try:
        yield
    except BaseException:
        say(f"[{what}] FAILED after {time.monotonic() - start:.1f}s")
        raise
    say(f"[{what}] done in {time.monotonic() - start:.1f}s")


def run(cmd, log=None, cwd=None, env=None, check=True, what=None):
    """Run cmd; with log, append its output there and name the log on failure."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    if log is None:
        proc = subprocess.run(cmd, cwd=cwd, env=full_env)
    else:
        with open(log, "a") as f:
            f.write(f"\n$ {' '.join(map(str, cmd))}\n")
            f.flush()
            proc = subprocess.run(cmd, cwd=cwd, env=full_env, stdout=f,
                                  stderr=subprocess.STDOUT)
    if check and proc.returncode != 0:
        where = f"; full log: {log}" if log else ""
        if log:
            tail = Path(log).read_text(errors="replace").splitlines()[-15:]
            sys.stderr.write("\n".join("    " + line for line in tail) + "\n")
        raise HarnessError(f"{what or cmd[0]} failed (exit {proc.returncode}){where}")
    return proc


def output(cmd, cwd=None):
    return subprocess.run(cmd, cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def hash_paths(paths, extra=""):
    """A content hash of files (and directories, recursively) plus a string."""
    h = hashlib.sha256(extra.encode())
    for p in sorted(Path(x) for x in paths):
        if p.is_dir():
            files = sorted(q for q in p.rglob("*") if q.is_file()
                           and "__pycache__" not in q.parts)
        elif p.exists():
            files = [p]
        else:
            files = []
        for q in files:
            # Name files relative to the repository, so that two clones of
            # the same commit share the cache without rebuilding.
            try:
                name = str(q.resolve().relative_to(REPO))
            except ValueError:
                name = str(q)
            h.update(name.encode())
            h.update(q.read_bytes())
    return h.hexdigest()


class Stamp:
    """A JSON file that remembers the inputs of the last successful step."""

    def __init__(self, path):
        self.path = Path(path)

    def read(self):
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}

    def matches(self, **inputs):
        return self.read() == inputs

    def write(self, **inputs):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(inputs, indent=1, sort_keys=True))
