// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress records: the record format, printing one, histograms,
 * and the emergency and panic-priority sections that print them.
 *
 * Records are in the format of docs/interfaces.md section 3:
 *   pstress v=2 r=<run> c=<cpu> x=<ctx> w=<writer> n=<n> l=<len> <payload> k=<crc32_hex8>
 * Each writer (struct ps_writer: a task kthread, a CPU's hrtimer, a CPU's
 * NMI handler) prints one record after the other and counts n per
 * context, so each producer (run, cpu, ctx, writer) has a single writer.
 * Emergency/panic sections (those of the console design: ps_cons_*.c)
 * run from any writer; one CPU at a time is at panic prio.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32.h>
#include <linux/log2.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/topology.h>

#include "ps.h"

static const char ps_alphabet[] =
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/*
 * ps_printk - printk() with the level in the formatted text
 *
 * The level is a knob, so it is passed as KERN_SOH "%c" + '0' + level;
 * vprintk() is what printk() calls (including its NMI handling), and
 * 6.1 parses the level prefix from the formatted text.
 */
__printf(1, 2) int ps_printk(const char *fmt, ...)
{
	va_list args;
	int ret;

	va_start(args, fmt);
	ret = vprintk(fmt, args);
	va_end(args);
	return ret;
}

/**
 * ps_printk_ctx() - printk() a text as the producers of a context do
 * @ctx: the record context
 * @fmt: format, with the level in the formatted text
 *
 * Records of PS_CTX_DEFERRED go through printk_deferred()'s path:
 * _printk_deferred() is not exported in 6.1; its body is this call of
 * the exported vprintk_emit(): LOGLEVEL_SCHED stores the record at once
 * (the level from the text's prefix) and leaves its printing to later.
 * Every other context calls vprintk(), as printk() does.
 *
 * Return: what printk() returns: the length stored, 0 when it stored
 * nothing.
 */
__printf(2, 3) int ps_printk_ctx(enum ps_ctx ctx, const char *fmt, ...)
{
	va_list args;
	int ret;

	va_start(args, fmt);
	if (ctx == PS_CTX_DEFERRED)
		ret = vprintk_emit(0, LOGLEVEL_SCHED, NULL, fmt, args);
	else
		ret = vprintk(fmt, args);
	va_end(args);
	return ret;
}

/**
 * ps_fill() - the payload of a record, seeded from its header
 * @buf: where the payload goes
 * @len: payload length
 * @state: the seed, crc32_le(~0) of the header
 *
 * One xorshift32 step per character (docs/interfaces.md section 3), so
 * records differ in their payload too, not only in their header.
 */
void ps_fill(char *buf, unsigned int len, u32 state)
{
	unsigned int i;

	state |= 1;	/* xorshift32 stays at 0 */
	for (i = 0; i < len; i++) {
		state ^= state << 13;
		state ^= state >> 17;
		state ^= state << 5;
		buf[i] = ps_alphabet[state % (sizeof(ps_alphabet) - 1)];
	}
}

/**
 * ps_header() - format the header of a record into @w->rec
 * @w: the writer
 * @ctx: the record context
 * @n: the producer's sequence number of the record
 * @len: the payload length it names
 *
 * Return: the length of the header, up to and including the blank
 * after l=<len>.
 */
static unsigned int ps_header(struct ps_writer *w, enum ps_ctx ctx,
			      unsigned long n, unsigned int len)
{
	return scnprintf(w->rec, PS_HEADER_MAX,
			 "pstress v=%u r=%u c=%u x=%s w=%s n=%lu l=%u ",
			 PS_RECORD_VERSION, ps_run.id, w->cpu, ps_ctx_names[ctx],
			 w->name, n, len);
}

/**
 * ps_format() - format record @n of @w's producer for @ctx into @w->rec
 * @w: the writer
 * @ctx: the record context
 * @n: the producer's sequence number of the record
 * @crc: returns the checksum over the whole record text
 *
 * Return: the length of the record text (header and payload, without
 * the " k=<crc>" that follows them).
 */
