// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress producers and takeover injection.
 *
 * Producers print records in the format of docs/interfaces.md section 3:
 *   pstress v=2 r=<run> c=<cpu> x=<ctx> w=<writer> n=<n> l=<len> <payload> k=<crc32_hex8>
 * Each writer (struct ps_writer: a task kthread, a CPU's hrtimer, a CPU's
 * NMI handler) prints one record after the other and counts n per
 * context, so each producer (run, cpu, ctx, writer) has a single writer.
 *
 * - task:    kthreads bound to each producer CPU, bursts at task_rate
 * - hardirq: one pinned hrtimer per producer CPU
 * - nmi:     NMI IPIs sent by a driver hrtimer to the NMI target CPUs; the
 *            module's NMI_LOCAL handler only handles NMIs it requested
 *            (per-CPU pending word), so other NMIs are not swallowed
 * - emerg/panic: bursts inside cons_atomic_enter(CONS_PRIO_EMERGENCY or
 *            CONS_PRIO_PANIC)/cons_atomic_exit() from task, hardirq and NMI
 *            (nobkl series only); one CPU at a time is at panic prio
 *
 * Hostile takeovers: on every task and hardirq producer iteration
 * should_fail(&ps_fail_takeover) decides (it is not NMI-safe, so never
 * from NMI). A remote kind calls printk_nobkl_debug_takeover() right there;
 * an NMI kind picks the CPU most likely to own the console and sends it an
 * NMI whose handler takes over, so it lands mid-record on the owner's CPU.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/log2.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/tracepoint.h>

#include "ps.h"

#if PS_HAVE_NMI
#include <asm/apic.h>
#include <asm/irq_vectors.h>
#include <asm/nmi.h>
#endif

/* ps_pcpu.nmi_pending bits */
#define PS_NMI_PRINT		BIT(0)
#define PS_NMI_TO_SHIFT		8	/* + enum ps_kind: takeover request */

struct ps_thread {
	struct task_struct	*task;
	struct ps_writer	w;
};

struct ps_pcpu __percpu *ps_pcpu;
atomic_long_t ps_to_stats[PS_NR_KIND][PS_NR_TS];
atomic_long_t ps_target_stats[PS_NR_TG];

const char * const ps_to_stat_names[PS_NR_TS] = {
	[PS_TS_INJECTED]	= "injected",
	[PS_TS_DELIVERED]	= "delivered",
	[PS_TS_ON_OWNER]	= "on_owner",
	[PS_TS_TAKEN]		= "taken",
	[PS_TS_DIRECT]		= "direct",
	[PS_TS_UNTRACED]	= "untraced",
	[PS_TS_REFUSED_POLICY]	= "refused_policy",
	[PS_TS_REFUSED_NESTED]	= "refused_nested",
	[PS_TS_DROPPED]		= "dropped",
	[PS_TS_MERGED]		= "merged",
};

const char * const ps_target_stat_names[PS_NR_TG] = {
	[PS_TG_TRACED]		= "traced_owner",
	[PS_TG_SECTION]		= "section",
	[PS_TG_PRINTER]		= "printer_running",
	[PS_TG_PRINTER_LAST]	= "printer_last",
	[PS_TG_FALLBACK]	= "fallback",
};

static const char ps_alphabet[] =
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

static ktime_t ps_us(unsigned int us)
{
	return ns_to_ktime((u64)us * NSEC_PER_USEC);
}

static bool ps_is_stopping(void)
{
	return READ_ONCE(ps_stopping);
}

/* ------------------------------------------------------------------ */
/* Records */

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
 * ps_fill() - the payload of a record, seeded from its header
 * @buf: where the payload goes
 * @len: payload length
 * @state: the seed, crc32_le(~0) of the header
 *
 * One xorshift32 step per character (docs/interfaces.md section 3), so
 * records differ in their payload too, not only in their header.
 */
static void ps_fill(char *buf, unsigned int len, u32 state)
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
	unsigned int len = ps_run.cfg.payload_len;
	unsigned int hlen;
	u32 seed;

	hlen = scnprintf(w->rec, PS_HEADER_MAX,
			 "pstress v=%u r=%u c=%u x=%s w=%s n=%lu l=%u ",
			 PS_RECORD_VERSION, ps_run.id, w->cpu, ps_ctx_names[ctx],
			 w->name, n, len);
	seed = crc32_le(~0, (const u8 *)w->rec, hlen);
	ps_fill(w->rec + hlen, len, seed);
	*crc = crc32_le(seed, (const u8 *)w->rec + hlen, len);
	return hlen + len;
}

static unsigned int ps_bucket(u64 ns)
{
	unsigned int b = ns ? ilog2(ns) : 0;

	return min_t(unsigned int, b, PS_HIST_BUCKETS - 1);
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

	atomic_long_inc(&h->b[ps_bucket(ns)]);
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
		atomic_long_set(&h->b[b], 0);
	atomic64_set(&h->max_ns, 0);
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
	ret = ps_printk(KERN_SOH "%c%.*s k=%08x\n", '0' + ps_run.cfg.level,
			(int)len, w->rec, crc);
	dt = local_clock() - t0;

	if (ret > 0)
		atomic_long_inc(&st->stored);
	ps_hist_add(&pc->lat[ctx], dt);
}

