"""The stressor's records (interfaces.md section 3): a record's text
parsed and checked, the producer and number it names, and the records
the stressor makes, for the tests and the synthetic runs."""

import re
import zlib

PSTRESS_RE = re.compile(
    r"^pstress r=(\d+) c=(\d+) x=(\w+) n=(\d+) l=(\d+) k=([0-9a-f]{8}) (\S*)$")


def crc32_le_kernel(data):
    """Linux crc32_le(~0, data, len) without final inversion."""
    return zlib.crc32(data) ^ 0xFFFFFFFF


# a well-formed stressor record (ASCII numbers, identifier and crc): one
# regex match instead of parse_pstress()'s split and field tests (it runs
# for every record matched on the serial log)
_PSTRESS_OK_RE = re.compile(r"pstress r=([0-9]+) c=([0-9]+) x=([A-Za-z_][A-Za-z0-9_]*) "
                            r"n=([0-9]+) l=([0-9]+) k=([0-9a-f]{8}) ([^ ]*)\Z", re.S)


def _check_payload(prod, nn, want, crc, payload):
    """(producer, n, ok, reason) of a stressor record whose fields parsed."""
    pb = payload.encode("latin-1")
    if len(pb) != want:
        return (prod, nn, False, "payload length %d != l=%d" % (len(pb), want))
    got = "%08x" % (zlib.crc32(pb) ^ 0xFFFFFFFF)
    if got != crc:
        return (prod, nn, False, "crc %s != k=%s" % (got, crc))
    return (prod, nn, True, "")


# a well-formed version 2 record (interfaces.md section 3): the checksum
# covers everything before " k=", the producer names its writer; the
# payload of a multi-line record has line breaks (blanks in the trace's
# and the matcher's joined text)
_PSTRESS2_RE = re.compile(r"(pstress v=2 r=([0-9]+) c=([0-9]+) x=([A-Za-z_][A-Za-z0-9_]*) "
                          r"w=([A-Za-z_][A-Za-z0-9_]*) n=([0-9]+) l=([0-9]+) (.*)) "
                          r"k=([0-9a-f]{8})\Z", re.S)


# The longest record text printk() stores: 6.1's LOG_LINE_MAX (1024 less
# the 32 bytes of PREFIX_MAX, 48 with CONFIG_PRINTK_CALLER) less the
# terminating NUL and the two bytes of the level prefix the stressor's
# records begin with.  A longer record (the stressor's `truncate` shape)
# is cut there (interfaces.md section 3).
TEXT_MAX = (989, 973)
_PSTRESS2_HEAD_RE = re.compile(r"pstress v=2 r=([0-9]+) c=([0-9]+) x=([A-Za-z_][A-Za-z0-9_]*) "
                               r"w=([A-Za-z_][A-Za-z0-9_]*) n=([0-9]+) l=([0-9]+) ")


# What printk() puts at the end of a record it cut to fit its data ring,
# which had no room for the whole (6.1's truncate_msg(): the oldest
# record still reserved by a writer that an NMI interrupted, say).
PRINTK_TRUNC_MSG = "<truncated>"


def pstress2_truncated(text):
    """(producer, n) when `text` is a version 2 record that printk() cut:
    at the line limit (TEXT_MAX characters long), or to fit its data ring
    (followed by PRINTK_TRUNC_MSG); the text kept is the first characters
    of the record its header makes (the header seeds the payload, and the
    crc follows from both; with the `multiline` shape's line breaks when
    the text has some), which is longer; else None.  A cut record with a
    byte changed is none: the header's record does not begin with it."""
    if text.endswith(PRINTK_TRUNC_MSG):
        text = text[:-len(PRINTK_TRUNC_MSG)]
    elif len(text) not in TEXT_MAX:
        return None
    m = _PSTRESS2_HEAD_RE.match(text)
    if m is None:
        return None
    r, c, x, w, n, ln = m.groups()
    multi = " " in text[m.end():m.end() + int(ln)]     # the payload, not " k="
    full = pstress2_text(int(r), int(c), x, w, int(n), int(ln), multiline=multi)
    if multi:
        full = full.replace("\n", " ")
    if len(full) <= len(text) or not full.startswith(text):
        return None
    return (int(r), int(c), x, w), int(n)