static unsigned int ps_format(struct ps_writer *w, enum ps_ctx ctx,
			      unsigned long n, u32 *crc)
{
	unsigned int len, hlen;
	u32 seed;

	len = ps_payload_len(n, ps_header(w, ctx, n, 999));
	len = min_t(unsigned int, len, PS_TEXT_MAX);
	hlen = ps_header(w, ctx, n, len);
	seed = crc32_le(~0, (const u8 *)w->rec, hlen);
	ps_fill(w->rec + hlen, len, seed);
	ps_shape_payload(w->rec + hlen, len, n);
	*crc = crc32_le(seed, (const u8 *)w->rec + hlen, len);
	return hlen + len;
}

/**
 * ps_hist_bucket() - the histogram bucket of a duration
 * @ns: the duration
 *
 * The invariant, with S = PS_HIST_SUB and T = PS_HIST_TOP_BITS: bucket
 * b < 2 * S holds the durations [b, b + 1) ns, one value each; a bucket
 * 2 * S <= b < PS_HIST_OVERFLOW, with s = b / S - 1 >= 1, holds
 * [(b - s * S) << s, (b - s * S + 1) << s) ns, where S <= b - s * S < 2 * S:
 * S buckets of width 2^s for the durations [S * 2^s, 2 * S * 2^s), so a
 * bucket is at most 1/S of its lower bound wide. PS_HIST_OVERFLOW holds
 * [2^T ns, infinity). ps_hist_lower() gives the lower bound.
 *
 * Return: the bucket's index, 0 .. PS_HIST_OVERFLOW.
 */
unsigned int ps_hist_bucket(u64 ns)
{
	unsigned int s;

	if (ns < 2 * PS_HIST_SUB)
		return ns;
	if (ns >= BIT_ULL(PS_HIST_TOP_BITS))
		return PS_HIST_OVERFLOW;
	s = ilog2(ns) - PS_HIST_SUB_BITS;
	return s * PS_HIST_SUB + (unsigned int)(ns >> s);
}

/**
 * ps_hist_lower() - the lower bound of a histogram bucket
 * @b: the bucket's index, 0 .. PS_HIST_OVERFLOW
 *
 * Return: the shortest duration in ns that ps_hist_bucket() puts into
 * bucket @b (2^PS_HIST_TOP_BITS for PS_HIST_OVERFLOW).
 */
u64 ps_hist_lower(unsigned int b)
{
	unsigned int s;

	if (b < 2 * PS_HIST_SUB)
		return b;
	s = b / PS_HIST_SUB - 1;
	return (u64)(b - s * PS_HIST_SUB) << s;
}

/**
 * ps_hist_add() - count a duration in a histogram, raise its maximum
 * @h: the histogram
 * @ns: the duration
 *
 * Safe in any context including NMI: atomics only, and the maximum is
 * raised with a cmpxchg loop, so a nested update is never lost.
 */
void ps_hist_add(struct ps_hist *h, u64 ns)
{
	s64 old = atomic64_read(&h->max_ns);

	atomic_inc(&h->b[ps_hist_bucket(ns)]);
	while ((u64)old < ns && !atomic64_try_cmpxchg(&h->max_ns, &old, ns))
		;
}

/**
 * ps_hist_clear() - empty a histogram
 * @h: the histogram
 */
void ps_hist_clear(struct ps_hist *h)
{
	unsigned int b;

	for (b = 0; b < PS_HIST_BUCKETS; b++)
		atomic_set(&h->b[b], 0);
	atomic64_set(&h->max_ns, 0);
}

/**
 * ps_hists_alloc() - allocate every possible CPU's histograms, empty
 *
 * Context: At load, before any producer runs: the producers, the NMI
 * handler included, only ever update them.
 * Return: 0 or -ENOMEM (then none is left allocated).
 */
