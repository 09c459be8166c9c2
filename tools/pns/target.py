"""Kernel targets: which Linux a run builds, and with which series.

A target is one of Debian's linux-source packages plus a folder of
patches/ with its own `series`. Everything derived from a target's tree
lives apart from every other target's in the cache (tree, stamps, builds,
modules, initramfs images, series checks), so switching KERNEL never
rebuilds the other target. The first target keeps the cache layout it
had before there were targets (no suffix): a cache filled then stays
valid.

The analysis judges each target with its own ownership model (`model`,
one of analysis' kernel models).
"""

from dataclasses import dataclass
from pathlib import Path

from .common import REPO, HarnessError, cache_dir, setting

PATCHES_ROOT = REPO / "patches"


@dataclass(frozen=True)
class Target:
    """One kernel target.

    name     the KERNEL setting's value, also the folder under patches/
    package  Debian's linux-source package that provides the tarball
    model    the kernel model the analysis applies to its traces
    suffix   appended to every cache path of the target ("" for the first)
    fragment the target's own Kconfig fragment, tools/configs/<fragment>.config
    consoles the CONSOLE settings it has, each with its tools/cmdline/ file
    line_option the Kconfig option of its series' byte_delay_ns (BAUD)
    stressor whether lib-printk-stress builds for it (runs need the module)
    what     one line for `make help` and errors
    """
    name: str
    package: str
    model: str
    suffix: str
    fragment: str
    stressor: bool
    consoles: dict
    line_option: str
    what: str

    @property
    def tarball(self):
        return Path("/usr/src") / f"{self.package}.tar.xz"

    @property
    def patches(self):
        return PATCHES_ROOT / self.name

    def cache(self, name):
        """A per-target path in the cache: `name`, plus the suffix."""
        return cache_dir() / f"{name}{self.suffix}"


TARGETS = (
    Target("6.1", "linux-source-6.1", "rfc", "", "nobkl", True,
           {"nobkl": "nobkl.txt", "legacy": "console.txt"}, "CONFIG_PRINTK_NOBKL_DEBUG",
           "the RFC's NOBKL consoles ported to Debian's Linux 6.1"),
    # The series converts the 8250 console itself: ttyS0 is the nbcon
    # console, and there is no legacy driver for the UART to compare with.
    Target("6.12", "linux-source-6.12", "nbcon", "-6.12", "nbcon", True,
           {"nobkl": "console.txt"}, "CONFIG_NBCON_DEBUG",
           "mainline nbcon consoles in Debian's Linux 6.12"),
)
BY_NAME = {t.name: t for t in TARGETS}


def current():
    """The target the KERNEL setting names; a clear error for any other."""
    name = setting("KERNEL")
    try:
        return BY_NAME[name]
    except KeyError:
        raise HarnessError(f"KERNEL={name!r}: no such target; have "
                           + ", ".join(f"{t.name} ({t.what})" for t in TARGETS)) from None


def require_stressor():
    """The current target, when lib-printk-stress builds for it (runs and
    their initramfs need the module); a clear error otherwise."""
    tgt = current()
    if not tgt.stressor:
        raise HarnessError(
            f"KERNEL={tgt.name}: lib-printk-stress does not build for this target yet; "
            "its kernel does (make tree, make kernel, make check-series)")
    return tgt