def first_line(text):
    """The first line the console prints of a record's text: up to its
    first line break, or for a stressor record of the `multiline` shape,
    whose breaks the trace shows as blanks, up to the first blank in its
    payload."""
    if text[:12] == "pstress v=2 ":
        m = _PSTRESS2_HEAD_RE.match(text)
        if m is not None:
            j = text.find(" ", m.end())
            if 0 < j < m.end() + int(m.group(6)):
                return text[:j]
    return text.split("\n", 1)[0]


def _parse_pstress2(text):
    """(producer, n, ok, reason) of a version 2 record text; producer =
    (run, cpu, ctx, writer).  A record cut at the line limit is a valid
    record (pstress2_truncated())."""
    m = _PSTRESS2_RE.match(text)
    if m is None:
        cut = pstress2_truncated(text)
        if cut is not None:
            return (cut[0], cut[1], True, "")
        return (None, None, False, "malformed stressor record")
    body, r, c, x, w, n, ln, payload, k = m.groups()
    prod, nn = (int(r), int(c), x, w), int(n)
    if len(payload) != int(ln):
        return (prod, nn, False, "payload length %d != l=%s" % (len(payload), ln))
    if " " in payload:
        body = body[:len(body) - len(payload)] + payload.replace(" ", "\n")
    got = "%08x" % (zlib.crc32(body.encode("latin-1")) ^ 0xFFFFFFFF)
    if got != k:
        return (prod, nn, False, "crc %s != k=%s" % (got, k))
    return (prod, nn, True, "")


PSTRESS_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def pstress2_payload(header, length):
    """The payload the stressor generates after a version 2 `header`
    (the text up to and including the blank after `l=<len>`): xorshift32
    seeded with the header's crc (interfaces.md section 3)."""
    state = crc32_le_kernel(header.encode("latin-1")) | 1
    out = []
    for _ in range(length):
        state ^= (state << 13) & 0xFFFFFFFF
        state ^= state >> 17
        state ^= (state << 5) & 0xFFFFFFFF
        out.append(PSTRESS_ALPHABET[state % 62])
    return "".join(out)


MULTILINE_MAX = 4      # lines of a record of the stressor's `multiline` shape, at most


