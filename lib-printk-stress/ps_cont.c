// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress records in fragments: the cont shape.
 *
 * With the cont shape a producer's records alternate between whole
 * records (ps_record.c) and records printed in fragments, as pr_cont()
 * users print a line: the first fragment with printk() at the level
 * knob, the others with KERN_CONT, the last one ending with the newline.
 * Records in fragments are numbered on their own, n = 0, 1, 2, ... per
 * producer; record n has PS_CONT_MIN + n % PS_CONT_SPREAD fragments,
 * each of this text, one line here broken in two (docs/interfaces.md
 * section 3):
 *
 *   pscont v=1 r=<run> c=<cpu> x=<ctx> w=<writer> n=<n> f=<i>/<count>
 *          l=<len> <payload> k=<crc32_hex8>;
 *
 * The payload is generated from the fragment's header as a whole
 * record's is from its header, and k= is the crc of all before it, so
 * each fragment proves itself and names its record and its place in
 * it; the ';' ends it, whether printk() joined it to the fragments
 * before it or not.
 *
 * What printk() makes of them (6.1 and 6.12 alike): a KERN_CONT
 * fragment is appended to the last record stored when that has the
 * same caller id (the task's pid, or for every interrupt context the
 * CPU) and is not finalized yet. A record reserved in between (by
 * another CPU, or by an interrupt or NMI on this one) finalizes it, and
 * the fragment begins a record of its own; so does a fragment that would
 * make the record longer than the line limit. A record's fragments
 * therefore end up in one stored record or split over several, with
 * other records, of fragments too, between them. The host analysis
 * checks that every fragment was stored exactly once and in order,
 * joined or not, and none lost but those printk() refused.
 *
 * Invariants: a writer prints all fragments of a record it began, in
 * index order (the run's stop is checked between records only), so a
 * record in fragments is never left open by the stressor; its counters
 * are written by the writer only, as a whole record's are.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32.h>
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>

#include "ps.h"

#define PS_CONT_VERSION	1	/* pscont v=<version> */
#define PS_CONT_MIN	2	/* fragments of a record, at least */
#define PS_CONT_SPREAD	3	/* ... and up to PS_CONT_MIN + this - 1 */

/**
 * ps_cont_turn() - whether a producer's next record is one in fragments
 * @w: the writer
 * @ctx: the record context
 *
 * With the cont shape, a producer's records alternate, beginning with a
 * whole one: record n in fragments follows whole record n.
 *
 * Return: true when the next record is printed in fragments.
 */
bool ps_cont_turn(struct ps_writer *w, enum ps_ctx ctx)
{
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, w->cpu);
	struct ps_prod_stats *st = &pc->prod[w->id][ctx];

	if (!(ps_run.cfg.shapes & BIT(PS_SHAPE_CONT)))
		return false;
	return atomic_long_read(&st->cont.next) < atomic_long_read(&st->next);
}

/* The number of fragments of record @n in fragments */
static unsigned int ps_cont_count(unsigned long n)
{
	return PS_CONT_MIN + n % PS_CONT_SPREAD;
}

/**
 * ps_cont_format() - format fragment @i of record @n into @w->rec
 * @w: the writer
 * @ctx: the record context
 * @n: the producer's number of the record in fragments
 * @i: the fragment's index, 0 .. @count - 1
 * @count: the record's number of fragments
 * @crc: returns the checksum over the fragment's text
 *
 * Every fragment has a payload of payload_len / @count characters (at
 * least one), generated as a whole record's; the other shapes do not
 * change it.
 *
 * Return: the length of the fragment's text, without " k=<crc>;".
 */
static unsigned int ps_cont_format(struct ps_writer *w, enum ps_ctx ctx,
				   unsigned long n, unsigned int i,
				   unsigned int count, u32 *crc)
{
	unsigned int len = DIV_ROUND_UP(ps_run.cfg.payload_len, count);
	unsigned int hlen;
	u32 seed;

	hlen = scnprintf(w->rec, PS_HEADER_MAX,
			 "pscont v=%u r=%u c=%u x=%s w=%s n=%lu f=%u/%u l=%u ",
			 PS_CONT_VERSION, ps_run.id, w->cpu, ps_ctx_names[ctx],
			 w->name, n, i, count, len);
	seed = crc32_le(~0, (const u8 *)w->rec, hlen);
	ps_fill(w->rec + hlen, len, seed);
	*crc = crc32_le(seed, (const u8 *)w->rec + hlen, len);
	return hlen + len;
}

/*
 * ps_cont_fragment - print fragment @i of @count of record @n
 *
 * The first fragment begins a record at the level knob; the others are
 * KERN_CONT and carry the level too, for when printk() cannot join them
 * and they begin a record of their own. The prefixes are parsed from the
 * formatted text, so they can be an argument. The last fragment's
 * newline finalizes the record.
 */
static void ps_cont_fragment(struct ps_writer *w, enum ps_ctx ctx,
			     unsigned long n, unsigned int i,
			     unsigned int count)
{
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, w->cpu);
	struct ps_cont_stats *cs = &pc->prod[w->id][ctx].cont;
	unsigned int len;
	u64 t0;
	u32 crc;
	int ret;

	len = ps_cont_format(w, ctx, n, i, count, &crc);
	atomic_long_inc(&cs->frags);
	t0 = local_clock();
	ret = ps_printk_ctx(ctx, "%s" KERN_SOH "%c%.*s k=%08x;%s",
			    i ? KERN_CONT : "", '0' + ps_run.cfg.level,
			    (int)len, w->rec, crc, i + 1 == count ? "\n" : "");
	ps_hist_add(&pc->hists->lat[ctx], local_clock() - t0);
	if (ret > 0)
		atomic_long_inc(&cs->stored);
	else
		atomic_long_inc(&cs->refused);
}

/**
 * ps_cont_emit() - print the next record in fragments of @w for @ctx
 * @w: the writer
 * @ctx: the record context
 *
 * All of its fragments, even when the run stops meanwhile. A task
 * kthread lets the scheduler run another task between two of them (a
 * task's continuation may then meet another task's records); atomic
 * contexts meet the other CPUs' records and the interrupts and NMIs of
 * their own CPU.
 */
void ps_cont_emit(struct ps_writer *w, enum ps_ctx ctx)
{
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, w->cpu);
	struct ps_cont_stats *cs = &pc->prod[w->id][ctx].cont;
	unsigned long n = atomic_long_inc_return(&cs->next) - 1;
	unsigned int count = ps_cont_count(n), i;

	for (i = 0; i < count; i++) {
		if (i && (ctx == PS_CTX_TASK || ctx == PS_CTX_DEFERRED))
			cond_resched();
		ps_cont_fragment(w, ctx, n, i, count);
	}
}

/**
 * ps_cont_clear() - zero a producer's counters of records in fragments
 * @cs: the counters
 */
void ps_cont_clear(struct ps_cont_stats *cs)
{
	atomic_long_set(&cs->next, 0);
	atomic_long_set(&cs->frags, 0);
	atomic_long_set(&cs->stored, 0);
	atomic_long_set(&cs->refused, 0);
}
