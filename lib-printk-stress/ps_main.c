// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress - in-kernel printk stressor with hostile takeover injection
 *
 * Module init/exit, run state, start/stop/reset and the banners.
 * See docs/stressor.md for the user interface.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "ps.h"

/* Serializes commands, knob changes, start/stop and the run state */
DEFINE_MUTEX(ps_mutex);
bool ps_running;
bool ps_stopping;
atomic64_t ps_deadline_ns = ATOMIC64_INIT(S64_MAX);
struct ps_run ps_run;
unsigned int ps_run_id;

static unsigned int run_base;
module_param(run_base, uint, 0444);
MODULE_PARM_DESC(run_base, "run ids start after this value (default 0)");

static bool autostart;
module_param(autostart, bool, 0444);
MODULE_PARM_DESC(autostart, "start a run at load time (default 0)");

static void ps_autostop_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(ps_autostop_work, ps_autostop_fn);
static void ps_stats_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(ps_stats_work, ps_stats_fn);

/* Under ps_mutex: banner text, effective masks while validating */
static char ps_banner_buf[1024];
static struct cpumask ps_eff_cpus;
static struct cpumask ps_eff_nmi_cpus;

/*
 * ps_banner - the start or end line of a run, with every knob; the end
 * line adds the reason, the elapsed time and the totals. At KERN_ALERT,
 * so the console shows it whatever the records' level is.
 */
static void ps_banner(const char *what, bool summary)
{
	char *buf = ps_banner_buf;
	size_t size = sizeof(ps_banner_buf);
	int len;

	len = scnprintf(buf, size,
			"%s run=%u nobkl_debug=%d nmi=%d autostart=%d run_base=%u ",
			what, ps_run.id, PS_HAVE_NOBKL, PS_HAVE_NMI, autostart,
			run_base);
	len += ps_cfg_format(&ps_run.cfg, buf + len, size - len);
	len += scnprintf(buf + len, size - len,
			 " eff_cpus=%*pbl eff_nmi_cpus=%*pbl",
			 cpumask_pr_args(&ps_run.cpus),
			 cpumask_pr_args(&ps_run.nmi_cpus));
	len += ps_takeover_format(buf + len, size - len);
	if (ps_run.cfg.break_check) {
		len += scnprintf(buf + len, size - len, " break_check=");
		len += ps_knob_show(&ps_break_check_knob, &ps_run.cfg,
				    buf + len, size - len);
	}
	if (summary) {
		len += scnprintf(buf + len, size - len,
				 " reason=%s elapsed_ms=%llu ",
				 ps_run.stop_reason,
				 div_u64(ps_run.stop_ns - ps_run.start_ns,
					 NSEC_PER_MSEC));
		ps_summary_format(buf + len, size - len);
	}
	ps_printk(KERN_ALERT PS_NAME ": %s\n", buf);
}

static void ps_effective(bool all, const struct cpumask *mask,
			 struct cpumask *eff)
{
	if (all)
		cpumask_copy(eff, cpu_online_mask);
	else
		cpumask_and(eff, mask, cpu_online_mask);
}

/*
 * ps_validate - check that every part of @cfg can do something
 *
 * -EINVAL when nothing would run, when no online CPU is left for the
 * producers that need one, when emerg/panic records are asked for but
 * no origin may run their sections, or when takeovers are to be
 * injected but no producer decides on them (only task iterations and
 * hrtimer expiries do). Computes ps_eff_cpus and ps_eff_nmi_cpus.
 */