int ps_hists_alloc(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);

		pc->hists = kvzalloc_node(sizeof(*pc->hists), GFP_KERNEL,
					  cpu_to_node(cpu));
		if (!pc->hists) {
			ps_hists_free();
			return -ENOMEM;
		}
	}
	return 0;
}

/**
 * ps_hists_free() - free the histograms of ps_hists_alloc()
 */
void ps_hists_free(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);

		kvfree(pc->hists);
		pc->hists = NULL;
	}
}

/*
 * ps_emit - print the next record of writer @w in context @ctx
 *
 * Safe in any context including NMI: the producer's counters are only
 * written by @w, @w->rec belongs to it, and a writer never interrupts
 * itself (a kthread, a CPU's hrtimer, a CPU's NMI handler).
 */
static void ps_emit(struct ps_writer *w, enum ps_ctx ctx)
{
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, w->cpu);
	struct ps_prod_stats *st = &pc->prod[w->id][ctx];
	unsigned int len;
	unsigned long n;
	u64 t0, dt;
	u32 crc;
	int ret;

	n = atomic_long_inc_return(&st->next) - 1;
	len = ps_format(w, ctx, n, &crc);

	/* break_check=stored: the first task record is never printed */
	if (unlikely(ps_run.cfg.break_check & BIT(PS_CHK_STORED)) &&
	    ctx == PS_CTX_TASK && !n)
		return;

	t0 = local_clock();
	ret = ps_printk_ctx(ctx, KERN_SOH "%c%.*s k=%08x\n",
			    '0' + ps_run.cfg.level, (int)len, w->rec, crc);
	dt = local_clock() - t0;

	/*
	 * printk() returns 0 when it stored nothing: the data ring had no
	 * room for the text (its oldest record still reserved by a writer
	 * that an NMI interrupted: prb_reserve() then leaves a record
	 * without text, which consoles count as dropped). Counted apart:
	 * whether the consoles skipped exactly those is for the host
	 * analysis to say.
	 */
	if (ret > 0)
		atomic_long_inc(&st->stored);
	else
		atomic_long_inc(&st->refused);
	ps_hist_add(&pc->hists->lat[ctx], dt);
}

/**
 * ps_emit_burst() - print up to @burst records of writer @w for @ctx
 * @w: the writer
 * @ctx: the record context
 * @burst: how many
 *
 * Whole records, or with the cont shape every other one in fragments
 * (ps_cont.c); none once the run stops.
 */
void ps_emit_burst(struct ps_writer *w, enum ps_ctx ctx, unsigned int burst)
{
	unsigned int i;

	for (i = 0; i < burst && !ps_is_stopping(); i++) {
		if (ps_cont_turn(w, ctx))
			ps_cont_emit(w, ctx);
		else
			ps_emit(w, ctx);
	}
}

/**
 * ps_writer_prints() - whether writer @id prints records of context @ctx
 * @id: writer id (task kthread index or PS_W_*)
 * @ctx: record context
 *
 * Return: true for the writer's own context and the sections it runs.
 */
bool ps_writer_prints(unsigned int id, enum ps_ctx ctx)
{
	switch (ctx) {
	case PS_CTX_TASK:
		return id < PS_MAX_THREADS;
	case PS_CTX_HARDIRQ:
		return id == PS_W_HARDIRQ;
	case PS_CTX_NMI:
		return id == PS_W_NMI;
	case PS_CTX_SOFTIRQ:
		return id == PS_W_SOFTIRQ;
	case PS_CTX_DEFERRED:
		return id < PS_MAX_THREADS;
	default:
		return id < PS_NR_WRITERS;
	}
}

/**
 * ps_writer_name() - the w=<writer> name of writer @id
 * @id: writer id (task kthread index or PS_W_*)
 * @buf: output buffer
 * @size: its size
 *
 * Return: the length of the name.
 */