static void ps_emit_burst(struct ps_writer *w, enum ps_ctx ctx,
			  unsigned int burst)
{
	unsigned int i;

	for (i = 0; i < burst && !ps_is_stopping(); i++)
		ps_emit(w, ctx);
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
	if (id == PS_W_NMI)
		return scnprintf(buf, size, "nmi");
	return scnprintf(buf, size, "task%u", id);
}

static void ps_writer_init(struct ps_writer *w, unsigned int cpu,
			   unsigned int id)
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
 */
void ps_stats_sum(unsigned int cpu, enum ps_ctx ctx, long *attempted,
		  long *stored)
{
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);
	unsigned int id;

	for (id = 0; id < PS_NR_WRITERS; id++) {
		*attempted += atomic_long_read(&pc->prod[id][ctx].next);
		*stored += atomic_long_read(&pc->prod[id][ctx].stored);
	}
}

/* ------------------------------------------------------------------ */
/* Emergency and panic-priority sections (nobkl series only) */

#if PS_HAVE_NOBKL
static atomic_t ps_panic_cpu = ATOMIC_INIT(-1);

static void ps_atomic_section(struct ps_writer *w, enum ps_ctx ctx,
			      enum ps_origin orig)
{
	enum cons_prio prio = ctx == PS_CTX_PANIC ? CONS_PRIO_PANIC :
						    CONS_PRIO_EMERGENCY;
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, w->cpu);
	enum cons_prio prev;
	int saved;

	/* Like a real panic, one CPU at a time; never wait (NMI). */
	if (ctx == PS_CTX_PANIC &&
	    atomic_cmpxchg(&ps_panic_cpu, -1, (int)w->cpu) != -1) {
		atomic_long_inc(&pc->panic_busy);
		return;
	}

	/*
	 * cons_atomic_enter() disables preemption too, but prio_held must
	 * cover its flush in cons_atomic_exit() and be undone before
	 * another task of this CPU can run.
	 */
	preempt_disable();
	pc->prio_held[prio]++;
	barrier();
	prev = cons_atomic_enter(prio);
	/* Owner hint for NMI takeovers: this CPU prints at @prio now. */
	saved = READ_ONCE(pc->atomic_prio);
	WRITE_ONCE(pc->atomic_prio, prio);

	ps_emit_burst(w, ctx, ps_run.cfg.atomic_burst);

	/* The outermost exit may flush the console: still an owner hint. */
	cons_atomic_exit(prio, prev);
	WRITE_ONCE(pc->atomic_prio, saved);
	barrier();
	pc->prio_held[prio]--;
	preempt_enable();

	atomic_long_inc(&pc->sections[ctx - PS_CTX_EMERG][orig]);
	if (ctx == PS_CTX_PANIC)
		atomic_set(&ps_panic_cpu, -1);
}

static void ps_maybe_atomic(struct ps_writer *w, enum ps_origin orig)
{
	const struct ps_cfg *cfg = &ps_run.cfg;

	if (!(cfg->atomic_from & BIT(orig)) || ps_is_stopping())
		return;
	if ((cfg->contexts & BIT(PS_CTX_EMERG)) &&
	    !(w->iter % cfg->emerg_every))
		ps_atomic_section(w, PS_CTX_EMERG, orig);
	if ((cfg->contexts & BIT(PS_CTX_PANIC)) &&
	    !(w->iter % cfg->panic_every))
		ps_atomic_section(w, PS_CTX_PANIC, orig);
}
#else
static void ps_maybe_atomic(struct ps_writer *w, enum ps_origin orig)
{
}
#endif

/* ------------------------------------------------------------------ */
/* NMIs */

#if PS_HAVE_NMI
/*
 * ps_nmi_kick - request @bits from @cpu's NMI handler, send it an NMI
 *
 * Returns the requested bits that were already pending (merged into the
 * NMI in flight).
 *
 * Only the 0 -> non-zero transition sends an NMI; requests added while
 * one is pending are picked up by its handler (atomic_xchg() there is
 * ordered against this atomic_fetch_or()). Any NMI of @cpu runs the
 * handler, so one from another source can take the request before our
 * NMI arrives; ours then finds nothing to do. nmi_sent, counted after
 * the request and before the NMI, tells the handler when that happened
 * (see ps_nmi_handler()). Interrupts are off in between, so a sender in
 * task context is not preempted with its request published and its NMI
 * not sent.
 */
static unsigned int ps_nmi_kick(unsigned int cpu, unsigned int bits)
{
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);
	unsigned long flags;
	unsigned int old;

	local_irq_save(flags);
	old = atomic_fetch_or(bits, &pc->nmi_pending);
	if (!old) {
		atomic_long_inc(&pc->nmi_sent);
		apic->send_IPI_mask(cpumask_of(cpu), NMI_VECTOR);
	}
	local_irq_restore(flags);
	return old & bits;
}
#endif

/* ------------------------------------------------------------------ */
/* Probes on the series' tracepoints (docs/interfaces.md section 1) */

#if PS_HAVE_NOBKL
/*
 * The console owner's CPU, from nobkl_acquire (emitted on the acquiring
 * CPU) and nobkl_release (on the releasing CPU); -1 when free or unknown.
 */
static atomic_t ps_owner_cpu = ATOMIC_INIT(-1);
#endif