static int ps_validate(const struct ps_cfg *cfg)
{
	bool cpus = ps_need_threads(cfg) || ps_need_timers(cfg) ||
		    ps_need_stimers(cfg);
	bool nmi = ps_need_driver(cfg);

	if (!cpus && !nmi)
		return -EINVAL;		/* no producer */
	if ((cfg->contexts & PS_CTX_ATOMIC_MASK) && !cfg->atomic_from)
		return -EINVAL;		/* no section would run */
	if (!cpus && ps_takeovers_armed(cfg))
		return -EINVAL;		/* no decision point */

	ps_effective(cfg->cpus_all, &cfg->cpus, &ps_eff_cpus);
	ps_effective(cfg->nmi_cpus_all, &cfg->nmi_cpus, &ps_eff_nmi_cpus);
	if (cpus && cpumask_empty(&ps_eff_cpus))
		return -EINVAL;
	if (nmi && cpumask_empty(&ps_eff_nmi_cpus))
		return -EINVAL;
	return 0;
}

/* Stop all producers, in reverse table order; safe on a partially started run. */
static void ps_teardown(void)
{
	unsigned int o;

	WRITE_ONCE(ps_stopping, true);
	/* it does not take ps_mutex, and does not re-arm once stopping */
	cancel_delayed_work_sync(&ps_stats_work);
	ps_shapes_stop();
	for (o = PS_NR_ORIG; o-- > 0;)
		ps_producers[o].stop();
	if (ps_run.nmi_registered)
		ps_nmi_drain_unregister();
	ps_run.nmi_registered = false;
	ps_tp_stop();
	ps_printers_put();
}

/*
 * ps_start - start a run with the current knobs
 *
 * Returns -EBUSY while running, -EINVAL when the knobs produce nothing
 * (no producer, no online CPU in the masks), -ENOMEM or the NMI
 * registration error; nothing changes on error.
 */
int ps_start(void)
{
	static struct ps_cfg saved_cfg;
	unsigned int saved_id = ps_run.id;
	const struct ps_producer_ops *ops;
	unsigned int o;
	int ret;

	lockdep_assert_held(&ps_mutex);

	if (ps_running)
		return -EBUSY;
	ret = ps_validate(&ps_cfg);
	if (ret)
		return ret;

	saved_cfg = ps_run.cfg;
	ps_run.cfg = ps_cfg;
	ps_run.id = ps_run_id + 1;
	atomic64_set(&ps_deadline_ns, S64_MAX);
	WRITE_ONCE(ps_stopping, false);

	if (ps_need_nmi(&ps_run.cfg)) {
		ret = ps_nmi_register();
		if (ret)
			goto fail;
		ps_run.nmi_registered = true;
	}
	for (o = 0; o < PS_NR_ORIG; o++) {
		ops = &ps_producers[o];
		if (!ops->prepare || !ops->needed(&ps_run.cfg))
			continue;
		ret = ops->prepare(&ps_eff_cpus);
		if (ret)
			goto fail;
	}

	/* Committed: from here on this is the new run. */
	ps_run_id++;
	cpumask_copy(&ps_run.cpus, &ps_eff_cpus);
	cpumask_copy(&ps_run.nmi_cpus, &ps_eff_nmi_cpus);
	ps_stats_clear();
	ps_run.stop_reason = "running";
	ps_run.result = "none";
	ps_run.start_ns = ktime_get_ns();
	ps_run.stop_ns = 0;
	ps_run.deadline_ns = ps_run.start_ns +
			     (u64)ps_run.cfg.duration_s * NSEC_PER_SEC;
	atomic64_set(&ps_deadline_ns, ps_run.deadline_ns);
	ps_running = true;
	ps_banner("start", false);

	ps_printers_find();
	ps_tp_start();
	for (o = 0; o < PS_NR_ORIG; o++)
		if (ps_producers[o].needed(&ps_run.cfg))
			ps_producers[o].start();
	ps_shapes_start();

	mod_delayed_work(system_wq, &ps_autostop_work,
			 msecs_to_jiffies(ps_run.cfg.duration_s * MSEC_PER_SEC) + 1);
	if (ps_run.cfg.stats_interval_s)
		mod_delayed_work(system_wq, &ps_stats_work,
				 ps_run.cfg.stats_interval_s * HZ);
	return 0;

fail:
	ps_teardown();
	ps_run.cfg = saved_cfg;
	ps_run.id = saved_id;
	return ret;
}

