// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress self-checks and summary lines.
 *
 * At the end of every run the module checks the invariants it can check
 * on its own counters and prints one line, like torture.c's end of test:
 *
 *   printk_stress: run=<id> SUCCESS checks=stored,nmi,takeovers,records
 *   printk_stress: run=<id> FAILURE checks=... failed: <check> <why>; ...
 *
 * The checks say nothing about what the console printed: that is the
 * host analysis's business (the verdict of a scenario comes from it).
 * During a run a stats line follows every stats_interval_s seconds.
 * All these lines are printed at KERN_ALERT, so the console shows them
 * whatever the level knob of the records is.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/string.h>

#include "ps.h"

/* One run's totals, for the summary lines */
struct ps_totals {
	long	attempted;
	long	stored;
	long	refused;
	long	sections;
	long	nmi_sent;
	long	nmi_handled;
	long	to[PS_NR_TS];
};

static void ps_totals(struct ps_totals *t)
{
	unsigned int cpu, c, o, k, s;

	memset(t, 0, sizeof(*t));
	for_each_possible_cpu(cpu) {
		struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);

		for (c = 0; c < PS_NR_CTX; c++)
			ps_stats_sum(cpu, c, &t->attempted, &t->stored,
				     &t->refused);
		for (o = 0; o < PS_NR_ORIG; o++)
			t->sections += atomic_long_read(&pc->sections[0][o]) +
				       atomic_long_read(&pc->sections[1][o]);
		t->nmi_sent += atomic_long_read(&pc->nmi_sent);
		t->nmi_handled += atomic_long_read(&pc->nmi_handled);
	}
	for (k = 0; k < PS_NR_KIND; k++)
		for (s = 0; s < PS_NR_TS; s++)
			t->to[s] += atomic_long_read(&ps_to_stats[k][s]);
}

/**
 * ps_summary_format() - the totals of the run as "key=value ..."
 * @buf: output buffer
 * @size: its size
 *
 * Return: the length written. takeovers_taken counts hostile takeovers
 * only; direct acquisitions of a free console and refusals are apart.
 */
int ps_summary_format(char *buf, size_t size)
{
	struct ps_totals t;

	ps_totals(&t);
	return scnprintf(buf, size,
			 "attempted=%ld stored=%ld refused=%ld sections=%ld nmi_sent=%ld nmi_handled=%ld takeovers_injected=%ld takeovers_taken=%ld takeovers_direct=%ld takeovers_refused_policy=%ld takeovers_refused_nested=%ld",
			 t.attempted, t.stored, t.refused, t.sections, t.nmi_sent,
			 t.nmi_handled, t.to[PS_TS_INJECTED], t.to[PS_TS_TAKEN],
			 t.to[PS_TS_DIRECT] + t.to[PS_TS_UNTRACED],
			 t.to[PS_TS_REFUSED_POLICY], t.to[PS_TS_REFUSED_NESTED]);
}

/**
 * ps_stats_line() - print the periodic stats line of the running run
 *
 * Called from the stats work, without ps_mutex: the run's id, start
 * time and knobs do not change while it runs.
 */
void ps_stats_line(void)
{
	static char buf[512];	/* only the stats work uses it */
	int len;

	len = scnprintf(buf, sizeof(buf), "stats run=%u elapsed_ms=%llu ",
			ps_run.id,
			div_u64(ktime_get_ns() - ps_run.start_ns,
				NSEC_PER_MSEC));
	ps_summary_format(buf + len, sizeof(buf) - len);
	ps_printk(KERN_ALERT PS_NAME ": %s\n", buf);
}

/* Failure reasons of the checks, under ps_mutex */
struct ps_reasons {
	char		buf[640];
	int		len;
	unsigned int	failed;		/* BIT(enum ps_check) */
};

static __printf(3, 4) void ps_fail(struct ps_reasons *r, enum ps_check chk,
				   const char *fmt, ...)
{
	va_list args;

	r->len += scnprintf(r->buf + r->len, sizeof(r->buf) - r->len, "%s%s ",
			    r->failed ? "; " : "", ps_check_names[chk]);
	va_start(args, fmt);
	r->len += vscnprintf(r->buf + r->len, sizeof(r->buf) - r->len, fmt,
			     args);
	va_end(args);
	r->failed |= BIT(chk);
}

/*
 * What a producer passed to printk() and what printk() did with each:
 * stored (it returned > 0) or refused (it returned 0; see ps_emit()).
 */
struct ps_ledger {
	const char		*units;		/* what the counts count */
	const char		*passed_name;
	const atomic_long_t	*passed, *stored, *refused;
};