#if PS_HAVE_NOBKL && defined(CONFIG_TRACEPOINTS)
static atomic_long_t ps_nr_timeouts;

/*
 * The probes have the prototypes of the events (TP_PROTO in
 * include/trace/events/printk.h, docs/interfaces.md section 1) with the
 * probe data first. Tracepoint probes run with preemption disabled.
 */
static void ps_tp_timeout_probe(void *data, const struct cons_context *ctxt,
				unsigned long owner_atom,
				unsigned int waited_us,
				unsigned long old_atom, unsigned long new_atom)
{
	atomic_long_inc(&ps_nr_timeouts);
}

/*
 * The acquiring CPU is the owner now; and if the acquire is the one our
 * takeover at this CPU's interrupt context level makes (its priority,
 * not a printer thread), the probe tells ps_takeover() how it went.
 */
static void ps_tp_acquire_probe(void *data, const struct cons_context *ctxt,
				int how, unsigned long prev_atom,
				unsigned long old_atom, unsigned long new_atom)
{
	struct ps_pcpu *pc = this_cpu_ptr(ps_pcpu);
	unsigned int lvl = interrupt_context_level();

	atomic_set(&ps_owner_cpu, raw_smp_processor_id());
	if (pc->to_prio[lvl] && pc->to_prio[lvl] == (int)ctxt->prio &&
	    !ctxt->thread && how >= 0 && how < PS_NR_ACQ)
		pc->to_seen[lvl] |= BIT(how);
}

static void ps_tp_release_probe(void *data, const struct cons_context *ctxt,
				bool handover, unsigned long old_atom,
				unsigned long new_atom)
{
	atomic_cmpxchg(&ps_owner_cpu, raw_smp_processor_id(), -1);
}

static struct ps_tp {
	const char		*name;
	void			*probe;
	struct tracepoint	*tp;
	bool			registered;
} ps_tps[] = {
	{ "nobkl_handover_timeout", ps_tp_timeout_probe },
	{ "nobkl_acquire", ps_tp_acquire_probe },
	{ "nobkl_release", ps_tp_release_probe },
};

enum { PS_TP_TIMEOUT, PS_TP_ACQUIRE, PS_TP_RELEASE };

static void ps_tp_match(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ps_tps); i++)
		if (!strcmp(tp->name, ps_tps[i].name))
			ps_tps[i].tp = tp;
}

/* Returns true when at least one probe was attached. */
int ps_tp_register(void)
{
	static bool searched;
	unsigned int i;
	int n = 0;

	if (!searched) {
		for_each_kernel_tracepoint(ps_tp_match, NULL);
		searched = true;
	}
	atomic_set(&ps_owner_cpu, -1);
	for (i = 0; i < ARRAY_SIZE(ps_tps); i++) {
		if (!ps_tps[i].tp)
			continue;
		/* Owner tracking needs both events. */
		if (i != PS_TP_TIMEOUT &&
		    (!ps_tps[PS_TP_ACQUIRE].tp || !ps_tps[PS_TP_RELEASE].tp))
			continue;
		ps_tps[i].registered =
			!tracepoint_probe_register(ps_tps[i].tp,
						   ps_tps[i].probe, NULL);
		n += ps_tps[i].registered;
	}
	return n > 0;
}

void ps_tp_unregister(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ps_tps); i++) {
		if (ps_tps[i].registered)
			tracepoint_probe_unregister(ps_tps[i].tp,
						    ps_tps[i].probe, NULL);
		ps_tps[i].registered = false;
	}
	tracepoint_synchronize_unregister();
	atomic_set(&ps_owner_cpu, -1);
}

long ps_handover_timeouts(void)
{
	return ps_tps[PS_TP_TIMEOUT].tp ? atomic_long_read(&ps_nr_timeouts) : -1;
}

bool ps_owner_tracked(void)
{
	return ps_tps[PS_TP_ACQUIRE].registered;
}

static void ps_handover_clear(void)
{
	atomic_long_set(&ps_nr_timeouts, 0);
}
#else
int ps_tp_register(void)
{
	return 0;
}

void ps_tp_unregister(void)
{
}

long ps_handover_timeouts(void)
{
	return -1;
}

bool ps_owner_tracked(void)
{
	return false;
}

static void ps_handover_clear(void)
{
}
#endif

/* ------------------------------------------------------------------ */
/* Hostile takeover injection (nobkl series only) */

#if PS_HAVE_NOBKL
DECLARE_FAULT_ATTR(ps_fail_takeover);

/* fail_takeover as it was at load time, for reset */
static struct {
	unsigned long	probability;
	unsigned long	interval;
	int		times;
	int		space;
	unsigned long	verbose;
	bool		task_filter;
} ps_fail_loaded;

/**
 * ps_takeover_attr_loaded() - remember fail_takeover's load-time values
 *
 * Called once the fail_takeover= parameter has been applied.
 */
void ps_takeover_attr_loaded(void)
{
	ps_fail_loaded.probability = ps_fail_takeover.probability;
	ps_fail_loaded.interval = ps_fail_takeover.interval;
	ps_fail_loaded.times = atomic_read(&ps_fail_takeover.times);
	ps_fail_loaded.space = atomic_read(&ps_fail_takeover.space);
	ps_fail_loaded.verbose = ps_fail_takeover.verbose;
	ps_fail_loaded.task_filter = ps_fail_takeover.task_filter;
}