/* ps_stop - stop the run (no-op when idle); @reason goes into the banner */
void ps_stop(const char *reason)
{
	lockdep_assert_held(&ps_mutex);

	if (!ps_running)
		return;
	ps_teardown();
	ps_run.stop_ns = ktime_get_ns();
	ps_run.stop_reason = reason;
	cancel_delayed_work(&ps_autostop_work);
	ps_running = false;
	ps_banner("end", true);
	ps_result_line();
}

/*
 * ps_reset - knobs and fail_takeover back to their load-time values,
 * statistics cleared
 */
void ps_reset(void)
{
	lockdep_assert_held(&ps_mutex);

	ps_cfg = ps_cfg_loaded;
	ps_takeover_attr_reset();
	ps_stats_clear();
}

static void ps_autostop_fn(struct work_struct *work)
{
	u64 now;

	mutex_lock(&ps_mutex);
	if (ps_running) {
		now = ktime_get_ns();
		if (now < ps_run.deadline_ns)
			mod_delayed_work(system_wq, &ps_autostop_work,
					 nsecs_to_jiffies(ps_run.deadline_ns -
							  now) + 1);
		else
			ps_stop("duration");
	}
	mutex_unlock(&ps_mutex);
}

/* A stats line every stats_interval_s seconds while running */
static void ps_stats_fn(struct work_struct *work)
{
	if (READ_ONCE(ps_stopping))
		return;
	ps_stats_line();
	mod_delayed_work(system_wq, &ps_stats_work,
			 ps_run.cfg.stats_interval_s * HZ);
}

static int __init ps_init(void)
{
	int ret = 0;

	ps_pcpu = alloc_percpu(struct ps_pcpu);
	if (!ps_pcpu)
		return -ENOMEM;
	ret = ps_hists_alloc();
	if (ret)
		goto out_pcpu;
	ps_prod_init();

	ret = ps_takeover_setup();
	if (ret)
		goto out_free;
	ps_takeover_attr_loaded();
	/*
	 * Before a run can start, and detached only at unload: attaching
	 * or detaching a probe patches the tracepoint's static call while
	 * the other CPUs print through it, which a run must not do.
	 */
	ps_tp_register();

	mutex_lock(&ps_mutex);
	ps_cfg_loaded = ps_cfg;
	ps_run_id = run_base;
	ps_run.id = run_base;
	ps_run.cfg = ps_cfg;
	ps_run.stop_reason = "never_started";
	ps_run.result = "none";
	mutex_unlock(&ps_mutex);

	ps_debugfs_init();

	pr_info("loaded: nobkl_debug=%d nmi=%d autostart=%d run_base=%u\n",
		PS_HAVE_NOBKL, PS_HAVE_NMI, autostart, run_base);

	if (autostart) {
		mutex_lock(&ps_mutex);
		ret = ps_start();
		mutex_unlock(&ps_mutex);
		if (ret) {
			pr_err("autostart failed: %d\n", ret);
			ps_debugfs_exit();
			goto out_tp;
		}
	}
	return 0;

out_tp:
	ps_tp_unregister();
out_free:
	ps_hists_free();
out_pcpu:
	free_percpu(ps_pcpu);
	return ret;
}

static void __exit ps_exit(void)
{
	/* No more commands; waits for file operations in progress. */
	ps_debugfs_exit();

	mutex_lock(&ps_mutex);
	ps_stop("unload");
	mutex_unlock(&ps_mutex);
	/* Not running, so the work cannot re-arm itself. */
	cancel_delayed_work_sync(&ps_autostop_work);
	/* No probe may run once ps_pcpu and the module's text are gone. */
	ps_tp_unregister();

	ps_hists_free();
	free_percpu(ps_pcpu);
	pr_info("unloaded\n");
}

module_init(ps_init);
module_exit(ps_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("printk stressor with hostile console takeover injection");
MODULE_AUTHOR("printk-nobkl-stress");
