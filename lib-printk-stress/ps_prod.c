// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress producers: who prints records, and when.
 *
 * - task:    kthreads bound to each producer CPU, bursts at task_rate
 * - hardirq: one pinned hrtimer per producer CPU
 * - nmi:     NMI IPIs sent by a driver hrtimer to the NMI target CPUs; the
 *            module's NMI_LOCAL handler only handles NMIs it requested
 *            (per-CPU pending word), so other NMIs are not swallowed
 *            (ps_nmi.c, linked with CONFIG_X86_LOCAL_APIC)
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

/* ------------------------------------------------------------------ */
/* NMI driver (the rest of the NMI producer is ps_nmi.c's) */

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
				ps_cont_clear(&pc->prod[w][c].cont);
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