/**
 * ps_takeover_attr_reset() - fail_takeover back to its load-time values
 *
 * Also refills @times, which injections of earlier runs used up.
 */
void ps_takeover_attr_reset(void)
{
	ps_fail_takeover.probability = ps_fail_loaded.probability;
	ps_fail_takeover.interval = ps_fail_loaded.interval;
	atomic_set(&ps_fail_takeover.times, ps_fail_loaded.times);
	atomic_set(&ps_fail_takeover.space, ps_fail_loaded.space);
	ps_fail_takeover.verbose = ps_fail_loaded.verbose;
	ps_fail_takeover.task_filter = ps_fail_loaded.task_filter;
	ps_fail_takeover.count = 0;
}

/**
 * ps_takeovers_armed() - whether @cfg and fail_takeover inject takeovers
 * @cfg: the knobs of the run to start
 *
 * Return: true when a kind is enabled and fail_takeover can still fire.
 */
bool ps_takeovers_armed(const struct ps_cfg *cfg)
{
	return cfg->takeover_kinds && ps_fail_takeover.probability &&
	       atomic_read(&ps_fail_takeover.times) != 0;
}

static enum cons_prio ps_kind_prio(enum ps_kind kind)
{
	return (kind == PS_TO_PANIC_REMOTE || kind == PS_TO_PANIC_NMI) ?
		CONS_PRIO_PANIC : CONS_PRIO_EMERGENCY;
}

/*
 * ps_takeover - a takeover of @kind here and now, and its one outcome
 *
 * printk_nobkl_debug_takeover() returns how many consoles it acquired;
 * the nobkl_acquire probe tells which acquire it made: the takeover is
 * "taken" when it took a console over from an owner (hostile), "direct"
 * when it only found free consoles. When it acquired none, it was
 * "refused_nested" if it interrupted one of our sections or takeovers
 * on this CPU at the same priority (the series then finds this CPU's
 * write contexts of that priority in use and does not even try), else
 * "refused_policy" (the owner had the same or a higher priority, or an
 * emergency takeover met an unsafe section). Preemption stays disabled
 * so that the per-CPU marks are this context's alone.
 */
static void ps_takeover(enum ps_kind kind)
{
	enum cons_prio prio = ps_kind_prio(kind);
	unsigned int lvl, seen;
	struct ps_pcpu *pc;
	enum ps_to_stat out;
	bool nested;
	u64 t0, dt;
	int ret;

	preempt_disable();
	pc = this_cpu_ptr(ps_pcpu);
	lvl = interrupt_context_level();
	nested = pc->prio_held[prio] > 0;
	pc->prio_held[prio]++;
	pc->to_seen[lvl] = 0;
	WRITE_ONCE(pc->to_prio[lvl], prio);
	barrier();

	t0 = local_clock();
	ret = printk_nobkl_debug_takeover(prio);
	dt = local_clock() - t0;

	barrier();
	WRITE_ONCE(pc->to_prio[lvl], 0);
	seen = pc->to_seen[lvl];
	pc->prio_held[prio]--;
	ps_hist_add(&pc->to_time[kind], dt);
	preempt_enable();

	if (ret > 0)
		out = seen & BIT(PS_ACQ_HOSTILE) ? PS_TS_TAKEN :
		      seen & BIT(PS_ACQ_DIRECT) ? PS_TS_DIRECT : PS_TS_UNTRACED;
	else
		out = nested ? PS_TS_REFUSED_NESTED : PS_TS_REFUSED_POLICY;
	atomic_long_inc(&ps_to_stats[kind][out]);
}

static bool ps_is_printer(struct task_struct *t)
{
	unsigned int i;

	for (i = 0; i < ps_run.nr_printers; i++)
		if (ps_run.printers[i] == t)
			return true;
	return false;
}

#if PS_HAVE_NMI
/*
 * ps_pick_owner - the CPU most likely to own a nobkl console right now
 *
 * The owner's CPU as the nobkl_acquire/nobkl_release probes saw it, else
 * (console free, or no tracepoints) what the module knows: a CPU inside
 * one of our sections at a lower priority than @prio (it flushes the
 * console while printing), else the CPU a printer kthread is running on,
 * else the CPU it last ran on, else an NMI target CPU.
 */
static int ps_pick_owner(enum cons_prio prio, unsigned int self)
{
	unsigned int i, cpu, start = self + 1;
	struct task_struct *t;
	int p;

	p = atomic_read(&ps_owner_cpu);
	if (p >= 0 && cpu_online(p)) {
		atomic_long_inc(&ps_target_stats[PS_TG_TRACED]);
		return p;
	}
	for (i = 0; i < nr_cpu_ids; i++) {
		cpu = (start + i) % nr_cpu_ids;
		if (!cpu_online(cpu))
			continue;
		p = READ_ONCE(per_cpu_ptr(ps_pcpu, cpu)->atomic_prio);
		if (p && p < (int)prio) {
			atomic_long_inc(&ps_target_stats[PS_TG_SECTION]);
			return cpu;
		}
	}
	for (i = 0; i < ps_run.nr_printers; i++) {
		t = ps_run.printers[i];
		if (READ_ONCE(t->on_cpu)) {
			atomic_long_inc(&ps_target_stats[PS_TG_PRINTER]);
			return task_cpu(t);
		}
	}
	if (ps_run.nr_printers) {
		atomic_long_inc(&ps_target_stats[PS_TG_PRINTER_LAST]);
		return task_cpu(ps_run.printers[0]);
	}
	atomic_long_inc(&ps_target_stats[PS_TG_FALLBACK]);
	cpu = cpumask_next(self, &ps_run.nmi_cpus);
	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first(&ps_run.nmi_cpus);
	return cpu < nr_cpu_ids ? (int)cpu : (int)self;
}

