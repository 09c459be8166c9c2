"""intervals.jsonl: the model's intervals, marks and events, written by
`check -o` next to analysis.json and read back by plot and timeline."""

import io
import json
import lzma
import os
import types

import pytest

from analysis import intervals
from analysis.emergency_report import LATE_FILE
from analysis.tests.verdicts import CLOCKS_ARGS, analyse
from analysis.intervals import ModelFileError, read_results
from analysis.tests.test_cli import bad_dir, cli, good_dir
from analysis.tests.tracebuilder import printed, pstress

HERE = os.path.dirname(os.path.abspath(__file__))


class Collected:
    """A facts sink that keeps what the model hands it, as the file has it."""

    def __init__(self):
        self.intervals, self.marks, self.events = [], [], []

    def interval(self, *row):
        self.intervals.append(list(row))

    def mark(self, kind, con, cpu, ts, info, line=None):
        self.marks.append([kind, con, cpu, ts, info, line])

    def event(self, ev, con):
        self.events.append((ev.lineno, None if con is None else con.name,
                            None if con is None or con.owner is None else con.owner.label()))


def written(d):
    rc, out, err = cli("check", d, "-o", os.path.join(d, "analysis.json"))
    assert rc in (0, 1), err
    return read_results(d)


def test_check_writes_the_file_read_back_as_the_model_emitted_it(tmp_path):
    d = bad_dir(tmp_path)
    verdict, model = written(d)
    assert verdict["verdict"] == "fail"
    assert verdict["model_file"]["name"] == intervals.FILE_NAME
    assert verdict["model_file"]["format_version"] == intervals.VERSION
    mem = Collected()
    v, _ = analyse(d, recorder=mem)
    assert v["violations_by_rule"] == verdict["violations_by_rule"]
    assert list(model.intervals()) == mem.intervals and mem.intervals
    assert list(model.marks()) == mem.marks
    assert [m[0] for m in mem.marks].count("violation") == verdict["violation_count"]
    evs = list(model.events())
    assert [(e.line, e.con) for e in evs] == [x[:2] for x in mem.events]
    assert model.counts == {"events": len(evs), "intervals": len(mem.intervals),
                            "marks": len(mem.marks)}
    # every event as the trace printed it, the owner it left
    lines = open(os.path.join(d, "trace.txt")).read().splitlines()
    for e, (_, con, owner) in zip(evs, mem.events):
        text = lines[e.line - 1]
        assert ("nobkl_%s:" % e.name) in text and ("%.6f:" % e.ts) in text
        assert e.owner is None if con is None else e.owner.split(" (")[0] == (owner or "-")
        if e.name != "store":
            assert all("%s=%s" % kv in text for kv in e.fields.items())
    # the violation raised on an event is on its row
    no_loss = [x for x in verdict["violations"] if x["rule"] == "no-loss"][0]
    row = [e for e in evs if e.line == no_loss["line"]][0]
    assert row.violations >= 1 and "no-loss" in row.rules


def test_a_store_row_keeps_the_caller_the_text_cut_and_its_whole_length(tmp_path):
    # the console benchmark's bytes per record: the length of the whole
    # text, which the row keeps cut at STORE_TEXT characters
    t, _ = printed([pstress(1, "task", 0, "a" * 8), pstress(1, "task", 1, "b" * 80)])
    d = t.write(tmp_path / "res")
    _, model = written(d)
    lines = open(os.path.join(d, "trace.txt")).read().splitlines()
    stores = [e for e in model.events() if e.name == "store"]
    assert len(stores) == 2
    for e in stores:
        head, text = lines[e.line - 1].split(" text=", 1)
        fields = dict(kv.split("=", 1) for kv in head.split(": nobkl_store:")[1].split())
        assert e.fields == {"caller": fields["caller"], "text": text[:intervals.STORE_TEXT],
                            "len": len(text)}
        assert fields["len"] == str(len(text))
    assert [len(e.fields["text"]) < e.fields["len"] for e in stores] == [False, True]


