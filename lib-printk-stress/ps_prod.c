// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress producers: who prints records, and when.
 *
 * - task:    kthreads bound to each producer CPU, bursts at task_rate
 * - hardirq: one pinned hrtimer per producer CPU
 * - nmi:     NMI IPIs sent by a driver hrtimer to the NMI target CPUs; the
 *            module's NMI_LOCAL handler only handles NMIs it requested
 *            (per-CPU pending word), so other NMIs are not swallowed
 *
 * One table (ps_producers[], like locktorture's ops) gives each of them
 * its name, its record context, what of a configuration needs it, how
 * it is prepared, started and stopped; and one iteration body,
 * ps_step(), serves all three loops (the kthread's, the hrtimer's and
 * the NMI handler's): records of its own context, the emergency/panic
 * sections due (ps_record.c), the takeover decision (ps_takeover.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>

#include "ps.h"

#if PS_HAVE_NMI
#include <asm/apic.h>
#include <asm/irq_vectors.h>
#include <asm/nmi.h>
#endif

struct ps_thread {
	struct task_struct	*task;
	struct ps_writer	w;
};

struct ps_pcpu __percpu *ps_pcpu;

/*
 * The takeover counters: ps_takeover.c counts, ps_check.c and the stats
 * file print them, on every console design (all 0 without the series).
 */
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

static ktime_t ps_us(unsigned int us)
{
	return ns_to_ktime((u64)us * NSEC_PER_USEC);
}

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
unsigned int ps_nmi_kick(unsigned int cpu, unsigned int bits)
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
/* NMI handler and NMI driver */

#if PS_HAVE_NMI
/**
 * ps_nmi_print() - serve a print request in the NMI handler
 * @pc: this CPU's state
 *
 * Prints this CPU's NMI records (and the sections due), then sets the
 * quiet time: the CPU gets no print request (ps_driver_fn()) for as long
 * as this one took. Measured with ps_clock_ns(), NMI-safe and
 * the same on every CPU, never with jiffies: they do not advance while
 * the CPU that keeps them is in NMI, so a flush of seconds there looked
 * like none. A request that came before the previous quiet time ended
 * is counted (nmi_early; none, as long as the clock goes forward).
 */
static void ps_nmi_print(struct ps_pcpu *pc)
{
	u64 start = ps_clock_ns(), end;

	if (start < (u64)atomic64_read(&pc->nmi_quiet_ns))
		atomic_long_inc(&pc->nmi_early);
	WRITE_ONCE(pc->nmi_printing, 1);
	ps_step(&ps_producers[PS_ORIG_NMI], &pc->nmi_writer);
	end = ps_clock_ns();
	atomic64_set(&pc->nmi_quiet_ns, end + (end - start));
	WRITE_ONCE(pc->nmi_printing, 0);
}

/*
 * ps_nmi_handler - NMI_LOCAL handler: serve the pending requests
 *
 * Every request (0 -> non-zero transition of nmi_pending) is taken by
 * exactly one run of this handler and has exactly one NMI of ours, sent
 * after it (ps_nmi_kick()). When the requests taken so far outnumber the
 * NMIs sent, this NMI came from another source before ours was even
 * sent: ours will find nothing pending and no NMI_LOCAL handler claims
 * it, so it is owed to ps_nmi_unknown().
 *
 * nmi_busy is set before the requests are taken: from a request until
 * the handler has set its quiet time, either nmi_pending holds it (a new
 * request merges into it) or nmi_busy is set (the driver sends none).
 */
static int ps_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	struct ps_pcpu *pc = this_cpu_ptr(ps_pcpu);
	unsigned int bits;
	u64 t0;

	WRITE_ONCE(pc->nmi_busy, 1);
	bits = atomic_xchg(&pc->nmi_pending, 0);	/* a full barrier */
	if (!bits) {
		WRITE_ONCE(pc->nmi_busy, 0);
		return NMI_DONE;	/* not ours */
	}
	t0 = local_clock();
	if (atomic_long_inc_return(&pc->nmi_handled) >
	    atomic_long_read(&pc->nmi_sent))
		atomic_inc(&pc->nmi_owed);

	if (bits & ~PS_NMI_PRINT)
		ps_nmi_takeovers(pc, bits);
	if ((bits & PS_NMI_PRINT) && !ps_is_stopping())
		ps_nmi_print(pc);
	ps_hist_add(&pc->hists->nmi_time, local_clock() - t0);
	WRITE_ONCE(pc->nmi_busy, 0);
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

/* How long stop waits for an NMI of ours after @cpu's handler ran */
#define PS_NMI_DRAIN_NS		NSEC_PER_SEC
/* ... and at most, from the start of the drain */
#define PS_NMI_DRAIN_MAX_NS	(60ULL * NSEC_PER_SEC)

/*
 * ps_nmi_drain - wait for @cpu's NMIs in flight
 *
 * Until none is pending or owed, or PS_NMI_DRAIN_NS after the CPU's
 * handler last ran: an NMI sent to a CPU whose handler flushes a
 * backlog for seconds stays latched until the handler returns, and
 * must find the handler still registered. Measured with the clock
 * source, not jiffies: jiffies do not advance while the CPU that keeps
 * them is in NMI. @start is when the drain began.
 */
static bool ps_nmi_drain(unsigned int cpu, u64 start)
{
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);
	u64 now = ps_clock_ns(), until = now + PS_NMI_DRAIN_NS;

	while ((atomic_read(&pc->nmi_pending) || atomic_read(&pc->nmi_owed)) &&
	       cpu_online(cpu) && now < until &&
	       now - start < PS_NMI_DRAIN_MAX_NS) {
		usleep_range(500, 1000);
		now = ps_clock_ns();
		if (READ_ONCE(pc->nmi_busy))
			until = now + PS_NMI_DRAIN_NS;
	}
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
	u64 start = ps_clock_ns();
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		if (!ps_nmi_drain(cpu, start))
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
	u64 now = ps_clock_ns();
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
	 * let RCU see a quiescent state (stalls on x86_64 and i386). The
	 * quiet time is on the clock (ps_nmi_print()), and no request goes
	 * to a handler that has taken its requests but not set the quiet
	 * time yet (nmi_busy, see ps_nmi_handler()).
	 */
	for_each_cpu(cpu, &ps_run.nmi_cpus) {
		struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);

		if (cpu_online(cpu) && !READ_ONCE(pc->nmi_busy) &&
		    !READ_ONCE(pc->nmi_printing) &&
		    now >= (u64)atomic64_read(&pc->nmi_quiet_ns))
			ps_nmi_kick(cpu, PS_NMI_PRINT);
	}
	hrtimer_forward_now(timer, ps_us(ps_run.cfg.nmi_period_us));
	return HRTIMER_RESTART;
}

/**
 * ps_driver_cpu() - the CPU the NMI driver runs on
 *
 * An online CPU outside nmi_cpus if there is one. An hrtimer fires only
 * while its CPU has interrupts on, so a driver on a target CPU would
 * send that CPU its NMIs only between its interrupts-off sections (a
 * console driver's port lock, a printer thread's record), never inside
 * one, where an NMI is the only context that can meet the owner.
 * Return: the CPU, or the current one when every CPU is a target.
 */
static unsigned int ps_driver_cpu(void)
{
	unsigned int cpu;

	for_each_online_cpu(cpu)
		if (!cpumask_test_cpu(cpu, &ps_run.nmi_cpus))
			return cpu;
	return raw_smp_processor_id();
}

static void ps_driver_arm(void *unused)
{
	hrtimer_start(&ps_run.driver, ps_us(ps_run.cfg.nmi_period_us),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

void ps_driver_start(void)
{
	unsigned int cpu = ps_driver_cpu();

	hrtimer_init(&ps_run.driver, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_PINNED_HARD);
	ps_run.driver.function = ps_driver_fn;
	/* a CPU gone offline since it was chosen: arm it here */
	if (smp_call_function_single(cpu, ps_driver_arm, NULL, 1))
		ps_driver_arm(NULL);
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
/* hardirq and softirq producers: per-CPU hrtimers, hard and soft expiry */

static enum hrtimer_restart ps_timer_expire(struct hrtimer *timer,
					    enum ps_origin orig,
					    struct ps_writer *w)
{
	if (ps_is_stopping())
		return HRTIMER_NORESTART;

	ps_step(&ps_producers[orig], w);

	hrtimer_forward_now(timer, ps_us(ps_run.cfg.irq_period_us));
	return HRTIMER_RESTART;
}

static enum hrtimer_restart ps_timer_fn(struct hrtimer *timer)
{
	struct ps_pcpu *pc = container_of(timer, struct ps_pcpu, timer);

	return ps_timer_expire(timer, PS_ORIG_HARDIRQ, &pc->irq_writer);
}

static enum hrtimer_restart ps_stimer_fn(struct hrtimer *timer)
{
	struct ps_pcpu *pc = container_of(timer, struct ps_pcpu, stimer);

	return ps_timer_expire(timer, PS_ORIG_SOFTIRQ, &pc->sirq_writer);
}

/* @soft: NULL for the hard hrtimer, non-NULL for the softirq one */
static void ps_timer_start_here(void *soft)
{
	struct ps_pcpu *pc = this_cpu_ptr(ps_pcpu);

	if (soft)
		hrtimer_start(&pc->stimer, ps_us(ps_run.cfg.irq_period_us),
			      HRTIMER_MODE_REL_PINNED_SOFT);
	else
		hrtimer_start(&pc->timer, ps_us(ps_run.cfg.irq_period_us),
			      HRTIMER_MODE_REL_PINNED_HARD);
}

static void ps_timers_start_on(bool soft, struct cpumask *started)
{
	unsigned int cpu;

	cpus_read_lock();
	for_each_cpu(cpu, &ps_run.cpus) {
		if (!cpu_online(cpu))
			continue;
		/* break_check=records: the last producer CPU gets no hrtimer */
		if (!soft && (ps_run.cfg.break_check & BIT(PS_CHK_RECORDS)) &&
		    cpu == cpumask_last(&ps_run.cpus))
			continue;
		if (!smp_call_function_single(cpu, ps_timer_start_here,
					      soft ? started : NULL, 1))
			cpumask_set_cpu(cpu, started);
	}
	cpus_read_unlock();
}

void ps_timers_start(void)
{
	ps_timers_start_on(false, &ps_run.timer_cpus);
}

void ps_stimers_start(void)
{
	ps_timers_start_on(true, &ps_run.stimer_cpus);
}

void ps_timers_cancel(void)
{
	unsigned int cpu;

	for_each_cpu(cpu, &ps_run.timer_cpus)
		hrtimer_cancel(&per_cpu_ptr(ps_pcpu, cpu)->timer);
	cpumask_clear(&ps_run.timer_cpus);
}

void ps_stimers_cancel(void)
{
	unsigned int cpu;

	for_each_cpu(cpu, &ps_run.stimer_cpus)
		hrtimer_cancel(&per_cpu_ptr(ps_pcpu, cpu)->stimer);
	cpumask_clear(&ps_run.stimer_cpus);
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
		if (!ps_is_stopping())
			ps_step(&ps_producers[PS_ORIG_TASK], &t->w);
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
	return (cfg->contexts & PS_CONS_CONTEXTS) &&
	       (cfg->atomic_from & BIT(orig));
}

bool ps_need_threads(const struct ps_cfg *cfg)
{
	return (cfg->contexts & (BIT(PS_CTX_TASK) | BIT(PS_CTX_DEFERRED))) ||
	       ps_atomic_from(cfg, PS_ORIG_TASK);
}

bool ps_need_timers(const struct ps_cfg *cfg)
{
	return (cfg->contexts & BIT(PS_CTX_HARDIRQ)) ||
	       ps_atomic_from(cfg, PS_ORIG_HARDIRQ);
}

bool ps_need_stimers(const struct ps_cfg *cfg)
{
	return (cfg->contexts & BIT(PS_CTX_SOFTIRQ)) ||
	       ps_atomic_from(cfg, PS_ORIG_SOFTIRQ);
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
/* The producers' table and their one iteration body */

const struct ps_producer_ops ps_producers[PS_NR_ORIG] = {
	[PS_ORIG_TASK] = {
		.name = "task", .orig = PS_ORIG_TASK,
		.ctxs = BIT(PS_CTX_TASK) | BIT(PS_CTX_DEFERRED),
		.burst_off = offsetof(struct ps_cfg, burst),
		.decides_takeovers = true,
		.needed = ps_need_threads, .prepare = ps_threads_create,
		.start = ps_threads_wake, .stop = ps_threads_stop,
	},
	[PS_ORIG_HARDIRQ] = {
		.name = "hardirq", .orig = PS_ORIG_HARDIRQ,
		.ctxs = BIT(PS_CTX_HARDIRQ),
		.burst_off = offsetof(struct ps_cfg, irq_burst),
		.decides_takeovers = true,
		.needed = ps_need_timers,
		.start = ps_timers_start, .stop = ps_timers_cancel,
	},
	[PS_ORIG_NMI] = {
		.name = "nmi", .orig = PS_ORIG_NMI, .ctxs = BIT(PS_CTX_NMI),
		.burst_off = offsetof(struct ps_cfg, nmi_burst),
		/* should_fail() is not NMI-safe */
		.decides_takeovers = false,
		.needed = ps_need_driver,
		.start = ps_driver_start, .stop = ps_driver_cancel,
	},
	[PS_ORIG_SOFTIRQ] = {
		.name = "softirq", .orig = PS_ORIG_SOFTIRQ,
		.ctxs = BIT(PS_CTX_SOFTIRQ),
		.burst_off = offsetof(struct ps_cfg, irq_burst),
		.decides_takeovers = true,
		.needed = ps_need_stimers,
		.start = ps_stimers_start, .stop = ps_stimers_cancel,
	},
};

/**
 * ps_step() - one iteration of a producer's writer
 * @ops: the producer
 * @w: its writer (a task kthread, a CPU's hrtimer, a CPU's NMI handler)
 *
 * A burst of records of the producer's own context (when contexts has
 * it), the emergency/panic sections due at this iteration, and (task,
 * hardirq) the decision on a takeover; nothing, not even an iteration,
 * in a stutter idle phase.
 */
void ps_step(const struct ps_producer_ops *ops, struct ps_writer *w)
{
	const struct ps_cfg *cfg = &ps_run.cfg;
	unsigned int burst = *(const unsigned int *)((const char *)cfg +
						      ops->burst_off);
	enum ps_ctx ctx;

	if (ps_shape_idle())
		return;
	w->iter++;
	for (ctx = 0; ctx < PS_NR_CTX; ctx++)
		if (ops->ctxs & cfg->contexts & BIT(ctx))
			ps_emit_burst(w, ctx, burst);
	ps_maybe_atomic(w, ops->orig);
	if (ops->decides_takeovers)
		ps_maybe_takeover(w->cpu);
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
				atomic_long_set(&pc->prod[w][c].refused, 0);
			}
		}
		for (c = 0; c < PS_NR_CTX; c++)
			ps_hist_clear(&pc->hists->lat[c]);
		ps_hist_clear(&pc->hists->nmi_time);
		for (c = 0; c < PS_NR_KIND; c++)
			ps_hist_clear(&pc->hists->to_time[c]);
		for (o = 0; o < PS_NR_ORIG; o++) {
			atomic_long_set(&pc->sections[0][o], 0);
			atomic_long_set(&pc->sections[1][o], 0);
		}
		for (o = 0; o < PS_NR_ORIG; o++)
			atomic_long_set(&pc->panic_busy[o], 0);
		pc->task_iter_max = 0;
		atomic_long_set(&pc->nmi_sent, 0);
		atomic_long_set(&pc->nmi_handled, 0);
		atomic_long_set(&pc->nmi_late, 0);
		atomic_long_set(&pc->nmi_early, 0);
		atomic64_set(&pc->nmi_quiet_ns, 0);
		pc->irq_writer.iter = 0;
		pc->nmi_writer.iter = 0;
		pc->sirq_writer.iter = 0;
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
		hrtimer_init(&pc->stimer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_SOFT);
		pc->stimer.function = ps_stimer_fn;
		atomic_set(&pc->nmi_pending, 0);
		ps_writer_init(&pc->irq_writer, cpu, PS_W_HARDIRQ);
		ps_writer_init(&pc->nmi_writer, cpu, PS_W_NMI);
		ps_writer_init(&pc->sirq_writer, cpu, PS_W_SOFTIRQ);
	}
	ps_takeover_init();
}
