"""Every tolerance the analysis grants, one row each.

A tolerance is a trace or log shape that looks like a violation of a
rule but is legitimate.  Each one is granted in one place, says why it
is legitimate, counts every time it is granted in verdict.json (so a
verdict shows how much it relied on it), and has a test that builds the
shape and asserts the counter moved (test_rules.py,
test_every_tolerance_counts_and_has_a_test, checks that the test exists
and names the counter).

Who grants and who counts:

- the ownership model grants its tolerances as facts: it tells a
  facts.ToleranceGranted naming the row (and the console and the event)
  to its one sink of facts, and counts nothing itself; rules.Dispatch
  hands that fact to Tally, the one consumer, which counts it in the
  row's counter among the checker's counts.  Not a rule unit: a
  tolerance raises no rule, and counting changes state, which no unit
  does;
- the checker grants its own, decided before the model sees the
  events (equal timestamps, an emission held for its store, a store
  hole at the trace's edges), and counts them where it decides;
- the serial alignment grants the serial rows and counts them in its
  statistics.

Columns:

- name: short id (`python3 -m analysis rules --tolerances` lists them);
- rule: the rule it would otherwise break;
- order: where it applies: "both" (chain and timestamp order), "timestamps"
  (only traces without the transition chain, judged by the clocks only
  when the user asks, or a console whose chain had not started),
  "serial" (the serial log);
- why: why the kernel may produce it without breaking the rule;
- counter: its counter, a dotted path into verdict.json;
- window: the time bound it still uses, or "" (none: decided by program
  order or by the chain);
- test: "module::function" of the test that shows it counted.
"""

from collections import namedtuple

Tolerance = namedtuple("Tolerance", "name rule order why counter window test")