def test_the_file_is_replaced_whole_and_removed_for_unusable_input(tmp_path):
    d = good_dir(tmp_path)
    first, model = written(d)
    second, again = written(d)
    assert first["model_file"]["id"] != second["model_file"]["id"] == again.id
    assert not [n for n in os.listdir(d) if n.endswith(".tmp")]
    assert os.path.exists(os.path.join(d, LATE_FILE))
    os.unlink(os.path.join(d, "console.log"))
    rc, out, err = cli("check", d, "-o", os.path.join(d, "analysis.json"))
    assert rc == 2 and not os.path.exists(os.path.join(d, intervals.FILE_NAME))
    assert not os.path.exists(os.path.join(d, LATE_FILE))
    with pytest.raises(ModelFileError, match="no intervals.jsonl in .*python3 -m analysis "
                                             "check .* -o .*analysis.json"):
        read_results(d)


def rewrite(path, edit):
    with open(path) as f:
        lines = f.read().splitlines(True)
    with open(path, "w") as f:
        f.write("".join(edit(lines)))


def header_version(v):
    def edit(lines):
        h = json.loads(lines[0])
        h["version"] = v
        return [json.dumps(h) + "\n"] + lines[1:]
    return edit


@pytest.mark.parametrize("edit, why", [
    (header_version(intervals.VERSION + 1), "is of version %d, this analysis reads version %d"
     % (intervals.VERSION + 1, intervals.VERSION)),
    (lambda lines: lines[:-1], "cut short"),
    (lambda lines: ["garbage\n"] + lines[1:], "not an intervals file"),
])
def test_a_file_of_another_version_or_cut_short_is_refused(tmp_path, edit, why):
    d = good_dir(tmp_path)
    written(d)
    rewrite(os.path.join(d, intervals.FILE_NAME), edit)
    with pytest.raises(ModelFileError, match=why):
        read_results(d)


def test_a_file_of_another_run_is_refused(tmp_path):
    d = good_dir(tmp_path)
    written(d)
    rewrite(os.path.join(d, "analysis.json"),
            lambda lines: [ln.replace('"id": "', '"id": "x') for ln in lines])
    with pytest.raises(ModelFileError, match="different runs"):
        read_results(d)


# ------------------------------------------------------- plot and timeline
@pytest.mark.parametrize("cmd", [("timeline", "--seq", "3"), ("plot",)])
def test_plot_and_timeline_without_the_file_exit_2_naming_the_command(tmp_path, cmd):
    d = good_dir(tmp_path)
    rc, out, err = cli(*(cmd[:1] + (d,) + cmd[1:]))
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith("analysis: unusable input: no analysis.json in %s" % d)
    assert "python3 -m analysis check %s -o %s/analysis.json" % (d, d) in err
    written(d)
    rewrite(os.path.join(d, intervals.FILE_NAME), header_version(intervals.VERSION + 1))
    rc, out, err = cli(*(cmd[:1] + (d,) + cmd[1:]))
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "is of version" in err and "python3 -m analysis check" in err


def shipped_run(tmp_path, run):
    """A copy of data/RUN with its compressed files as a run has them."""
    src = os.path.join(HERE, "data", run)
    d = tmp_path / run
    d.mkdir()
    for name in os.listdir(src):
        with (lzma.open if name.endswith(".xz") else open)(os.path.join(src, name), "rb") as f:
            (d / name[:-3] if name.endswith(".xz") else d / name).write_bytes(f.read())
    return str(d)


