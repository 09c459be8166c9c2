"""Build lib-printk-stress (out of tree) against a built test kernel.

The sources are copied into the cache first, so build products never land
in the repository and each kernel variant has its own module build.
"""

import shutil

from . import kernel, target
from .common import (REPO, Stamp, cache_dir, hash_paths, logs_dir, run, say,
                     setting, step)

SRC = REPO / "lib-printk-stress"


def sources():
    return sorted(p for p in SRC.glob("*")
                  if p.is_file() and (p.suffix in (".c", ".h") or p.name in ("Kbuild", "Makefile")))


def build(variant, arch, bdir):
    """Build against the kernel in bdir; return printk_stress.ko's path
    (None while there is no module source)."""
    target.require_stressor()
    if not (SRC / "Kbuild").exists():
        say("[module] lib-printk-stress/Kbuild does not exist yet: skipped")
        return None
    out = cache_dir() / "module" / bdir.name
    ko = out / "printk_stress.ko"
    stamp = Stamp(out / "pns-module.json")
    inputs = dict(src=hash_paths(sources()),
                  kernel=hash_paths([bdir / "pns-build.json", bdir / "Module.symvers"]))
    if stamp.matches(**inputs) and ko.exists():
        return ko
    log = logs_dir() / f"module-{bdir.name}.log"
    log.write_text("")
    with step(f"module printk_stress.ko for {bdir.name} (log: {log})"):
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        for f in sources():
            shutil.copy2(f, out / f.name)
        run(["make", "-C", str(kernel.ktree.tree_dir()), f"O={bdir}", f"ARCH={arch}",
             f"M={out}", "W=1", f"-j{setting('JOBS')}", "modules"],
            log=log, what="module build")
    stamp.write(**inputs)
    return ko
