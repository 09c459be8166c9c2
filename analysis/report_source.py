"""Where the `trace-cmd report` text comes from: a report file, or
`trace-cmd report -i trace.dat` run in a pipe and streamed (its exit
status and stderr kept for the verdict)."""

import os
import shutil
import subprocess

from .traceparse import InputError


def find_trace_cmd(explicit=None):
    cand = explicit or os.environ.get("ANALYSIS_TRACE_CMD") or shutil.which("trace-cmd")
    if not cand:
        raise InputError("trace-cmd not found (install Debian package trace-cmd, or give --report FILE)")
    return cand


class ReportSource:
    """Context manager that yields report lines from a text file or from
    `trace-cmd report -i trace.dat` (streamed through a pipe)."""

    def __init__(self, trace_dat=None, report_file=None, trace_cmd=None, latency=False):
        self.trace_dat = trace_dat
        self.latency = latency      # `report -l`: the 6.12 events' context
        self.report_file = report_file
        self.trace_cmd = trace_cmd
        self.proc = None
        self.fh = None
        self.stderr_file = None
        self.stderr_lines = []
        self.description = None

    def __enter__(self):
        if self.report_file is not None:
            try:
                self.fh = open(self.report_file, "r", encoding="latin-1", newline="")
            except OSError as e:
                raise InputError("cannot read report %s: %s" % (self.report_file, e.strerror))
            self.description = "report file %s" % self.report_file
            return self.fh
        exe = find_trace_cmd(self.trace_cmd)
        if not os.path.isfile(self.trace_dat):
            raise InputError("missing trace file %s" % self.trace_dat)
        if os.path.getsize(self.trace_dat) == 0:
            raise InputError("empty trace file %s" % self.trace_dat)
        import tempfile
        self.stderr_file = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(
                [exe, "report"] + (["-l"] if self.latency else []) + ["-i", self.trace_dat],
                stdout=subprocess.PIPE, stderr=self.stderr_file, stdin=subprocess.DEVNULL,
                bufsize=1 << 20)
        except OSError as e:
            raise InputError("cannot run %s: %s" % (exe, e.strerror))
        import io
        self.fh = io.TextIOWrapper(self.proc.stdout, encoding="latin-1", newline="")
        self.description = "%s report %s-i %s" % (exe, "-l " if self.latency else "",
                                                  self.trace_dat)
        return self.fh

    def finish(self):
        """Wait for trace-cmd; raise InputError when it failed."""
        if self.proc is None:
            return
        self.fh.close()
        rc = self.proc.wait()
        self.proc = None
        self.stderr_file.seek(0)
        err = self.stderr_file.read(65536).decode("latin-1", "replace").strip().splitlines()
        self.stderr_lines = [e.rstrip() for e in err[:10]]
        if rc != 0:
            msg = err[-1].strip() if err else ""
            raise InputError("trace-cmd report failed on %s (exit %d%s)" %
                             (self.trace_dat, rc, ": " + msg if msg else ""))

    def __exit__(self, *exc):
        if self.proc is not None:
            try:
                self.proc.kill()
            except OSError:
                pass
            self.proc.wait()
        if self.fh is not None:
            try:
                self.fh.close()
            except Exception:
                pass
        if self.stderr_file is not None:
            self.stderr_file.close()
        return False
