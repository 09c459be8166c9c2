// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress knobs: one table drives the module parameters, the debugfs
 * knob files and the banners. Parsing never changes a value on error.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "ps.h"

const char * const ps_ctx_names[PS_NR_CTX] = {
	[PS_CTX_TASK]		= "task",
	[PS_CTX_HARDIRQ]	= "hardirq",
	[PS_CTX_NMI]		= "nmi",
	[PS_CTX_EMERG]		= "emerg",
	[PS_CTX_PANIC]		= "panic",
	[PS_CTX_SOFTIRQ]	= "softirq",
	[PS_CTX_DEFERRED]	= "deferred",
};

const char * const ps_origin_names[PS_NR_ORIG] = {
	[PS_ORIG_TASK]		= "task",
	[PS_ORIG_HARDIRQ]	= "hardirq",
	[PS_ORIG_NMI]		= "nmi",
	[PS_ORIG_SOFTIRQ]	= "softirq",
};

const char * const ps_kind_names[PS_NR_KIND] = {
	[PS_TO_EMERG_REMOTE]	= "emerg_remote",
	[PS_TO_PANIC_REMOTE]	= "panic_remote",
	[PS_TO_EMERG_NMI]	= "emerg_nmi",
	[PS_TO_PANIC_NMI]	= "panic_nmi",
};

const char * const ps_check_names[PS_NR_CHECK] = {
	[PS_CHK_STORED]		= "stored",
	[PS_CHK_NMI]		= "nmi",
	[PS_CHK_TAKEOVERS]	= "takeovers",
	[PS_CHK_RECORDS]	= "records",
};

#define PS_NO_NMI_CTX		(PS_HAVE_NMI ? 0 : BIT(PS_CTX_NMI))
#define PS_NO_CONS_CTX		(PS_CTX_ATOMIC_MASK & ~PS_CONS_CONTEXTS)
#define PS_UNSUP_CTX		(PS_NO_NMI_CTX | PS_NO_CONS_CTX)
#define PS_UNSUP_ORIG		(PS_HAVE_NMI ? 0 : BIT(PS_ORIG_NMI))
#define PS_UNSUP_KIND		(!PS_HAVE_NOBKL ? GENMASK(PS_NR_KIND - 1, 0) : \
				 !PS_HAVE_NMI ? PS_KIND_NMI_MASK : 0)

struct ps_cfg ps_cfg = {
	.contexts	= GENMASK(PS_NR_CTX - 1, 0) & ~PS_UNSUP_CTX,
	.atomic_from	= GENMASK(PS_NR_ORIG - 1, 0) & ~PS_UNSUP_ORIG,
	.takeover_kinds	= GENMASK(PS_NR_KIND - 1, 0) & ~PS_UNSUP_KIND,
	.cpus_all	= true,
	.nmi_cpus_all	= true,
	.threads_per_cpu = 1,
	.task_rate	= 100,
	.burst		= 4,
	.irq_period_us	= 1000,
	.irq_burst	= 1,
	.nmi_period_us	= 10000,
	.nmi_burst	= 1,
	.emerg_every	= 50,
	.panic_every	= 200,
	.atomic_burst	= 4,
	.payload_len	= 64,
	.level		= 4,
	.duration_s	= 10,
	.stats_interval_s = 60,
	.stutter_ms	= 1000,
};

struct ps_cfg ps_cfg_loaded;

/* Parsing scratch, protected by ps_mutex */
static struct cpumask ps_scratch_mask;

enum {
	PS_KNOB_contexts,
	PS_KNOB_atomic_from,
	PS_KNOB_cpus,
	PS_KNOB_nmi_cpus,
	PS_KNOB_threads_per_cpu,
	PS_KNOB_task_rate,
	PS_KNOB_burst,
	PS_KNOB_irq_period_us,
	PS_KNOB_irq_burst,
	PS_KNOB_nmi_period_us,
	PS_KNOB_nmi_burst,
	PS_KNOB_emerg_every,
	PS_KNOB_panic_every,
	PS_KNOB_atomic_burst,
	PS_KNOB_payload_len,
	PS_KNOB_level,
	PS_KNOB_duration_s,
	PS_KNOB_stats_interval_s,
	PS_KNOB_takeover_kinds,
	PS_KNOB_shapes,
	PS_KNOB_stutter_ms,
	PS_NR_KNOBS
};

