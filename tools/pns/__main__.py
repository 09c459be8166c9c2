"""Command line of the harness: /usr/bin/python3 -m tools.pns COMMAND."""

import argparse
import sys

from .common import REPO, HarnessError, say, setting, setting_flag, setting_int, \
    settings_help, settings_table


def main(argv=None):
    from . import kernel, module, runner, scenario, series, tree, verdict

    ap = argparse.ArgumentParser(
        prog="python3 -m tools.pns",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="printk-nobkl-stress harness: kernel tree, build, "
                    "initramfs and QEMU runs.",
        epilog="settings (environment variables; the Makefile passes them):\n"
               + settings_help())
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("tree", help="extract the KERNEL target's linux-source and apply patches/KERNEL/")
    p.add_argument("--force", action="store_true", default=None,
                   help="discard local commits/edits in the tree (default: FORCE)")
    sub.add_parser("patches", help="regenerate patches/KERNEL/ from the tree")
    p = sub.add_parser("check-series",
                       help="checkpatch --strict each patch; build what it touches after each")
    p.add_argument("--no-link", dest="link", action="store_false", default=None,
                   help="build only the directories each patch touches, "
                   "do not link vmlinux (default: LINK)")
    sub.add_parser("kernel", help="configure and build the kernel")
    sub.add_parser("module", help="build lib-printk-stress against the kernel")
    sub.add_parser("initramfs", help="build the guest initramfs")
    p = sub.add_parser("run", help="run scenarios and write their verdicts")
    p.add_argument("--scenario", help="a scenario name (workloads/scenarios/NAME.sh) or "
                   "a list with repeat counts, e.g. '3*storm backlog' (default: SCENARIO)")
    p.add_argument("--results", help="results directory of a single scenario "
                   "(default RESULTS/NAME-TIME)")
    p.add_argument("--no-build", action="store_true",
                   help="use the kernel and initramfs as they are")
    sub.add_parser("shell", help="boot the guest with an interactive shell")
    p = sub.add_parser("verdict-soak", help="N runs of a scenario on x86_64 and i386 "
                       "while stress-ng loads the host; how many passed")
    p.add_argument("-n", type=int, help="runs per architecture (default: N)")
    p.add_argument("--scenario", default="stress")
    p.add_argument("--arch", action="append", help="only this architecture (repeatable)")
    p.add_argument("--no-host-load", action="store_true", help="do not load the host")
    p = sub.add_parser("test", help="make test: the initramfs for ARCH and i386, then "
                       "pytest on tools/tests and analysis/tests (slowest tests at the end)")
    p.add_argument("--unit", action="store_true",
                   help="make test-unit: host tests only (PNS_SKIP_BOOT=1, no builds)")
    p = sub.add_parser("test-repeat", help="make test's builds, then its pytest N times "
                       "with the host idle and N times under stress-ng --cpu 2; a table")
    p.add_argument("-n", type=int, help="rounds of each kind (default: N, else 3)")
    p.add_argument("--results", help="directory for the rounds' logs and the summary "
                   "(default RESULTS/test-repeat-TIME)")
    p = sub.add_parser("checkers", help="SCENARIO on each checker kernel (KASAN with "
                       "kmemleak, KCSAN) and a table of what each run found")
    p.add_argument("--kernels", help="checker kernels (default: CHECKERS)")
    p.add_argument("--scenario", help="scenario list (default: SCENARIO)")
    p = sub.add_parser("soak", help="the soak scenario in fresh guests for SOAK seconds, "
                       "and the totals")
    p.add_argument("--seconds", type=int, help="how long (default: SOAK)")
    p.add_argument("--scenario", default="soak")
    p = sub.add_parser("compare", help="the same scenarios on each kernel target "
                       "(6.1, 6.12), one guest at a time, and one table of what their "
                       "analyses counted; --from: the table of runs already there")
    p.add_argument("--scenario", help="scenario list (default: COMPARE)")
    p.add_argument("--from", dest="dirs", nargs="+", metavar="DIR",
                   help="no runs: the table of these results directories (a directory "
                   "of them stands for all of them), paired by scenario and target")
    p.add_argument("-o", "--results", help="where compare.md and compare.json go (and, "
                   "without --from, the runs; default RESULTS/compare-TIME)")
    p = sub.add_parser("recheck", help="judge results directories again with "
                       "today's analysis (from run.json and what the guest left)")
    p.add_argument("dirs", nargs="+", metavar="DIR",
                   help="a results directory, or a directory of them (e.g. results)")
    sub.add_parser("bench", help="time the analysis on a real trace of over 1M events")
    sub.add_parser("scenarios", help="list the scenarios")
    p = sub.add_parser("settings", help="list the settings")
    p.add_argument("--markdown", action="store_true", help="as the README's table")
    sub.add_parser("variants", help="list the config variants")
    args = ap.parse_args(argv)

    try:
        if args.cmd == "tree":
            force = args.force if args.force is not None else setting_flag("FORCE")
            tree.prepare(force=force)
            say(f"[tree] ready: {tree.tree_dir()}")
        elif args.cmd == "patches":
            tree.export_patches()
        elif args.cmd == "check-series":
            variant, arch, _extra = runner.kernel_settings()
            link = args.link if args.link is not None else setting_flag("LINK")
            return series.check(variant, arch, link=link)
        elif args.cmd == "kernel":
            kernel.build(*runner.kernel_settings())
        elif args.cmd == "module":
            variant, arch, extra = runner.kernel_settings()
            module.build(variant, arch, kernel.build(variant, arch, extra))
        elif args.cmd == "initramfs":
            runner.build_all()
        elif args.cmd == "run":
            return runner.run_batch(args.scenario or setting("SCENARIO"), args.results,
                                    build=not args.no_build)
        elif args.cmd == "bench":
            from . import bench
            return bench.bench()
        elif args.cmd == "compare":
            from . import compare
            if args.dirs:
                return compare.from_dirs(args.dirs, args.results)
            return compare.run_all(args.scenario, args.results)
        elif args.cmd == "recheck":
            return verdict.recheck(args.dirs)
        elif args.cmd == "verdict-soak":
            n = args.n if args.n is not None else setting_int("N", lo=1)
            return runner.verdict_soak(n, args.scenario,
                                       tuple(args.arch or ("x86_64", "i386")),
                                       host_load=not args.no_host_load)
        elif args.cmd == "test":
            from . import testsuite
            return testsuite.run_tests(unit=args.unit)
        elif args.cmd == "test-repeat":
            from . import testsuite
            n = args.n if args.n is not None else setting_int("N", lo=1, default="3")
            if n < 1:
                raise HarnessError(f"-n {n}: expected an integer >= 1")
            return testsuite.repeat(n, args.results)
        elif args.cmd == "checkers":
            from . import checkers
            return checkers.run_checkers(args.kernels, args.scenario)
        elif args.cmd == "soak":
            from . import checkers
            return checkers.soak(args.seconds, args.scenario)
        elif args.cmd == "shell":
            return runner.shell()
        elif args.cmd == "scenarios":
            for kind in scenario.KINDS:
                say(f"{kind}s:")
                for s in scenario.scenarios():
                    if s.kind == kind:
                        say(f"  {s.name:24} {s.description}")
            say(f"default batch ({scenario.CFLIST.relative_to(REPO)}): "
                f"{' '.join(scenario.default_batch())}")
        elif args.cmd == "settings":
            say(settings_table().rstrip() if args.markdown else settings_help())
        elif args.cmd == "variants":
            say("\n".join(kernel.variants()))
    except HarnessError as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