/* its whole records */
static struct ps_ledger ps_records_ledger(struct ps_prod_stats *p)
{
	return (struct ps_ledger){ "producers", "attempted",
				   &p->next, &p->stored, &p->refused };
}

/* its records in fragments (the cont shape), fragment by fragment */
static struct ps_ledger ps_fragments_ledger(struct ps_prod_stats *p)
{
	return (struct ps_ledger){ "producers' fragments", "fragments",
				   &p->cont.frags, &p->cont.stored,
				   &p->cont.refused };
}

/*
 * stored: in every producer's ledger, what it passed to printk() was
 * stored or refused; the first producer whose ledger does not add up is
 * named
 */
static void ps_check_ledger(struct ps_reasons *r, unsigned int tpc,
			    struct ps_ledger (*ledger_of)(struct ps_prod_stats *))
{
	unsigned int cpu, id, c, bad = 0;
	long a, s, x, fa = 0, fs = 0, fx = 0;
	unsigned int fcpu = 0, fid = 0, fc = 0;
	struct ps_ledger l;
	char name[8];

	for_each_possible_cpu(cpu) {
		struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);

		for (id = 0; id < PS_NR_WRITERS; id++) {
			if (id < PS_MAX_THREADS && id >= tpc)
				continue;
			for (c = 0; c < PS_NR_CTX; c++) {
				l = ledger_of(&pc->prod[id][c]);
				a = atomic_long_read(l.passed);
				s = atomic_long_read(l.stored);
				x = atomic_long_read(l.refused);
				if (a == s + x)
					continue;
				if (!bad++) {
					fcpu = cpu;
					fid = id;
					fc = c;
					fa = a;
					fs = s;
					fx = x;
				}
			}
		}
	}
	if (!bad)
		return;
	l = ledger_of(&per_cpu_ptr(ps_pcpu, fcpu)->prod[fid][fc]);
	ps_writer_name(fid, name, sizeof(name));
	ps_fail(r, PS_CHK_STORED,
		"%u %s, first cpu=%u ctx=%s writer=%s %s=%ld stored=%ld refused=%ld",
		bad, l.units, fcpu, ps_ctx_names[fc], name, l.passed_name, fa, fs, fx);
}

/* nmi: every NMI the module sent was handled (its request served) */
static void ps_check_nmi(struct ps_reasons *r)
{
	unsigned int cpu, bad = 0, fcpu = 0;
	long sent, handled, fsent = 0, fhandled = 0;

	for_each_possible_cpu(cpu) {
		struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);

		sent = atomic_long_read(&pc->nmi_sent);
		handled = atomic_long_read(&pc->nmi_handled);
		if (sent == handled)
			continue;
		if (!bad++) {
			fcpu = cpu;
			fsent = sent;
			fhandled = handled;
		}
	}
	if (bad)
		ps_fail(r, PS_CHK_NMI, "%u CPUs, first cpu=%u sent=%ld handled=%ld",
			bad, fcpu, fsent, fhandled);
}

/*
 * takeovers: every injected takeover has exactly one outcome (taken,
 * direct, untraced, refused_policy, refused_nested) or was not carried
 * out (dropped, merged into a pending NMI); an NMI kind's outcomes are
 * its delivered NMIs.
 */
static void ps_check_takeovers(struct ps_reasons *r)
{
	long v[PS_NR_TS], out, acc;
	unsigned int k, s;

	for (k = 0; k < PS_NR_KIND; k++) {
		for (s = 0; s < PS_NR_TS; s++)
			v[s] = atomic_long_read(&ps_to_stats[k][s]);
		out = v[PS_TS_TAKEN] + v[PS_TS_DIRECT] + v[PS_TS_UNTRACED] +
		      v[PS_TS_REFUSED_POLICY] + v[PS_TS_REFUSED_NESTED];
		acc = out + v[PS_TS_DROPPED] + v[PS_TS_MERGED];
		if (v[PS_TS_INJECTED] != acc)
			ps_fail(r, PS_CHK_TAKEOVERS,
				"kind=%s injected=%ld accounted=%ld",
				ps_kind_names[k], v[PS_TS_INJECTED], acc);
		else if ((BIT(k) & PS_KIND_NMI_MASK) &&
			 v[PS_TS_DELIVERED] != out)
			ps_fail(r, PS_CHK_TAKEOVERS,
				"kind=%s delivered=%ld outcomes=%ld",
				ps_kind_names[k], v[PS_TS_DELIVERED], out);
	}
}

