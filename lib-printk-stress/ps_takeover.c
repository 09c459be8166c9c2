// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress takeover injection and the probes on the series'
 * tracepoints. Linked only on the nobkl series (Kbuild, PS_HAVE_NOBKL);
 * ps_takeover_none.c stands in for it otherwise.
 *
 * On every task and hardirq producer iteration should_fail(&ps_fail_takeover)
 * decides (it is not NMI-safe, so never from NMI). A remote kind calls
 * printk_nobkl_debug_takeover() right there; an NMI kind picks the CPU
 * most likely to own the console and sends it an NMI whose handler takes
 * over, so it lands mid-record on the owner's CPU.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dcache.h>
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/tracepoint.h>

#include "ps.h"

/* ------------------------------------------------------------------ */
/* Probes on the series' tracepoints (docs/interfaces.md section 1) */

/*
 * The console owner's CPU, from nobkl_acquire (emitted on the acquiring
 * CPU) and nobkl_release (on the releasing CPU); -1 when free or unknown.
 */
static atomic_t ps_owner_cpu = ATOMIC_INIT(-1);

#ifdef CONFIG_TRACEPOINTS
static atomic_long_t ps_nr_timeouts;

/*
 * The probes are attached once, at load, and detached at unload, not for
 * every run: attaching or detaching a probe patches the tracepoint's
 * static call (text_poke_bp()) while the other CPUs, the printer thread
 * among them, print through it. Between runs they stay attached and
 * return at once: ps_tp_on is true only from ps_tp_start() to
 * ps_tp_stop(), so the owner's CPU and the timeout count change during a
 * run only, and after it stay as the run left them for stats to read.
 */
static bool ps_tp_on;

/* Whether the probes record now: a run is going. */
static bool ps_tp_recording(void)
{
	/*
	 * Pairs with the release in ps_tp_start(): a probe that sees the
	 * run going also sees its reset state (owner -1, no timeouts), so
	 * what the probe writes comes after the reset and the reset cannot
	 * undo it. Probes run in any context, NMI included, where a
	 * load-acquire is as safe as any load.
	 */
	return smp_load_acquire(&ps_tp_on);
}

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
	if (!ps_tp_recording())
		return;
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
	struct ps_pcpu *pc;
	unsigned int lvl;

	if (!ps_tp_recording())
		return;
	pc = this_cpu_ptr(ps_pcpu);
	lvl = interrupt_context_level();
	atomic_set(&ps_owner_cpu, raw_smp_processor_id());
	if (pc->to_prio[lvl] && pc->to_prio[lvl] == (int)ctxt->prio &&
	    !ctxt->thread && how >= 0 && how < PS_NR_ACQ)
		pc->to_seen[lvl] |= BIT(how);
}

static void ps_tp_release_probe(void *data, const struct cons_context *ctxt,
				bool handover, unsigned long old_atom,
				unsigned long new_atom)
{
	if (!ps_tp_recording())
		return;
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

/**
 * ps_tp_register() - find the series' tracepoints and attach the probes
 *
 * Called once at load, before a run can start; the probes record only
 * during runs (ps_tp_start()). They are optional; without a tracepoint,
 * or with a probe that could not be attached, the module does without
 * what that probe tracks (handover_timeouts reads n/a, the owner's CPU
 * is guessed, takeover outcomes are untraced).
 *
 * Return: the number of probes attached.
 */
int ps_tp_register(void)
{
	unsigned int i;
	int n = 0;

	for_each_kernel_tracepoint(ps_tp_match, NULL);
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
	return n;
}

/**
 * ps_tp_unregister() - detach the probes at unload
 *
 * Called once no run is going any more, or when the load fails after
 * ps_tp_register(). Returns when no probe runs any more, so that the
 * module's text and ps_pcpu can go.
 */
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
}

/**
 * ps_tp_start() - the probes record for the run that starts
 *
 * Called by ps_start() with ps_mutex held, before the producers start.
 * The run begins with the owner unknown (until the first acquire the
 * probe sees) and no handover timeouts.
 */
void ps_tp_start(void)
{
	atomic_set(&ps_owner_cpu, -1);
	atomic_long_set(&ps_nr_timeouts, 0);
	/* Publishes the reset state: pairs with ps_tp_recording(). */
	smp_store_release(&ps_tp_on, true);
}

/**
 * ps_tp_stop() - the probes stop recording at the run's end
 *
 * Called by the run's teardown with ps_mutex held, after the producers
 * and the NMI handler have stopped; a no-op when no run started them.
 * Then waits for the probes that still saw the run going, as for a probe
 * being detached (tracepoint_synchronize_unregister() patches nothing):
 * after it the timeout count stays what stats shows, and no late probe
 * writes the owner's CPU over the next run's reset.
 */