def test_timeline_of_shipped_runs_as_it_was_when_it_ran_the_analysis(tmp_path):
    """expected/timelines.json.xz holds the timeline's output on the shipped
    runs with trace text (seqs at both ends and in the middle, one console,
    a short --max-lines, an absent seq), taken when the timeline ran the
    whole analysis itself: read from intervals.jsonl it is the same."""
    from analysis.cli import main
    from analysis.timeline import run_timeline
    with lzma.open(os.path.join(HERE, "expected", "timelines.json.xz")) as f:
        cases = json.load(f)
    dirs = {}
    for run in sorted({c["run"] for c in cases}):
        dirs[run] = shipped_run(tmp_path, run)
        assert main(["check", dirs[run], "-q", *CLOCKS_ARGS, "-o",
                     os.path.join(dirs[run], "analysis.json")]) == 0
    for c in cases:
        a = types.SimpleNamespace(results=dirs[c["run"]], seq=c["seq"], console=c["console"],
                                  before=c["before"], after=c["after"],
                                  max_lines=c["max_lines"])
        out = io.StringIO()
        assert (run_timeline(a, out=out), out.getvalue()) == (c["exit"], c["text"]), c


# ------------------------------------------------ compressed (the harness's)
def test_gzip_writes_the_same_lines_compressed_and_replaces_the_plain_file(tmp_path):
    """`check -o --gzip` writes intervals.jsonl.gz, analysis.json names it,
    and it reads back as the plain file of the same run would; writing
    one name removes a file of the other (it would be of an older run)."""
    import gzip
    d = bad_dir(tmp_path)
    plain_v, plain = written(d)
    plain_rows = [list(plain.intervals()), list(plain.marks()), list(plain.events())]
    rc, out, err = cli("check", d, "-q", "--gzip", "-o", os.path.join(d, "analysis.json"))
    assert rc == 1, err
    gz = os.path.join(d, intervals.GZIP_NAME)
    assert not os.path.exists(os.path.join(d, intervals.FILE_NAME))
    assert not [n for n in os.listdir(d) if n.endswith(".tmp")]
    with open(gz, "rb") as f:
        assert f.read(2) == b"\x1f\x8b"
    verdict, model = read_results(d)
    assert verdict["model_file"]["name"] == intervals.GZIP_NAME
    assert model.id == verdict["model_file"]["id"] != plain_v["model_file"]["id"]
    assert [list(model.intervals()), list(model.marks()), list(model.events())] == plain_rows
    assert model.counts == plain.counts
    with gzip.open(gz, "rt") as f:
        assert json.loads(f.readline())["id"] == model.id
    written(d)
    assert not os.path.exists(gz)


def test_a_gzip_file_cut_short_or_of_another_run_is_refused(tmp_path):
    d = good_dir(tmp_path)
    rc, out, err = cli("check", d, "-q", "-z", "-o", os.path.join(d, "analysis.json"))
    assert rc == 0, err
    gz = os.path.join(d, intervals.GZIP_NAME)
    with open(gz, "rb") as f:
        whole = f.read()
    with open(gz, "wb") as f:
        f.write(whole[:len(whole) // 2])
    with pytest.raises(ModelFileError, match="cut short.*python3 -m analysis check"):
        read_results(d)
    with open(gz, "wb") as f:
        f.write(whole)
    read_results(d)
    rewrite(os.path.join(d, "analysis.json"),
            lambda lines: [ln.replace('"id": "', '"id": "x') for ln in lines])
    with pytest.raises(ModelFileError, match="different runs"):
        read_results(d)


def test_gzip_needs_o(tmp_path):
    rc, out, err = cli("check", good_dir(tmp_path), "--gzip")
    assert rc == 2 and "--gzip" in err and "-o" in err


@pytest.mark.parametrize("cmd", ["timeline", "plot"])
def test_plot_and_timeline_read_the_gzip_file(tmp_path, cmd):
    d = good_dir(tmp_path)
    rc, out, err = cli("check", d, "-q", "-z", "-o", os.path.join(d, "analysis.json"))
    assert rc == 0, err
    seq = next(e.seq for e in read_results(d)[1].events() if e.seq is not None)
    rc, out, err = cli(cmd, d, "--seq", seq)
    assert rc == 0, err
    assert ("timeline around seq %d" % seq) in out if cmd == "timeline" else \
        os.path.exists(os.path.join(d, "timeline.png"))