#define PS_UINT(_name, _min, _max)					\
	[PS_KNOB_##_name] = {						\
		.name = #_name, .type = PS_K_UINT,			\
		.off = offsetof(struct ps_cfg, _name),			\
		.min = (_min), .max = (_max),				\
	}

#define PS_SET(_name, _names, _nr, _unsup)				\
	[PS_KNOB_##_name] = {						\
		.name = #_name, .type = PS_K_SET,			\
		.off = offsetof(struct ps_cfg, _name),			\
		.names = (_names), .nr_names = (_nr),			\
		.unsupported = (_unsup),				\
	}

#define PS_CPUS(_name)							\
	[PS_KNOB_##_name] = {						\
		.name = #_name, .type = PS_K_CPUS,			\
		.off = offsetof(struct ps_cfg, _name),			\
		.off_all = offsetof(struct ps_cfg, _name##_all),	\
	}

const struct ps_knob ps_knobs[PS_NR_KNOBS] = {
	PS_SET(contexts, ps_ctx_names, PS_NR_CTX, PS_UNSUP_CTX),
	PS_SET(atomic_from, ps_origin_names, PS_NR_ORIG, PS_UNSUP_ORIG),
	PS_CPUS(cpus),
	PS_CPUS(nmi_cpus),
	PS_UINT(threads_per_cpu, 1, PS_MAX_THREADS),
	PS_UINT(task_rate, 0, 100000),
	PS_UINT(burst, 1, 1000),
	PS_UINT(irq_period_us, 50, 1000000),
	PS_UINT(irq_burst, 1, 100),
	PS_UINT(nmi_period_us, 100, 1000000),
	PS_UINT(nmi_burst, 1, 100),
	PS_UINT(emerg_every, 1, 1000000),
	PS_UINT(panic_every, 1, 1000000),
	PS_UINT(atomic_burst, 1, 1000),
	PS_UINT(payload_len, 1, PS_PAYLOAD_MAX),
	PS_UINT(level, 0, 7),
	PS_UINT(duration_s, 1, 3600),
	PS_UINT(stats_interval_s, 0, 3600),
	PS_SET(takeover_kinds, ps_kind_names, PS_NR_KIND, PS_UNSUP_KIND),
	PS_SET(shapes, ps_shape_names, PS_NR_SHAPE, 0),
	PS_UINT(stutter_ms, 10, 60000),
};

const unsigned int ps_nr_knobs = PS_NR_KNOBS;

/*
 * break_check: a module parameter only (not a debugfs knob), so that a
 * run cannot be broken by a stray write; the checks it can break are
 * the only names it takes.
 */
const struct ps_knob ps_break_check_knob = {
	.name = "break_check", .type = PS_K_SET,
	.off = offsetof(struct ps_cfg, break_check),
	.names = ps_check_names, .nr_names = PS_NR_CHECK,
	.unsupported = GENMASK(PS_NR_CHECK - 1, 0) & ~PS_CHK_BREAKABLE,
};

static unsigned int *ps_knob_uint(const struct ps_knob *k, struct ps_cfg *cfg)
{
	return (unsigned int *)((char *)cfg + k->off);
}

static int ps_parse_set(const struct ps_knob *k, char *s, unsigned int *out)
{
	unsigned int all = GENMASK(k->nr_names - 1, 0) & ~k->unsupported;
	unsigned int v = 0, i;
	char *tok;

	if (!*s)
		return -EINVAL;
	if (!strcmp(s, "none")) {
		*out = 0;
		return 0;
	}
	if (!strcmp(s, "all")) {
		*out = all;
		return 0;
	}
	while ((tok = strsep(&s, ",")) != NULL) {
		tok = strim(tok);
		for (i = 0; i < k->nr_names; i++)
			if (!strcmp(tok, k->names[i]))
				break;
		if (i == k->nr_names)
			return -EINVAL;
		if (k->unsupported & BIT(i))
			return -EOPNOTSUPP;
		v |= BIT(i);
	}
	*out = v;
	return 0;
}

/*
 * ps_knob_set - parse @buf into knob @k of @cfg
 *
 * Caller holds ps_mutex. Returns 0, or -EINVAL (malformed, unknown name,
 * empty), -ERANGE (number or CPU out of range), -EOPNOTSUPP (needs the
 * nobkl series or NMIs), -ENOMEM. @cfg is unchanged on error.
 */
int ps_knob_set(const struct ps_knob *k, struct ps_cfg *cfg, const char *buf)
{
	char *copy, *s;
	unsigned int v;
	int ret;

	lockdep_assert_held(&ps_mutex);

	copy = kstrdup(buf, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	s = strim(copy);

	switch (k->type) {
	case PS_K_UINT:
		ret = kstrtouint(s, 0, &v);
		if (!ret && (v < k->min || v > k->max))
			ret = -ERANGE;
		if (!ret)
			*ps_knob_uint(k, cfg) = v;
		break;
	case PS_K_SET:
		ret = ps_parse_set(k, s, &v);
		if (!ret)
			*ps_knob_uint(k, cfg) = v;
		break;
	case PS_K_CPUS:
		if (!strcmp(s, "all")) {
			*(bool *)((char *)cfg + k->off_all) = true;
			ret = 0;
			break;
		}
		ret = cpulist_parse(s, &ps_scratch_mask);
		/* a CPU number too large for an int is out of range too */
		if (ret == -EOVERFLOW)
			ret = -ERANGE;
		if (ret)
			break;
		if (cpumask_empty(&ps_scratch_mask)) {
			ret = -EINVAL;
			break;
		}
		if (!cpumask_subset(&ps_scratch_mask, cpu_possible_mask)) {
			ret = -ERANGE;
			break;
		}
		cpumask_copy((struct cpumask *)((char *)cfg + k->off),
			     &ps_scratch_mask);
		*(bool *)((char *)cfg + k->off_all) = false;
		break;
	default:
		ret = -EINVAL;
	}
	kfree(copy);
	return ret;
}

/* ps_knob_show - format knob @k of @cfg, without newline */
int ps_knob_show(const struct ps_knob *k, const struct ps_cfg *cfg,
		 char *buf, size_t size)
{
	const struct cpumask *mask;
	unsigned int v, i;
	int len = 0;

	switch (k->type) {
	case PS_K_UINT:
		return scnprintf(buf, size, "%u",
				 *ps_knob_uint(k, (struct ps_cfg *)cfg));
	case PS_K_SET:
		v = *ps_knob_uint(k, (struct ps_cfg *)cfg);
		if (!v)
			return scnprintf(buf, size, "none");
		for (i = 0; i < k->nr_names; i++) {
			if (!(v & BIT(i)))
				continue;
			len += scnprintf(buf + len, size - len, "%s%s",
					 len ? "," : "", k->names[i]);
		}
		return len;
	case PS_K_CPUS:
		if (*(bool *)((char *)cfg + k->off_all))
			return scnprintf(buf, size, "all");
		mask = (const struct cpumask *)((const char *)cfg + k->off);
		return scnprintf(buf, size, "%*pbl", cpumask_pr_args(mask));
	}
	return 0;
}

/* ps_cfg_format - "name=value ..." for every knob, for banners */
int ps_cfg_format(const struct ps_cfg *cfg, char *buf, size_t size)
{
	unsigned int i;
	int len = 0;

	for (i = 0; i < PS_NR_KNOBS; i++) {
		len += scnprintf(buf + len, size - len, "%s%s=",
				 i ? " " : "", ps_knobs[i].name);
		len += ps_knob_show(&ps_knobs[i], cfg, buf + len, size - len);
	}
	return len;
}

/* Module parameters: read-only in sysfs, set at load time only */
static int ps_param_set(const char *val, const struct kernel_param *kp)
{
	int ret;

	mutex_lock(&ps_mutex);
	ret = ps_knob_set(kp->arg, &ps_cfg, val ? val : "");
	mutex_unlock(&ps_mutex);
	return ret;
}

static int ps_param_get(char *buffer, const struct kernel_param *kp)
{
	int len;

	mutex_lock(&ps_mutex);
	len = ps_knob_show(kp->arg, &ps_cfg, buffer, PAGE_SIZE - 1);
	mutex_unlock(&ps_mutex);
	buffer[len++] = '\n';
	buffer[len] = '\0';
	return len;
}

static const struct kernel_param_ops ps_param_ops = {
	.set = ps_param_set,
	.get = ps_param_get,
};

#define PS_PARAM(_name)							\
	module_param_cb(_name, &ps_param_ops,				\
			(void *)&ps_knobs[PS_KNOB_##_name], 0444)

PS_PARAM(contexts);
MODULE_PARM_DESC(contexts, "record contexts: subset of task,hardirq,nmi,emerg,panic,softirq,deferred; all; none");
PS_PARAM(atomic_from);
MODULE_PARM_DESC(atomic_from, "where emerg/panic sections run: subset of task,hardirq,nmi,softirq");
PS_PARAM(cpus);
MODULE_PARM_DESC(cpus, "producer CPUs (cpulist or all)");
PS_PARAM(nmi_cpus);
MODULE_PARM_DESC(nmi_cpus, "NMI producer target CPUs (cpulist or all)");
PS_PARAM(threads_per_cpu);
MODULE_PARM_DESC(threads_per_cpu, "task producer kthreads per CPU (1-16)");
PS_PARAM(task_rate);
MODULE_PARM_DESC(task_rate, "bursts per second per kthread (0-100000, 0 = no sleep)");
PS_PARAM(burst);
MODULE_PARM_DESC(burst, "task (and deferred) records per burst (1-1000)");
PS_PARAM(irq_period_us);
MODULE_PARM_DESC(irq_period_us, "per-CPU hrtimer period in us, hardirq and softirq (50-1000000)");
PS_PARAM(irq_burst);
MODULE_PARM_DESC(irq_burst, "hardirq (softirq) records per hrtimer expiry (1-100)");
PS_PARAM(nmi_period_us);
MODULE_PARM_DESC(nmi_period_us, "period of the NMI sender in us (100-1000000)");
PS_PARAM(nmi_burst);
MODULE_PARM_DESC(nmi_burst, "NMI records per NMI (1-100)");
PS_PARAM(emerg_every);
MODULE_PARM_DESC(emerg_every, "an emergency section every N iterations per origin (1-1000000)");
PS_PARAM(panic_every);
MODULE_PARM_DESC(panic_every, "a panic-prio section every N iterations per origin (1-1000000)");
PS_PARAM(atomic_burst);
MODULE_PARM_DESC(atomic_burst, "records per emergency/panic section (1-1000)");
PS_PARAM(payload_len);
MODULE_PARM_DESC(payload_len, "payload bytes per record (1-800)");
PS_PARAM(level);
MODULE_PARM_DESC(level, "printk level of the records (0-7)");
PS_PARAM(duration_s);
MODULE_PARM_DESC(duration_s, "run duration in seconds, auto-stop (1-3600)");
PS_PARAM(stats_interval_s);
MODULE_PARM_DESC(stats_interval_s, "a stats line every N seconds of a run (0-3600, 0 = none)");
PS_PARAM(takeover_kinds);
MODULE_PARM_DESC(takeover_kinds, "hostile takeover kinds: subset of emerg_remote,panic_remote,emerg_nmi,panic_nmi");
PS_PARAM(shapes);
MODULE_PARM_DESC(shapes, "load shapes: subset of stutter,truncate,multiline,cont");
PS_PARAM(stutter_ms);
MODULE_PARM_DESC(stutter_ms, "mean length of a stutter phase in ms (10-60000)");

module_param_cb(break_check, &ps_param_ops, (void *)&ps_break_check_knob, 0444);
MODULE_PARM_DESC(break_check, "test only: make these end-of-run checks fail: subset of stored,records");