#endif /* PS_HAVE_NMI */

static void ps_maybe_takeover(unsigned int cpu)
{
	unsigned int kinds = ps_run.cfg.takeover_kinds;
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);
	unsigned int rr, i;
	enum ps_kind kind;

	if (!kinds || ps_is_stopping() || !should_fail(&ps_fail_takeover, 1))
		return;

	/* Rotate through the enabled kinds so each one gets exercised. */
	rr = (unsigned int)atomic_inc_return(&pc->kind_rr);
	for (i = 0; i < PS_NR_KIND; i++) {
		kind = (rr + i) % PS_NR_KIND;
		if (kinds & BIT(kind))
			break;
	}
	atomic_long_inc(&ps_to_stats[kind][PS_TS_INJECTED]);

	if (!(BIT(kind) & PS_KIND_NMI_MASK)) {
		ps_takeover(kind);
		return;
	}
#if PS_HAVE_NMI
	{
		int target = ps_pick_owner(ps_kind_prio(kind), cpu);

		if (!cpu_online(target)) {
			atomic_long_inc(&ps_to_stats[kind][PS_TS_DROPPED]);
			return;
		}
		if (ps_nmi_kick(target, BIT(PS_NMI_TO_SHIFT + kind)))
			atomic_long_inc(&ps_to_stats[kind][PS_TS_MERGED]);
	}
#endif
}

#if PS_HAVE_NMI

/* In NMI: does this CPU's interrupted context own a console? */
static bool ps_nmi_on_owner(struct ps_pcpu *pc, enum cons_prio prio)
{
	int p = READ_ONCE(pc->atomic_prio);

	if (ps_owner_tracked())
		return atomic_read(&ps_owner_cpu) == (int)smp_processor_id();
	return (p && p < (int)prio) || ps_is_printer(current);
}

static void ps_nmi_takeovers(struct ps_pcpu *pc, unsigned int bits)
{
	enum ps_kind kind;

	for (kind = PS_TO_EMERG_NMI; kind <= PS_TO_PANIC_NMI; kind++) {
		if (!(bits & BIT(PS_NMI_TO_SHIFT + kind)))
			continue;
		/* no takeover (and console flush) once stop has begun */
		if (ps_is_stopping()) {
			atomic_long_inc(&ps_to_stats[kind][PS_TS_DROPPED]);
			continue;
		}
		atomic_long_inc(&ps_to_stats[kind][PS_TS_DELIVERED]);
		if (ps_nmi_on_owner(pc, ps_kind_prio(kind)))
			atomic_long_inc(&ps_to_stats[kind][PS_TS_ON_OWNER]);
		ps_takeover(kind);
	}
}
#endif /* PS_HAVE_NMI */

/*
 * Printer kthreads of the series, as hints for ps_pick_owner(). Found by
 * name at start, referenced until stop.
 */
void ps_printers_find(void)
{
	struct task_struct *p;

	ps_run.nr_printers = 0;
	if (!(ps_run.cfg.takeover_kinds & PS_KIND_NMI_MASK))
		return;

	rcu_read_lock();
	for_each_process(p) {
		if (!(p->flags & PF_KTHREAD) ||
		    strncmp(p->comm, PS_PRINTER_PREFIX,
			    strlen(PS_PRINTER_PREFIX)))
			continue;
		get_task_struct(p);
		ps_run.printers[ps_run.nr_printers++] = p;
		if (ps_run.nr_printers == PS_MAX_PRINTERS)
			break;
	}
	rcu_read_unlock();
}

void ps_printers_put(void)
{
	while (ps_run.nr_printers)
		put_task_struct(ps_run.printers[--ps_run.nr_printers]);
}
#else /* !PS_HAVE_NOBKL */
void ps_takeover_attr_loaded(void)
{
}

void ps_takeover_attr_reset(void)
{
}

bool ps_takeovers_armed(const struct ps_cfg *cfg)
{
	return false;
}

static void ps_maybe_takeover(unsigned int cpu)
{
}

void ps_printers_find(void)
{
	ps_run.nr_printers = 0;
}

void ps_printers_put(void)
{
}
#endif /* PS_HAVE_NOBKL */

/* ------------------------------------------------------------------ */
/* NMI handler and NMI driver */

#if PS_HAVE_NMI
/*
 * ps_nmi_handler - NMI_LOCAL handler: serve the pending requests
 *
 * Every request (0 -> non-zero transition of nmi_pending) is taken by
 * exactly one run of this handler and has exactly one NMI of ours, sent
 * after it (ps_nmi_kick()). When the requests taken so far outnumber the
 * NMIs sent, this NMI came from another source before ours was even
 * sent: ours will find nothing pending and no NMI_LOCAL handler claims
 * it, so it is owed to ps_nmi_unknown().
 */