void ps_tp_stop(void)
{
	if (!ps_tp_on)
		return;
	WRITE_ONCE(ps_tp_on, false);
	tracepoint_synchronize_unregister();
	atomic_set(&ps_owner_cpu, -1);
}

long ps_handover_timeouts(void)
{
	return ps_tps[PS_TP_TIMEOUT].registered ?
		atomic_long_read(&ps_nr_timeouts) : -1;
}

bool ps_owner_tracked(void)
{
	return ps_tps[PS_TP_ACQUIRE].registered;
}

void ps_handover_clear(void)
{
	atomic_long_set(&ps_nr_timeouts, 0);
}
#else /* !CONFIG_TRACEPOINTS */
int ps_tp_register(void)
{
	return 0;
}

void ps_tp_unregister(void)
{
}

void ps_tp_start(void)
{
}

void ps_tp_stop(void)
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

void ps_handover_clear(void)
{
}
#endif /* CONFIG_TRACEPOINTS */

/* ------------------------------------------------------------------ */
/* Hostile takeover injection */

static DECLARE_FAULT_ATTR(ps_fail_takeover);

static char *fail_takeover;
module_param(fail_takeover, charp, 0444);
MODULE_PARM_DESC(fail_takeover,
		 "fault attr of takeover injection: <interval>,<probability>,<space>,<times>");

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
 * ps_takeover_init() - fail_takeover's defaults, before the parameter
 *
 * Called at load time, before ps_takeover_setup() applies fail_takeover=.
 */
void ps_takeover_init(void)
{
	/* The decision points are ours, but stack dumps would flood. */
	ps_fail_takeover.verbose = 0;
	/* No budget: probability alone decides (times is over all runs). */
	atomic_set(&ps_fail_takeover.times, -1);
}

/**
 * ps_takeover_setup() - apply the fail_takeover= parameter, if given
 *
 * Return: 0, -EINVAL when setup_fault_attr() refuses it, or -ENOMEM.
 */
int ps_takeover_setup(void)
{
	int ret = 0;

	if (fail_takeover) {
		char *s = kstrdup(fail_takeover, GFP_KERNEL);

		if (!s || !setup_fault_attr(&ps_fail_takeover, s))
			ret = s ? -EINVAL : -ENOMEM;
		kfree(s);
	}
	return ret;
}

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

/**
 * ps_takeover_format() - fail_takeover's values for the banners
 * @buf: output buffer
 * @size: its size
 *
 * Return: the length written, " fail_takeover=probability:..,..".
 */
int ps_takeover_format(char *buf, size_t size)
{
	return scnprintf(buf, size,
			 " fail_takeover=probability:%lu,interval:%lu,times:%d,space:%d,verbose:%lu",
			 ps_fail_takeover.probability,
			 ps_fail_takeover.interval,
			 atomic_read(&ps_fail_takeover.times),
			 atomic_read(&ps_fail_takeover.space),
			 ps_fail_takeover.verbose);
}

/**
 * ps_takeover_debugfs_init() - the fail_takeover/ directory of fault attributes
 * @dir: the module's debugfs directory
 */
void ps_takeover_debugfs_init(struct dentry *dir)
{
	fault_create_debugfs_attr("fail_takeover", dir, &ps_fail_takeover);
}

/**
 * ps_takeover_debugfs_exit() - drop fail_takeover/'s reference
 *
 * Called after the module's debugfs directory has been removed.
 */
void ps_takeover_debugfs_exit(void)
{
	/* fault_create_debugfs_attr() keeps a reference in ->dname */
	dput(ps_fail_takeover.dname);
	ps_fail_takeover.dname = NULL;
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
	ps_hist_add(&pc->hists->to_time[kind], dt);
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

void ps_maybe_takeover(unsigned int cpu)
{
	unsigned int kinds = ps_run.cfg.takeover_kinds;
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);
	unsigned int rr, i;
	enum ps_kind kind;
	int target;

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
	/* Without NMIs the knobs refuse the NMI kinds: never here. */
	if (!PS_HAVE_NMI)
		return;
	target = ps_pick_owner(ps_kind_prio(kind), cpu);
	if (!cpu_online(target)) {
		atomic_long_inc(&ps_to_stats[kind][PS_TS_DROPPED]);
		return;
	}
	if (ps_nmi_kick(target, BIT(PS_NMI_TO_SHIFT + kind)))
		atomic_long_inc(&ps_to_stats[kind][PS_TS_MERGED]);
}

/* In NMI: does this CPU's interrupted context own a console? */
static bool ps_nmi_on_owner(struct ps_pcpu *pc, enum cons_prio prio)
{
	int p = READ_ONCE(pc->atomic_prio);

	if (ps_owner_tracked())
		return atomic_read(&ps_owner_cpu) == (int)smp_processor_id();
	return (p && p < (int)prio) || ps_is_printer(current);
}

void ps_nmi_takeovers(struct ps_pcpu *pc, unsigned int bits)
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