def multiline_breaks(payload, n):
    """The payload of record n of the stressor's `multiline` shape: line
    breaks in place of the characters at len * i / lines, i = 1 ..
    lines - 1, lines = 1 + n % MULTILINE_MAX (none when shorter than two
    characters a line; docs/stressor.md)."""
    ln, lines = len(payload), 1 + n % MULTILINE_MAX
    if ln < 2 * lines:
        return payload
    out = list(payload)
    for i in range(1, lines):
        out[ln * i // lines] = "\n"
    return "".join(out)


def pstress2_text(run, cpu, ctx, writer, n, length=64, payload=None, multiline=False):
    """A version 2 stressor record as the stressor prints it; `payload`
    replaces the generated one (with the crc made right: a forgery);
    `multiline`: with the line breaks of the `multiline` shape (as line
    breaks; the trace shows them as blanks)."""
    header = "pstress v=2 r=%d c=%d x=%s w=%s n=%d l=%d " % (run, cpu, ctx, writer, n, length)
    body = header + (pstress2_payload(header, length) if payload is None else payload)
    if multiline:
        body = header + multiline_breaks(body[len(header):], n)
    return "%s k=%08x" % (body, crc32_le_kernel(body.encode("latin-1")))


def pstress_damaged_copy(want, text):
    """`text` is the version 2 record `want` with one field changed:
    its checksum (as printed) no longer checks out, so it is `want`
    damaged, not another record (interfaces.md section 3)."""
    if want[:12] != "pstress v=2 " or text[:12] != "pstress v=2 ":
        return False
    a, b = want.split(" "), text.split(" ")
    if len(a) != len(b) or a[-1] != b[-1] or sum(x != y for x, y in zip(a, b)) != 1:
        return False
    return not _parse_pstress2(text)[2]


def producer_name(prod):
    """`r=.. c=.. x=..[ w=..]` of a producer, as its records name it."""
    if len(prod) == 4:
        return "r=%d c=%d x=%s w=%s" % prod
    return "r=%d c=%d x=%s" % prod


def parse_pstress(text):
    """Return (producer, n, ok, reason) for a stressor record text, or None
    when the text is not a stressor record.  producer = (run, cpu, ctx,
    writer) for a version 2 record, (run, cpu, ctx) for one of version 1
    (before `v=`)."""
    if text[:12] == "pstress v=2 ":
        return _parse_pstress2(text)
    m = _PSTRESS_OK_RE.match(text)
    if m is not None:
        r, c, x, n, ln, k, payload = m.groups()
        return _check_payload((int(r), int(c), x), int(n), int(ln), k, payload)
    if not text.startswith("pstress "):
        return None
    parts = text.split(" ")
    if len(parts) == 8:
        _, r, c, x, n, ln, k, payload = parts
        if (r[:2] == "r=" and c[:2] == "c=" and x[:2] == "x=" and n[:2] == "n=" and
                ln[:2] == "l=" and k[:2] == "k=" and len(k) == 10):
            try:
                prod = (int(r[2:]), int(c[2:]), x[2:])
                nn = int(n[2:])
                want = int(ln[2:])
            except ValueError:
                prod = None
            if prod is not None and r[2:].isdigit() and c[2:].isdigit() and n[2:].isdigit() \
                    and ln[2:].isdigit() and x[2:].isidentifier():
                return _check_payload(prod, nn, want, k[2:], payload)
    m = PSTRESS_RE.match(text)
    if m is None:
        return (None, None, False, "malformed stressor record")
    run, cpu, ctx, n, ln, crc, payload = m.groups()
    prod = (int(run), int(cpu), ctx)
    pb = payload.encode("latin-1")
    if len(pb) != int(ln):
        return (prod, int(n), False, "payload length %d != l=%s" % (len(pb), ln))
    got = "%08x" % crc32_le_kernel(pb)
    if got != crc:
        return (prod, int(n), False, "crc %s != k=%s" % (got, crc))
    return (prod, int(n), True, "")


def pstress_uncut(text):
    """True when the stressor record `text` has all of its payload: in
    the usual version 1 shape, l= characters of it (its crc is the
    matcher's business), else when parse_pstress() finds it valid."""
    m = _PSTRESS_OK_RE.match(text)
    if m is not None:
        return len(m.group(7)) == int(m.group(5))
    return parse_pstress(text)[2]


# what pstress_id() accepts, in the usual shape (version 1, version 2)
_PSTRESS_ID_RE = re.compile(r"pstress r=([0-9]+) c=([0-9]+) x=([^ ]*) n=([0-9]+) ")
_PSTRESS2_ID_RE = re.compile(r"pstress v=2 r=([0-9]+) c=([0-9]+) x=([^ ]*) w=([^ ]*) "
                             r"n=([0-9]+) ")
# "r=.. c=.. x=..[ w=..]" of a text -> its producer, for the producers
# seen: one dict lookup instead of a regex match and two int() per record
# (it runs for every dropped record, most records under stress)
_producers = {}


def pstress_id(text):
    """(producer, n) of a stressor record text without checking it (no
    crc), or None: for records that are only accounted, not printed."""
    st = 8 if text[:10] == "pstress r=" else 12 if text[:14] == "pstress v=2 r=" else 0
    if st:
        j = text.find(" n=", st + 2)
        k = text.find(" ", j + 3) if j > 0 else -1
        prod = _producers.get(text[st:j]) if k > 0 else None
        if prod is not None:
            n = text[j + 3:k]
            if n.isdecimal() and n.isascii():
                return prod, int(n)
    m = _PSTRESS_ID_RE.match(text) if st != 12 else _PSTRESS2_ID_RE.match(text)
    if m is not None:
        g = m.groups()
        prod = (int(g[0]), int(g[1])) + g[2:-1]
        if len(_producers) < 4096:
            _producers[producer_name(prod)] = prod
        return prod, int(g[-1])
    if not text.startswith("pstress "):
        return None
    parts = text.split(" ", 5)
    if len(parts) < 6:
        return None
    r, c, x, n = parts[1:5]
    if r[:2] != "r=" or c[:2] != "c=" or x[:2] != "x=" or n[:2] != "n=":
        return None
    try:
        return (int(r[2:]), int(c[2:]), x[2:]), int(n[2:])
    except ValueError:
        return None