static int ps_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	struct ps_pcpu *pc = this_cpu_ptr(ps_pcpu);
	unsigned int bits;
	u64 t0;

	bits = atomic_xchg(&pc->nmi_pending, 0);
	if (!bits)
		return NMI_DONE;	/* not ours */
	t0 = local_clock();
	if (atomic_long_inc_return(&pc->nmi_handled) >
	    atomic_long_read(&pc->nmi_sent))
		atomic_inc(&pc->nmi_owed);

#if PS_HAVE_NOBKL
	if (bits & ~PS_NMI_PRINT)
		ps_nmi_takeovers(pc, bits);
#endif
	if ((bits & PS_NMI_PRINT) && !ps_is_stopping()) {
		unsigned long start = jiffies;

		WRITE_ONCE(pc->nmi_printing, 1);
		pc->nmi_writer.iter++;
		if (ps_run.cfg.contexts & BIT(PS_CTX_NMI))
			ps_emit_burst(&pc->nmi_writer, PS_CTX_NMI,
				      ps_run.cfg.nmi_burst);
		ps_maybe_atomic(&pc->nmi_writer, PS_ORIG_NMI);
		/* as long outside NMI context as it just spent inside */
		WRITE_ONCE(pc->nmi_quiet_until, jiffies + (jiffies - start));
		WRITE_ONCE(pc->nmi_printing, 0);
	}
	ps_hist_add(&pc->nmi_time, local_clock() - t0);
	return NMI_HANDLED;
}

/*
 * ps_nmi_unknown - NMI_UNKNOWN handler: claim an NMI of ours that arrived
 * after another NMI had served its request (see ps_nmi_handler()), so
 * it is not reported as an NMI for an unknown reason.
 */
static int ps_nmi_unknown(unsigned int type, struct pt_regs *regs)
{
	struct ps_pcpu *pc = this_cpu_ptr(ps_pcpu);

	if (!atomic_add_unless(&pc->nmi_owed, -1, 0))
		return NMI_DONE;
	atomic_long_inc(&pc->nmi_late);
	return NMI_HANDLED;
}

int ps_nmi_register(void)
{
	int ret;

	ret = register_nmi_handler(NMI_UNKNOWN, ps_nmi_unknown, 0, PS_NAME);
	if (ret)
		return ret;
	ret = register_nmi_handler(NMI_LOCAL, ps_nmi_handler, 0, PS_NAME);
	if (ret)
		unregister_nmi_handler(NMI_UNKNOWN, PS_NAME);
	return ret;
}

/* Wait for @cpu's NMIs in flight, until @deadline (jiffies). */
static bool ps_nmi_drain(unsigned int cpu, unsigned long deadline)
{
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);

	while ((atomic_read(&pc->nmi_pending) || atomic_read(&pc->nmi_owed)) &&
	       cpu_online(cpu) && time_before(jiffies, deadline))
		usleep_range(500, 1000);
	return !atomic_read(&pc->nmi_pending);
}

/*
 * Wait until every NMI the module sent has arrived (its handler cleared
 * the pending word, and no NMI is owed to the NMI_UNKNOWN handler), then
 * unregister; unregister_nmi_handler() waits for handlers still running.
 * Senders must be stopped already. An owed NMI that never comes (the
 * kernel swallowed it as the second of two back-to-back NMIs) only
 * costs the wait.
 */
void ps_nmi_drain_unregister(void)
{
	unsigned long deadline = jiffies + HZ;
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		if (!ps_nmi_drain(cpu, deadline))
			pr_warn("NMI to CPU %u not delivered\n", cpu);
	unregister_nmi_handler(NMI_LOCAL, PS_NAME);
	unregister_nmi_handler(NMI_UNKNOWN, PS_NAME);
	for_each_possible_cpu(cpu) {
		atomic_set(&per_cpu_ptr(ps_pcpu, cpu)->nmi_pending, 0);
		atomic_set(&per_cpu_ptr(ps_pcpu, cpu)->nmi_owed, 0);
	}
}

static enum hrtimer_restart ps_driver_fn(struct hrtimer *timer)
{
	unsigned int cpu;

	if (ps_is_stopping())
		return HRTIMER_NORESTART;
	/*
	 * Skip a CPU whose handler still prints: an atomic flush in NMI
	 * context can take longer than the period (a panic-priority
	 * section prints the whole backlog), and an NMI sent meanwhile
	 * would start the next one the moment the handler returns. Seen on
	 * i386: one CPU printed in NMI context back to back for 20 s, a
	 * soft lockup of a CPU waiting for its IPI and an RCU stall.
	 * And after a long one, leave the CPU outside NMI context for as
	 * long as the handler took: with a request the moment it returned,
	 * a CPU whose every NMI flushed a backlog for most of a second
	 * spent 99 % of its time in NMI context and, idle in between, never
	 * let RCU see a quiescent state (stalls on x86_64 and i386).
	 */
	for_each_cpu(cpu, &ps_run.nmi_cpus) {
		struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);