TOLERANCES = (
    Tolerance(
        "release-after-next-acquire", "one-owner", "both",
        "the old owner's release tracepoint fires after its cmpxchg freed the "
        "state; the next acquire (prev_locked=0) may be traced first; the old "
        "owner must not emit or commit after that acquire",
        "counts.releases_traced_after_next_acquire", "",
        "test_rules::test_reorder_release_after_next_acquire"),
    Tolerance(
        "lost-before-takeover", "after-loss", "both",
        "the victim notices the loss (reads the state word) before the taker's "
        "acquire tracepoint fires",
        "counts.losses_traced_before_takeover", "",
        "test_rules::test_reorder_lost_before_takers_acquire"),
    Tolerance(
        "acquire-traced-after-takeover", "one-owner", "both",
        "an acquire's tracepoint fires after its cmpxchg; a takeover (an NMI on "
        "its CPU, a panic context) may come in between and name it as the owner "
        "it took the console from.  In chain order only a handover acquire can "
        "be late, and the chain says so (the state it saw was replaced); by "
        "timestamps it must come within PHANTOM_WINDOW",
        "counts.acquires_traced_after_takeover", "PHANTOM_WINDOW (timestamps only)",
        "test_ordering::test_target_acquire_traced_after_the_takeover_by_the_chain_not_a_window"),
    Tolerance(
        "grant-traced-after-pickup", "handover-target", "timestamps",
        "the grant tracepoint fires after the cmpxchg that hands over; the owner's "
        "vCPU may be preempted in between (41 ms on a real run) while the waiter "
        "acquires and prints.  In chain order the grant comes first; one from "
        "before the chain's start (the acquire unchained) is awaited until the "
        "trace ends, by timestamps it must come within GRANT_WAIT",
        "counts.grants_traced_after_pickup", "GRANT_WAIT (timestamps only)",
        "test_ordering::test_handover_acquire_before_any_grant_is_caught_in_chain_order"),
    Tolerance(
        "grant-taken-before-pickup", "handover-target", "both",
        "the grant took effect (the next acquire's prev_* name its target), but a "
        "higher priority took the console before the target picked it up",
        "counts.grants_taken_before_pickup", "",
        "test_ordering::test_target_acquire_traced_after_the_takeover_by_the_chain_not_a_window"),
    Tolerance(
        "equal-timestamps", "one-owner", "timestamps",
        "trace-cmd lists events of one timestamp by CPU number (a guest clock that "
        "stood still, a clamped global clock); the group is taken in an order "
        "consistent with the console state.  In chain order ties are taken as they "
        "come",
        "counts.tie_groups_reordered", "",
        "test_ordering::test_equal_timestamps_need_no_tie_reordering_in_chain_order"),
    Tolerance(
        "late-commit-after-takeover", "no-loss", "both",
        "the old owner's commit took effect before the takeover (the taker's first "
        "emission is the next seq) but its tracepoint fired later; it must be that "
        "context's next event",
        "counts.late_commits_after_takeover", "",
        "test_rules::test_late_commit_is_the_old_owners_next_event_however_late"),
    Tolerance(
        "emission-before-its-store", "no-loss", "both",
        "the store tracepoint fires before the record is committed, but events of "
        "different CPUs are listed by their own clocks (equal timestamps by CPU "
        "number); the emission waits for the store of its seq",
        "counts.held_for_store", "",
        "test_rules::test_emission_listed_before_its_store_waits_for_it"),
    Tolerance(
        "trace-starts-mid-ownership", "one-owner", "both",
        "the trace may begin while a context owns the console, also between an "
        "emission and its commit",
        "counts.commits_of_pretrace_emission", "",
        "test_rules::test_trace_starting_between_emit_and_commit"),
    Tolerance(
        "stale-emit", "after-loss", "both",
        "an old owner passed its last ownership check, was taken over, then its "
        "emission tracepoint fired; it writes nothing (each byte is written in an "
        "unsafe section whose entry checks ownership) and notices the loss next",
        "counts.stale_emits", "",
        "test_rules::test_stale_emit_before_noticing_a_takeover_is_allowed"),
    Tolerance(
        "release-mid-record-on-request", "duplicate", "both",
        "console_can_proceed() releases in the middle of a record when a waiter "
        "requested a handover, even if the waiter timed out meanwhile: the next "
        "owner's reprint is documented",
        "counts.releases_mid_record_on_request", "",
        "test_rules::test_release_mid_record_on_handover_request_then_reprint"),
    Tolerance(
        "panic-release-handover", "panic-protect", "both",
        "a panic-priority owner that committed its record releases to a pending "
        "waiter (every release hands over to one): not a takeover",
        "counts.panic_release_handovers", "",
        "test_rules::test_panic_owner_handing_over_at_its_release_is_not_a_takeover"),
    Tolerance(
        "race32-late-commit", "after-loss", "both",
        "seed patch 006: on 32-bit the seq is outside the state word; an owner "
        "delayed between its state check and the seq cmpxchg commits after a "
        "remote takeover (a documented duplicate line, never a loss)",
        "counts.race32_late_commits", "",
        "test_rules::test_32bit_race_is_the_documented_exception"),
    Tolerance(
        "suppressed-record", "no-loss", "both",
        "a record at or above the console loglevel is committed without output "
        "(no emission, or len=0)",
        "counts.suppressed_records", "",
        "test_rules::test_suppressed_records"),
    Tolerance(
        "store-hole-at-trace-edge", "trace completeness", "both",
        "two CPUs trace their stores in the other order than they reserved the "
        "seqs: a seq missing between stored ones whose store can have fired "
        "before tracing began (no more seqs stored below it than the CPUs can "
        "have had in flight then) or after its CPU's recording ended (no event "
        "of the trace, or of a CPU whose data may end early, shows the record "
        "stored) is no lost store event",
        "counts.store_holes_at_trace_edges", "",
        "test_rules::test_store_hole_at_the_trace_start_is_tolerated_and_counted"),
    Tolerance(
        "stray-byte-after-unsafe-panic-takeover", "serial-corrupt", "serial",
        "a panic takeover of an owner inside an unsafe section (the series' last "
        "resort) lets the old owner write the byte of its section until it notices "
        "the loss: into the taker's line, or after the taker's line end as a line "
        "of its own (else serial-partial)",
        "serial.stray_after_unsafe_takeover", "",
        "test_rules::test_serial_stray_byte_after_unsafe_panic_takeover_is_documented"),
    Tolerance(
        "full-line-of-interrupted-attempt", "serial-partial", "serial",
        "an attempt that lost ownership in its last byte printed a complete line; "
        "the reprint gives a second one",
        "serial.reprinted_full_lines", "",
        "test_realtrace::test_interrupted_attempt_that_printed_its_whole_line"),
    Tolerance(
        "transition-before-chain-start", "trace completeness", "both",
        "a CPU had not traced a transition when the trace began, and it is "
        "listed after the chain's root was chosen (after ROOT_HOLD transitions "
        "of the console), fewer than PRE_ROOT_LINKS links after the root; it "
        "links before the root: history before the trace, skipped by the "
        "checker unless its context owns the console",
        "counts.pre_chain_events", "",
        "test_ordering::test_a_transition_from_before_the_chains_start_is_counted"),
)

TOLERANCE_NAMES = tuple(t.name for t in TOLERANCES)

# name -> its counter's key in the checker's counts (the verdict's
# "counts"), for the rows counted there
COUNTS_KEY = {t.name: t.counter.partition(".")[2] for t in TOLERANCES
              if t.counter.startswith("counts.")}


class Tally:
    """The one consumer of the tolerances a model grants
    (facts.ToleranceGranted): each counts once in its row's counter, a
    key of `counts`, the checker's counters, which the checker started
    at 0.  A name that is no row, or a row counted elsewhere, is a
    KeyError: a model grants only rows of this table."""

    def __init__(self, counts):
        self.counts = counts

    def __call__(self, fact):
        self.counts[COUNTS_KEY[fact.name]] += 1


# counters the serial checker writes only once they moved (serial_place.py)
WRITTEN_WHEN_NONZERO = frozenset(("serial.stray_after_unsafe_takeover",))


def counter_value(verdict, path):
    """The value of a dotted counter path in a verdict dict (KeyError when
    the verdict has no such counter)."""
    v = verdict
    keys = path.split(".")
    for k in keys[:-1]:
        v = v[k]
    if path in WRITTEN_WHEN_NONZERO:
        return v.get(keys[-1], 0)
    return v[keys[-1]]
