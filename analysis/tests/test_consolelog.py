"""The one reader of console.log (analysis/consolelog.py): each kind of
line it types, the cursor going back, a compressed log; and that no
other module of the analysis or the harness reads the log's prefix with
a pattern of its own."""

import lzma
import os
import re

import pytest

from analysis import consolelog

REPO = os.path.join(os.path.dirname(__file__), "..", "..")


@pytest.mark.parametrize("raw, marker, stamp, caller, glued, text", [
    # the kernel line of a nobkl console: its marker, stamp, blank, text
    ("A[    5.861777] pstress r=1 c=0", "A", "5.861777", None, False, "pstress r=1 c=0"),
    ("T[   12.000001] hello", "T", "12.000001", None, False, "hello"),
    # an early line, or a legacy console: no marker
    ("[    0.000000] Linux version 6.1", "", "0.000000", None, False, "Linux version 6.1"),
    # CONFIG_PRINTK_CALLER: the caller field after the stamp
    ("A[    1.500000][    T1] init", "A", "1.500000", "[    T1]", False, "init"),
    ("[    1.500000][    C2] irq", "", "1.500000", "[    C2]", False, "irq"),
    # a stray byte right after the prefix: no kernel line as printed
    ("A[   11.062476]6 pstress", "A", "11.062476", None, True, "6 pstress"),
    # a kernel line with nothing after the prefix
    ("A[    2.000000]", "A", "2.000000", None, False, ""),
    ("A[    2.000000] ", "A", "2.000000", None, False, ""),
    # the notice of dropped records: no prefix, the whole line is its text
    ("A** 3 printk messages dropped **", "", None, None, False,
     "A** 3 printk messages dropped **"),
    # user space on the same UART, a line cut inside its prefix, nothing
    ("tty-user n=58 hello", "", None, None, False, "tty-user n=58 hello"),
    ("A[    7", "", None, None, False, "A[    7"),
    ("", "", None, None, False, ""),
    # a stray byte inside the stamp: not a prefix (serial.py mends it)
    ("A[   11.7o05816] pstress", "", None, None, False, "A[   11.7o05816] pstress"),
])
def test_parse_types_each_kind_of_line(raw, marker, stamp, caller, glued, text):
    p = consolelog.parse(raw, 7, 100, "\r\n")
    assert (p.marker, p.stamp, p.caller, p.glued, p.text) == (marker, stamp, caller, glued, text)
    assert (p.lineno, p.raw, p.offset, p.end) == (7, raw, 100, "\r\n")


def test_fast_path_and_pattern_agree():
    """parse() types the common line without the regex: what it gives is
    what LINE_RE gives."""
    for raw in ("A[    5.861777] x", "[12345.000001] y z", "T[    0.000000] ",
                "A[    5.861777] [not a caller] text"):
        p = consolelog.parse(raw)
        m = consolelog.LINE_RE.match(raw)
        assert (p.marker, p.stamp, p.caller, p.text) == \
            (m.group(1), m.group(2), m.group(3), m.group(5)), raw


def test_find_stamp_finds_a_prefix_after_other_output():
    assert consolelog.find_stamp("tty-user n=58 baT[   12.348475] pstress") == "12.348475"
    assert consolelog.find_stamp("no prefix here") is None


LOG = (b"[    0.000000] Linux version\r\n"
       b"A[    1.000000] first\r\n"
       b"user space\n"
       b"A** 2 printk messages dropped **\r\n"
       b"T[    2.000000] last")


def test_lines_number_offsets_and_ends(tmp_path):
    path = tmp_path / "console.log"
    path.write_bytes(LOG)
    got = list(consolelog.lines(path))
    assert [ln.lineno for ln in got] == [1, 2, 3, 4, 5]
    assert [ln.end for ln in got] == ["\r\n", "\r\n", "\n", "\r\n", ""]
    assert [ln.stamp for ln in got] == ["0.000000", "1.000000", None, None, "2.000000"]
    assert all(LOG[ln.offset:].startswith(ln.raw.encode()) for ln in got)


def test_cursor_goes_back_to_a_line(tmp_path):
    path = tmp_path / "console.log"
    path.write_bytes(LOG)
    log = consolelog.ConsoleLog(path)
    log.next()
    pos = log.tell()
    second = log.next()
    assert log.count_rest() == 3 and log.eof
    log.seek(pos)
    assert log.next() == second and not log.eof
    log.close()


def test_a_compressed_log_reads_as_the_plain_one(tmp_path):
    plain, packed = tmp_path / "console.log", tmp_path / "console.log.xz"
    plain.write_bytes(LOG)
    packed.write_bytes(lzma.compress(LOG))
    assert list(consolelog.lines(packed)) == list(consolelog.lines(plain))


def test_a_compressed_log_holds_the_texts_of_the_plain_one(tmp_path):
    """contains() reads a log compressed with xz as lines() does (the
    serial alignment asks it whether the log has a replay marker; a
    compressed log was searched as it is on disk, and never had one)."""
    text = "** replaying previous printk message **"
    log = LOG + b"A" + text.encode() + b"\n"
    plain, packed = tmp_path / "console.log", tmp_path / "console.log.xz"
    plain.write_bytes(log)
    packed.write_bytes(lzma.compress(log))
    for path in (plain, packed):
        assert consolelog.contains(path, text)
        assert not consolelog.contains(path, text + "!")


def test_no_other_module_has_a_pattern_of_the_prefix():
    """The `[  sec.usec]` prefix is consolelog's: the modules that read
    console.log (the harness's and the boot tests' too) take the typed
    lines (or consolelog.STAMP), none has a pattern of the stamp of its
    own."""
    stamp = re.compile(r"\\\[\\s\*\(?\\d\+\\\.\\d")
    mods = [os.path.join(d, f) for d in ("analysis", os.path.join("tools", "pns"),
                                         os.path.join("tools", "tests"))
            for f in os.listdir(os.path.join(REPO, d)) if f.endswith(".py")]
    own = [m for m in mods if m != os.path.join("analysis", "consolelog.py")
           and stamp.search(open(os.path.join(REPO, m)).read())]
    assert own == []