		if (cpu_online(cpu) && !READ_ONCE(pc->nmi_printing) &&
		    time_after_eq(jiffies, READ_ONCE(pc->nmi_quiet_until)))
			ps_nmi_kick(cpu, PS_NMI_PRINT);
	}
	hrtimer_forward_now(timer, ps_us(ps_run.cfg.nmi_period_us));
	return HRTIMER_RESTART;
}

void ps_driver_start(void)
{
	hrtimer_init(&ps_run.driver, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	ps_run.driver.function = ps_driver_fn;
	hrtimer_start(&ps_run.driver, ps_us(ps_run.cfg.nmi_period_us),
		      HRTIMER_MODE_REL_HARD);
	ps_run.driver_started = true;
}
#else /* !PS_HAVE_NMI */
int ps_nmi_register(void)
{
	return -EOPNOTSUPP;
}

void ps_nmi_drain_unregister(void)
{
}

void ps_driver_start(void)
{
}
#endif /* PS_HAVE_NMI */

void ps_driver_cancel(void)
{
	if (ps_run.driver_started)
		hrtimer_cancel(&ps_run.driver);
	ps_run.driver_started = false;
}

/* ------------------------------------------------------------------ */
/* hardirq producer: per-CPU hrtimers */

static enum hrtimer_restart ps_timer_fn(struct hrtimer *timer)
{
	struct ps_pcpu *pc = container_of(timer, struct ps_pcpu, timer);
	const struct ps_cfg *cfg = &ps_run.cfg;

	if (ps_is_stopping())
		return HRTIMER_NORESTART;

	pc->irq_writer.iter++;
	if (cfg->contexts & BIT(PS_CTX_HARDIRQ))
		ps_emit_burst(&pc->irq_writer, PS_CTX_HARDIRQ, cfg->irq_burst);
	ps_maybe_atomic(&pc->irq_writer, PS_ORIG_HARDIRQ);
	ps_maybe_takeover(pc->irq_writer.cpu);

	hrtimer_forward_now(timer, ps_us(cfg->irq_period_us));
	return HRTIMER_RESTART;
}

static void ps_timer_start_here(void *arg)
{
	struct ps_pcpu *pc = this_cpu_ptr(ps_pcpu);

	hrtimer_start(&pc->timer, ps_us(ps_run.cfg.irq_period_us),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

void ps_timers_start(void)
{
	unsigned int cpu;

	cpus_read_lock();
	for_each_cpu(cpu, &ps_run.cpus) {
		if (!cpu_online(cpu))
			continue;
		/* break_check=records: the last producer CPU gets no hrtimer */
		if ((ps_run.cfg.break_check & BIT(PS_CHK_RECORDS)) &&
		    cpu == cpumask_last(&ps_run.cpus))
			continue;
		if (!smp_call_function_single(cpu, ps_timer_start_here, NULL, 1))
			cpumask_set_cpu(cpu, &ps_run.timer_cpus);
	}
	cpus_read_unlock();
}

void ps_timers_cancel(void)
{
	unsigned int cpu;

	for_each_cpu(cpu, &ps_run.timer_cpus)
		hrtimer_cancel(&per_cpu_ptr(ps_pcpu, cpu)->timer);
	cpumask_clear(&ps_run.timer_cpus);
}

/* ------------------------------------------------------------------ */
/* task producer: kthreads */

static void ps_thread_sleep(const struct ps_cfg *cfg)
{
	ktime_t to;

	if (!cfg->task_rate && !ps_is_stopping()) {
		cond_resched();
		return;
	}
	/* While stopping, idle until kthread_stop() wakes us. */
	if (ps_is_stopping())
		to = ms_to_ktime(100);
	else
		to = ns_to_ktime(NSEC_PER_SEC / cfg->task_rate);
	set_current_state(TASK_INTERRUPTIBLE);
	if (!kthread_should_stop())
		schedule_hrtimeout(&to, HRTIMER_MODE_REL);
	__set_current_state(TASK_RUNNING);
}

static int ps_thread_fn(void *arg)
{
	struct ps_thread *t = arg;
	const struct ps_cfg *cfg = &ps_run.cfg;

	while (!kthread_should_stop()) {
		if (!ps_is_stopping()) {
			t->w.iter++;
			if (cfg->contexts & BIT(PS_CTX_TASK))
				ps_emit_burst(&t->w, PS_CTX_TASK, cfg->burst);
			ps_maybe_atomic(&t->w, PS_ORIG_TASK);
			ps_maybe_takeover(t->w.cpu);
		}
		ps_thread_sleep(cfg);
	}
	return 0;
}

/**
 * ps_threads_create() - the task kthreads of the run, not woken yet
 * @cpus: the CPUs to bind them to, threads_per_cpu each
 *
 * Return: 0 or an error; ps_threads_stop() frees what was created.
 */
int ps_threads_create(const struct cpumask *cpus)
{
	unsigned int tpc = ps_run.cfg.threads_per_cpu;
	unsigned int cpu, i, n = 0;
	struct ps_thread *t;
	struct task_struct *task;

	ps_run.threads = kcalloc(cpumask_weight(cpus) * tpc,
				 sizeof(*ps_run.threads), GFP_KERNEL);
	if (!ps_run.threads)
		return -ENOMEM;

	for_each_cpu(cpu, cpus) {
		for (i = 0; i < tpc; i++) {
			t = kzalloc(sizeof(*t), GFP_KERNEL);
			if (!t)
				return -ENOMEM;
			ps_writer_init(&t->w, cpu, i);
			task = kthread_create(ps_thread_fn, t, "pstress/%u:%u",
					      cpu, i);
			if (IS_ERR(task)) {
				kfree(t);
				return PTR_ERR(task);
			}
			kthread_bind(task, cpu);
			get_task_struct(task);
			t->task = task;
			ps_run.threads[n] = t;
			ps_run.nr_threads = ++n;
		}
	}
	return 0;
}

void ps_threads_wake(void)
{
	unsigned int i;

	for (i = 0; i < ps_run.nr_threads; i++)
		wake_up_process(ps_run.threads[i]->task);
}

/*
 * ps_threads_stop - stop and free the task kthreads; each CPU keeps the
 * most iterations one of its kthreads made (task_iter_max), for the
 * checks.
 */
void ps_threads_stop(void)
{
	struct ps_pcpu *pc;
	struct ps_thread *t;
	unsigned int i;

	for (i = 0; i < ps_run.nr_threads; i++) {
		t = ps_run.threads[i];
		kthread_stop(t->task);
		pc = per_cpu_ptr(ps_pcpu, t->w.cpu);
		pc->task_iter_max = max(pc->task_iter_max, t->w.iter);
		put_task_struct(t->task);
		kfree(t);
	}
	kfree(ps_run.threads);
	ps_run.threads = NULL;
	ps_run.nr_threads = 0;
}

/* ------------------------------------------------------------------ */
/* What a configuration needs */

static bool ps_atomic_from(const struct ps_cfg *cfg, enum ps_origin orig)
{
	return PS_HAVE_NOBKL && (cfg->contexts & PS_CTX_ATOMIC_MASK) &&
	       (cfg->atomic_from & BIT(orig));
}

bool ps_need_threads(const struct ps_cfg *cfg)
{
	return (cfg->contexts & BIT(PS_CTX_TASK)) ||
	       ps_atomic_from(cfg, PS_ORIG_TASK);
}

bool ps_need_timers(const struct ps_cfg *cfg)
{
	return (cfg->contexts & BIT(PS_CTX_HARDIRQ)) ||
	       ps_atomic_from(cfg, PS_ORIG_HARDIRQ);
}

bool ps_need_driver(const struct ps_cfg *cfg)
{
	return PS_HAVE_NMI && ((cfg->contexts & BIT(PS_CTX_NMI)) ||
			       ps_atomic_from(cfg, PS_ORIG_NMI));
}

bool ps_need_nmi(const struct ps_cfg *cfg)
{
	return ps_need_driver(cfg) ||
	       (PS_HAVE_NOBKL && (cfg->takeover_kinds & PS_KIND_NMI_MASK));
}

/* ------------------------------------------------------------------ */

void ps_stats_clear(void)
{
	unsigned int cpu, w, c, b, o;
	struct ps_pcpu *pc;

	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(ps_pcpu, cpu);
		for (w = 0; w < PS_NR_WRITERS; w++) {
			for (c = 0; c < PS_NR_CTX; c++) {
				atomic_long_set(&pc->prod[w][c].next, 0);
				atomic_long_set(&pc->prod[w][c].stored, 0);
			}
		}
		for (c = 0; c < PS_NR_CTX; c++)
			ps_hist_clear(&pc->lat[c]);
		ps_hist_clear(&pc->nmi_time);
		for (c = 0; c < PS_NR_KIND; c++)
			ps_hist_clear(&pc->to_time[c]);
		for (o = 0; o < PS_NR_ORIG; o++) {
			atomic_long_set(&pc->sections[0][o], 0);
			atomic_long_set(&pc->sections[1][o], 0);
		}
		atomic_long_set(&pc->panic_busy, 0);
		pc->task_iter_max = 0;
		atomic_long_set(&pc->nmi_sent, 0);
		atomic_long_set(&pc->nmi_handled, 0);
		atomic_long_set(&pc->nmi_late, 0);
		pc->irq_writer.iter = 0;
		pc->nmi_writer.iter = 0;
		pc->nmi_quiet_until = jiffies;	/* not 0: jiffies start negative on 32-bit */
	}
	for (c = 0; c < PS_NR_KIND; c++)
		for (b = 0; b < PS_NR_TS; b++)
			atomic_long_set(&ps_to_stats[c][b], 0);
	for (b = 0; b < PS_NR_TG; b++)
		atomic_long_set(&ps_target_stats[b], 0);
	ps_handover_clear();
}

void ps_prod_init(void)
{
	unsigned int cpu;
	struct ps_pcpu *pc;

	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(ps_pcpu, cpu);
		hrtimer_init(&pc->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		pc->timer.function = ps_timer_fn;
		atomic_set(&pc->nmi_pending, 0);
		ps_writer_init(&pc->irq_writer, cpu, PS_W_HARDIRQ);
		ps_writer_init(&pc->nmi_writer, cpu, PS_W_NMI);
	}
#if PS_HAVE_NOBKL
	BUILD_BUG_ON(CONS_PRIO_MAX != PS_NR_PRIO);
	/* The decision points are ours, but stack dumps would flood. */
	ps_fail_takeover.verbose = 0;
	/* No budget: probability alone decides (times is over all runs). */
	atomic_set(&ps_fail_takeover.times, -1);
#endif
}
