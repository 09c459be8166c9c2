"""Kernel configuration from fragments, and the (incremental) kernel build.

Configs are built rcutorture-style from fragments in tools/configs/:
the kernel's tiny.config, common.config, arch-<arch>.config, the variant's
<variant>.config, the target's own fragment (nobkl.config for 6.1,
nbcon.config for 6.12: options its series needs) when it exists, and any
extra fragments the user names. After olddefconfig every
requested option is checked: Kconfig silently drops options whose
dependencies are missing, and a test kernel without lockdep proves little.
"""

import hashlib
import re
import shutil
from pathlib import Path

from . import qemu, target
from . import tree as ktree
from .common import (REPO, HarnessError, Stamp, cache_dir, hash_paths,
                     logs_dir, run, say, setting, step)

CONFIGS = REPO / "tools" / "configs"


def variants():
    skip = {"common"} | {t.fragment for t in target.TARGETS}
    return sorted(p.stem for p in CONFIGS.glob("*.config")
                  if p.stem not in skip and not p.stem.startswith("arch-"))


def build_name(variant, arch, extra=()):
    """variant-arch, plus +fragment for each extra fragment: a kernel with
    other options builds in a directory of its own instead of
    reconfiguring (and fully rebuilding) the variant's. Then the target's
    suffix: its module and initramfs are named after the build too."""
    return (f"{variant}-{arch}" + "".join(f"+{Path(e).stem}" for e in extra)
            + target.current().suffix)


def build_dir(variant, arch, extra=()):
    return cache_dir() / "build" / build_name(variant, arch, extra)


def fragments(variant, arch, extra=()):
    """The fragment files for a variant, in merge order."""
    vfile = CONFIGS / f"{variant}.config"
    if not vfile.exists():
        raise HarnessError(f"unknown config variant '{variant}'; "
                           f"have: {', '.join(variants())}")
    qemu.arch(arch)     # an unknown ARCH is a clear error
    files = [CONFIGS / "common.config", CONFIGS / f"arch-{arch}.config", vfile]
    own = CONFIGS / f"{target.current().fragment}.config"
    if own.exists():
        files.append(own)
    for e in extra:
        p = Path(e)
        if not p.is_absolute():
            p = (Path.cwd() / p) if (Path.cwd() / p).exists() else REPO / p
        if not p.exists():
            raise HarnessError(f"extra config fragment {e} does not exist")
        files.append(p)
    return files


_OPT = re.compile(r"^(CONFIG_\w+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_\w+) is not set$")


def parse_config(text):
    """Map CONFIG_X -> value ('n' for 'is not set') of a .config or fragment."""
    opts = {}
    for line in text.splitlines():
        line = line.strip()
        m = _OPT.match(line)
        if m:
            opts[m.group(1)] = m.group(2)
            continue
        m = _UNSET.match(line)
        if m:
            opts[m.group(1)] = "n"
    return opts


def missing_options(requested, final):
    """Options a fragment asked for that the final .config does not have."""
    bad = []
    for opt, want in requested.items():
        have = final.get(opt, "n")
        if have != want:
            bad.append(f"{opt}={want} (got {have})")
    return bad


def configure(variant, arch, extra=()):
    """Write build_dir/.config from the fragments; keep it when unchanged."""
    tree = ktree.tree_dir()
    bdir = build_dir(variant, arch, extra)
    frags = fragments(variant, arch, extra)
    stamp = Stamp(bdir / "pns-config.json")
    inputs = dict(fragments=hash_paths(frags),
                  tree=ktree.git("rev-parse", "HEAD").strip(), arch=arch)
    if stamp.matches(**inputs) and (bdir / ".config").exists():
        return bdir / ".config"
    log = logs_dir() / f"config-{bdir.name}.log"
    log.write_text("")
    tmp = cache_dir() / "build" / f".kconfig-{bdir.name}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with step(f"config {bdir.name} from {len(frags) + 1} fragments"):
        merged = tmp / "fragments.config"
        requested = {}
        parts = [(tree / "kernel/configs/tiny.config").read_text()]
        for f in frags:
            text = f.read_text()
            parts.append(f"# --- {f.name}\n{text}")
            requested.update(parse_config(text))
        merged.write_text("\n".join(parts))
        env = {"ARCH": arch}
        run(["make", "-C", str(tree), f"O={tmp}", f"KCONFIG_ALLCONFIG={merged}",
             "allnoconfig"], log=log, env=env, what="make allnoconfig")
        run(["make", "-C", str(tree), f"O={tmp}", "olddefconfig"], log=log,
            env=env, what="make olddefconfig")
        final = parse_config((tmp / ".config").read_text())
        bad = missing_options(requested, final)
        if bad:
            raise HarnessError(
                f"config {bdir.name}: options requested by the fragments "
                f"were dropped by Kconfig (missing dependencies?): {', '.join(bad)}")
        bdir.mkdir(parents=True, exist_ok=True)
        new = (tmp / ".config").read_text()
        old = (bdir / ".config").read_text() if (bdir / ".config").exists() else ""
        if new != old:
            (bdir / ".config").write_text(new)
        shutil.rmtree(tmp)
    stamp.write(**inputs)
    return bdir / ".config"


def _tree_fingerprint():
    """HEAD plus any uncommitted edits, so work in the tree gets rebuilt."""
    head = ktree.git("rev-parse", "HEAD").strip()
    diff = ktree.git("diff", "HEAD")
    return head + ":" + hashlib.sha256(diff.encode()).hexdigest()


def build(variant, arch, extra=()):
    """Build the kernel (bzImage + modules); returns the build directory."""
    ktree.prepare()
    cfg = configure(variant, arch, extra)
    bdir = build_dir(variant, arch, extra)
    image = bdir / qemu.arch(arch).image
    stamp = Stamp(bdir / "pns-build.json")
    inputs = dict(tree=_tree_fingerprint(), config=hash_paths([cfg]))
    if stamp.matches(**inputs) and image.exists():
        say(f"[kernel {bdir.name}] up to date: {image}")
        return bdir
    log = logs_dir() / f"build-{bdir.name}.log"
    log.write_text("")
    jobs = setting("JOBS")
    with step(f"kernel {bdir.name} build -j{jobs} (log: {log})"):
        run(["make", "-C", str(ktree.tree_dir()), f"O={bdir}", f"-j{jobs}",
             f"ARCH={arch}", "all"], log=log, what=f"kernel build {bdir.name}")
    stamp.write(**inputs)
    return bdir