int ps_writer_name(unsigned int id, char *buf, size_t size)
{
	if (id == PS_W_HARDIRQ)
		return scnprintf(buf, size, "hardirq");
	if (id == PS_W_SOFTIRQ)
		return scnprintf(buf, size, "softirq");
	if (id == PS_W_NMI)
		return scnprintf(buf, size, "nmi");
	return scnprintf(buf, size, "task%u", id);
}

void ps_writer_init(struct ps_writer *w, unsigned int cpu, unsigned int id)
{
	w->cpu = cpu;
	w->id = id;
	w->iter = 0;
	ps_writer_name(id, w->name, sizeof(w->name));
}

/**
 * ps_stats_sum() - records of @ctx on @cpu over all writers
 * @cpu: the CPU
 * @ctx: the record context
 * @attempted: incremented by the records passed to printk()
 * @stored: incremented by those printk() stored
 * @refused: incremented by those printk() refused
 */
void ps_stats_sum(unsigned int cpu, enum ps_ctx ctx, long *attempted,
		  long *stored, long *refused)
{
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);
	unsigned int id;

	for (id = 0; id < PS_NR_WRITERS; id++) {
		*attempted += atomic_long_read(&pc->prod[id][ctx].next);
		*stored += atomic_long_read(&pc->prod[id][ctx].stored);
		*refused += atomic_long_read(&pc->prod[id][ctx].refused);
	}
}

/* ------------------------------------------------------------------ */
/* Emergency and panic-priority sections (PS_CONS_CONTEXTS) */

static atomic_t ps_panic_cpu = ATOMIC_INIT(-1);

static void ps_atomic_section(struct ps_writer *w, enum ps_ctx ctx,
			      enum ps_origin orig)
{
	int prio = ctx == PS_CTX_PANIC ? PS_PRIO_PANIC : PS_PRIO_EMERG;
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, w->cpu);
	unsigned long cookie;
	int saved;

	/* Like a real panic, one CPU at a time; never wait (NMI). */
	if (ctx == PS_CTX_PANIC &&
	    atomic_cmpxchg(&ps_panic_cpu, -1, (int)w->cpu) != -1) {
		atomic_long_inc(&pc->panic_busy[orig]);
		return;
	}

	/*
	 * The section disables preemption too, but prio_held must cover
	 * the flush at its exit and be undone before another task of this
	 * CPU can run.
	 */
	preempt_disable();
	pc->prio_held[prio]++;
	barrier();
	cookie = ps_cons_section_enter(ctx);
	/* Owner hint for NMI takeovers: this CPU prints at @prio now. */
	saved = READ_ONCE(pc->atomic_prio);
	WRITE_ONCE(pc->atomic_prio, prio);

	ps_emit_burst(w, ctx, ps_run.cfg.atomic_burst);

	/* The outermost exit may flush the console: still an owner hint. */
	ps_cons_section_exit(ctx, cookie);
	WRITE_ONCE(pc->atomic_prio, saved);
	barrier();
	pc->prio_held[prio]--;
	preempt_enable();

	atomic_long_inc(&pc->sections[ctx - PS_CTX_EMERG][orig]);
	if (ctx == PS_CTX_PANIC)
		atomic_set(&ps_panic_cpu, -1);
}

void ps_maybe_atomic(struct ps_writer *w, enum ps_origin orig)
{
	const struct ps_cfg *cfg = &ps_run.cfg;
	unsigned int ctxs = cfg->contexts & PS_CONS_CONTEXTS;

	if (!(cfg->atomic_from & BIT(orig)) || ps_is_stopping())
		return;
	if ((ctxs & BIT(PS_CTX_EMERG)) && !(w->iter % cfg->emerg_every))
		ps_atomic_section(w, PS_CTX_EMERG, orig);
	if ((ctxs & BIT(PS_CTX_PANIC)) && !(w->iter % cfg->panic_every))
		ps_atomic_section(w, PS_CTX_PANIC, orig);
}