/* The most iterations a writer of @orig on @cpu made in the run */
static unsigned long ps_iter_max(struct ps_pcpu *pc, enum ps_origin orig)
{
	switch (orig) {
	case PS_ORIG_TASK:
		return pc->task_iter_max;
	case PS_ORIG_HARDIRQ:
		return pc->irq_writer.iter;
	case PS_ORIG_SOFTIRQ:
		return pc->sirq_writer.iter;
	default:
		return pc->nmi_writer.iter;
	}
}

static long ps_attempted(unsigned int cpu, enum ps_ctx ctx)
{
	long a = 0, s = 0, x = 0;

	ps_stats_sum(cpu, ctx, &a, &s, &x);
	return a;
}

/*
 * records: every producer CPU printed task, hardirq, softirq and
 * deferred records, every
 * NMI target CPU NMI records (as far as contexts asks for them); and a
 * writer that got past the iteration that runs an emergency (panic)
 * section ran one there, or found the panic one busy.
 */
static void ps_check_records(struct ps_reasons *r)
{
	const struct ps_cfg *cfg = &ps_run.cfg;
	static const enum ps_ctx own[] = {
		PS_CTX_TASK, PS_CTX_HARDIRQ, PS_CTX_SOFTIRQ, PS_CTX_DEFERRED
	};
	unsigned int cpu, i, o, a, every;
	struct ps_pcpu *pc;
	unsigned long iter;
	long count;

	for_each_cpu(cpu, &ps_run.cpus)
		for (i = 0; i < ARRAY_SIZE(own); i++)
			if ((cfg->contexts & BIT(own[i])) &&
			    !ps_attempted(cpu, own[i]))
				ps_fail(r, PS_CHK_RECORDS, "cpu=%u ctx=%s none",
					cpu, ps_ctx_names[own[i]]);
	if (ps_need_driver(cfg) && (cfg->contexts & BIT(PS_CTX_NMI)))
		for_each_cpu(cpu, &ps_run.nmi_cpus)
			if (!ps_attempted(cpu, PS_CTX_NMI))
				ps_fail(r, PS_CHK_RECORDS, "cpu=%u ctx=nmi none",
					cpu);

	for (a = PS_CTX_EMERG; a <= PS_CTX_PANIC; a++) {
		if (!(cfg->contexts & PS_CONS_CONTEXTS & BIT(a)))
			continue;
		every = a == PS_CTX_EMERG ? cfg->emerg_every : cfg->panic_every;
		for_each_possible_cpu(cpu) {
			pc = per_cpu_ptr(ps_pcpu, cpu);
			for (o = 0; o < PS_NR_ORIG; o++) {
				iter = ps_iter_max(pc, o);
				if (!(cfg->atomic_from & BIT(o)) || iter <= every)
					continue;
				count = atomic_long_read(&pc->sections[a - PS_CTX_EMERG][o]);
				if (a == PS_CTX_PANIC)
					count += atomic_long_read(&pc->panic_busy[o]);
				if (!count)
					ps_fail(r, PS_CHK_RECORDS,
						"cpu=%u ctx=%s from=%s no section after %lu iterations",
						cpu, ps_ctx_names[a],
						ps_origin_names[o], iter);
			}
		}
	}
}

/**
 * ps_result_line() - check the stopped run, print its SUCCESS/FAILURE line
 *
 * Caller holds ps_mutex; every producer has stopped. The records check
 * needs the whole run: it is left out when the run was stopped before
 * duration_s (by command or unload).
 *
 * Return: true for SUCCESS.
 */
bool ps_result_line(void)
{
	static struct ps_reasons r;
	bool whole = !strcmp(ps_run.stop_reason, "duration");
	unsigned int i;
	char checks[64];
	int len = 0;

	lockdep_assert_held(&ps_mutex);

	memset(&r, 0, sizeof(r));
	ps_check_ledger(&r, ps_run.cfg.threads_per_cpu, ps_records_ledger);
	ps_check_ledger(&r, ps_run.cfg.threads_per_cpu, ps_fragments_ledger);
	ps_check_nmi(&r);
	ps_check_takeovers(&r);
	if (whole)
		ps_check_records(&r);

	for (i = 0; i < PS_NR_CHECK; i++)
		if (i != PS_CHK_RECORDS || whole)
			len += scnprintf(checks + len, sizeof(checks) - len,
					 "%s%s", len ? "," : "",
					 ps_check_names[i]);
	if (r.failed)
		ps_printk(KERN_ALERT PS_NAME ": run=%u FAILURE checks=%s failed: %s\n",
			  ps_run.id, checks, r.buf);
	else
		ps_printk(KERN_ALERT PS_NAME ": run=%u SUCCESS checks=%s\n",
			  ps_run.id, checks);
	ps_run.result = r.failed ? "FAILURE" : "SUCCESS";
	return !r.failed;
}
