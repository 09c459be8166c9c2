// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress debugfs interface: /sys/kernel/debug/printk_stress/
 *
 *   control         write start|stop|reset; read: commands and state
 *   <knob>          one file per knob (see ps_knobs.c)
 *   stats           per producer/context counters, takeovers, latency
 *   fail_takeover/  fault attributes deciding hostile takeovers (nobkl)
 *
 * A value must come whole in the first write() of an open file (offset
 * 0), shorter than a page, without a NUL byte in it; anything else is
 * -EINVAL, so a value split over two write() calls is refused, not taken
 * as two values. Knob writes while running are -EBUSY. Nothing changes
 * on error.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dcache.h>
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ps.h"

static struct dentry *ps_dir;

/**
 * ps_get_user() - copy a written value, NUL-terminated
 * @ubuf: the user buffer
 * @count: its length
 * @ppos: the file position; a value only comes at offset 0
 *
 * Return: the copy (kfree() it) or ERR_PTR(-EINVAL) when the write is not
 * at offset 0, empty, a page or longer, or has a NUL byte in it.
 */
static char *ps_get_user(const char __user *ubuf, size_t count, loff_t *ppos)
{
	char *s;

	if (*ppos != 0 || !count || count >= PAGE_SIZE)
		return ERR_PTR(-EINVAL);
	s = memdup_user_nul(ubuf, count);
	if (!IS_ERR(s) && strlen(s) != count) {
		kfree(s);
		return ERR_PTR(-EINVAL);
	}
	return s;
}

/*
 * The result of a write(): a value taken moves the file position past
 * it, so a further write() on the same open file is not at offset 0.
 */
static ssize_t ps_write_done(int ret, size_t count, loff_t *ppos)
{
	if (ret)
		return ret;
	*ppos += count;
	return count;
}

/* ------------------------------------------------------------------ */
/* control */

static void ps_show_knobs(struct seq_file *m, char *buf, size_t size)
{
	const struct ps_knob *k;
	unsigned int i, j;

	for (i = 0; i < ps_nr_knobs; i++) {
		k = &ps_knobs[i];
		ps_knob_show(k, &ps_cfg, buf, size);
		seq_printf(m, "knob %s=%s ", k->name, buf);
		switch (k->type) {
		case PS_K_UINT:
			seq_printf(m, "range=%u-%u\n", k->min, k->max);
			break;
		case PS_K_SET:
			seq_puts(m, "set=");
			for (j = 0; j < k->nr_names; j++)
				if (!(k->unsupported & BIT(j)))
					seq_printf(m, "%s,", k->names[j]);
			seq_puts(m, "all,none\n");
			break;
		case PS_K_CPUS:
			seq_puts(m, "cpulist,all\n");
			break;
		}
	}
}

static int ps_control_show(struct seq_file *m, void *v)
{
	char *buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	u64 end;

	if (!buf)
		return -ENOMEM;
	mutex_lock(&ps_mutex);
	end = ps_running ? ktime_get_ns() : ps_run.stop_ns;
	seq_puts(m, "commands: start stop reset\n");
	seq_printf(m, "state: %s\n", ps_running ? "running" : "idle");
	seq_printf(m, "run: %u\n", ps_run.id);
	seq_printf(m, "last_stop: %s\n", ps_run.stop_reason);
	seq_printf(m, "result: %s\n", ps_run.result);
	seq_printf(m, "elapsed_ms: %llu\n",
		   ps_run.start_ns && end >= ps_run.start_ns ?
		   div_u64(end - ps_run.start_ns, NSEC_PER_MSEC) : 0);
	seq_printf(m, "nobkl_debug: %d\nnmi: %d\ncons: %s\n", PS_HAVE_NOBKL,
		   PS_HAVE_NMI, PS_CONS_NAME);
	ps_show_knobs(m, buf, PAGE_SIZE);
	mutex_unlock(&ps_mutex);
	kfree(buf);
	return 0;
}

static int ps_control_open(struct inode *inode, struct file *file)
{
	return single_open(file, ps_control_show, NULL);
}

static ssize_t ps_control_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	char *s = ps_get_user(ubuf, count, ppos);
	char *cmd;
	int ret;

	if (IS_ERR(s))
		return PTR_ERR(s);
	cmd = strim(s);

	ret = mutex_lock_interruptible(&ps_mutex);
	if (ret)
		goto out;
	if (!strcmp(cmd, "start")) {
		ret = ps_start();
	} else if (!strcmp(cmd, "stop")) {
		ps_stop("command");
	} else if (!strcmp(cmd, "reset")) {
		if (ps_running)
			ret = -EBUSY;
		else
			ps_reset();
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&ps_mutex);
out:
	kfree(s);
	return ps_write_done(ret, count, ppos);
}

static const struct file_operations ps_control_fops = {
	.owner		= THIS_MODULE,
	.open		= ps_control_open,
	.read		= seq_read,
	.write		= ps_control_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* ------------------------------------------------------------------ */
/* knob files */

static int ps_knob_file_show(struct seq_file *m, void *v)
{
	const struct ps_knob *k = m->private;
	char *buf = kmalloc(PAGE_SIZE, GFP_KERNEL);

	if (!buf)
		return -ENOMEM;
	mutex_lock(&ps_mutex);
	ps_knob_show(k, &ps_cfg, buf, PAGE_SIZE);
	mutex_unlock(&ps_mutex);
	seq_printf(m, "%s\n", buf);
	kfree(buf);
	return 0;
}

static int ps_knob_open(struct inode *inode, struct file *file)
{
	return single_open(file, ps_knob_file_show, inode->i_private);
}

static ssize_t ps_knob_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	const struct ps_knob *k = file_inode(file)->i_private;
	char *s = ps_get_user(ubuf, count, ppos);
	int ret;

	/* While running any knob write is -EBUSY, a malformed one too. */
	ret = mutex_lock_interruptible(&ps_mutex);
	if (!ret) {
		if (ps_running)
			ret = -EBUSY;
		else
			ret = IS_ERR(s) ? PTR_ERR(s) : ps_knob_set(k, &ps_cfg, s);
		mutex_unlock(&ps_mutex);
	}
	if (!IS_ERR(s))
		kfree(s);
	return ps_write_done(ret, count, ppos);
}

static const struct file_operations ps_knob_fops = {
	.owner		= THIS_MODULE,
	.open		= ps_knob_open,
	.read		= seq_read,
	.write		= ps_knob_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* ------------------------------------------------------------------ */
/* stats */

static bool ps_cpu_has_stats(unsigned int cpu)
{
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);
	long att = 0, sto = 0, ref = 0;
	unsigned int c;

	if (cpu_online(cpu))
		return true;
	for (c = 0; c < PS_NR_CTX; c++)
		ps_stats_sum(cpu, c, &att, &sto, &ref);
	return att || atomic_long_read(&pc->nmi_sent) != 0;
}

/* A context's records over all producers, for the "total" lines */
struct ps_ctx_total {
	unsigned long	attempted;
	unsigned long	stored;
	unsigned long	refused;
};

/*
 * A "cont" line after the "producer" line of a producer that printed
 * records in fragments (the cont shape): those records and their
 * fragments, passed to printk(), stored and refused.
 */
static void ps_stats_cont(struct seq_file *m, unsigned int cpu,
			  enum ps_ctx ctx, const char *name,
			  struct ps_cont_stats *cs)
{
	unsigned long n = atomic_long_read(&cs->next);
	unsigned long f = atomic_long_read(&cs->frags);
	unsigned long st = atomic_long_read(&cs->stored);
	unsigned long x = atomic_long_read(&cs->refused);

	if (!n)
		return;
	seq_printf(m, "cont cpu=%u ctx=%s writer=%s records=%lu fragments=%lu stored=%lu refused=%lu\n",
		   cpu, ps_ctx_names[ctx], name, n, f, st, x);
}

/*
 * One "producer" line per producer of @cpu: of the task kthreads of the
 * run (@tpc per CPU), the hrtimer and the NMI handler, each followed by
 * its "cont" line when it has one; adds up @tot.
 */
static void ps_stats_producers(struct seq_file *m, unsigned int cpu,
			       unsigned int tpc, struct ps_ctx_total *tot)
{
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);
	unsigned int id, c;
	unsigned long a, st, x;
	char name[8];

	for (c = 0; c < PS_NR_CTX; c++) {
		for (id = 0; id < PS_NR_WRITERS; id++) {
			if (!ps_writer_prints(id, c) ||
			    (id < PS_MAX_THREADS && id >= tpc))
				continue;
			a = atomic_long_read(&pc->prod[id][c].next);
			st = atomic_long_read(&pc->prod[id][c].stored);
			x = atomic_long_read(&pc->prod[id][c].refused);
			tot[c].attempted += a;
			tot[c].stored += st;
			tot[c].refused += x;
			ps_writer_name(id, name, sizeof(name));
			seq_printf(m, "producer cpu=%u ctx=%s writer=%s attempted=%lu stored=%lu refused=%lu\n",
				   cpu, ps_ctx_names[c], name, a, st, x);
			ps_stats_cont(m, cpu, c, name, &pc->prod[id][c].cont);
		}
	}
}

/* A histogram summed up over CPUs */
struct ps_hist_sum {
	unsigned long	b[PS_HIST_BUCKETS];
	unsigned long	count;
	u64		max_ns;
};

static void ps_hist_sum_add(struct ps_hist_sum *sum, struct ps_hist *h)
{
	unsigned long n;
	unsigned int b;

	for (b = 0; b < PS_HIST_BUCKETS; b++) {
		n = (unsigned int)atomic_read(&h->b[b]);
		sum->b[b] += n;
		sum->count += n;
	}
	sum->max_ns = max_t(u64, sum->max_ns, atomic64_read(&h->max_ns));
}

/*
 * One histogram line (docs/stressor.md, stats), the non-empty buckets by
 * their lower bound in ns:
 *   <prefix> count=<n> max_ns=<ns> sub=32 overflow_ns=68719476736
 *   buckets: <lower>:<n> ...   (all on one line)
 * A bucket from 2 * sub ns on is 2^(ilog2(lower) - ilog2(sub)) ns wide,
 * one below is 1 ns wide, and the bucket at overflow_ns holds everything
 * from there up to max_ns (see ps_hist_bucket()).
 */
static void ps_hist_show(struct seq_file *m, const char *prefix,
			 const struct ps_hist_sum *sum)
{
	unsigned int b;

	seq_printf(m, "%s count=%lu max_ns=%llu sub=%lu overflow_ns=%llu buckets:",
		   prefix, sum->count, sum->max_ns, PS_HIST_SUB,
		   ps_hist_lower(PS_HIST_OVERFLOW));
	for (b = 0; b < PS_HIST_BUCKETS; b++)
		if (sum->b[b])
			seq_printf(m, " %llu:%lu", ps_hist_lower(b), sum->b[b]);
	seq_putc(m, '\n');
}

static struct ps_hists *ps_cpu_hists(unsigned int cpu)
{
	return per_cpu_ptr(ps_pcpu, cpu)->hists;
}

/*
 * The histograms: printk() latency per context over all CPUs, then per
 * CPU; the time in the NMI handler per CPU; the time in each takeover
 * call per kind.
 */
static void ps_stats_hists(struct seq_file *m)
{
	struct ps_hist_sum *sum = kvmalloc(sizeof(*sum), GFP_KERNEL);
	unsigned int cpu, c, k;
	char prefix[48];

	if (!sum)
		return;
	for (c = 0; c < PS_NR_CTX; c++) {
		memset(sum, 0, sizeof(*sum));
		for_each_possible_cpu(cpu)
			ps_hist_sum_add(sum, &ps_cpu_hists(cpu)->lat[c]);
		snprintf(prefix, sizeof(prefix), "latency ctx=%s",
			 ps_ctx_names[c]);
		ps_hist_show(m, prefix, sum);
	}
	for_each_possible_cpu(cpu) {
		for (c = 0; c < PS_NR_CTX; c++) {
			memset(sum, 0, sizeof(*sum));
			ps_hist_sum_add(sum, &ps_cpu_hists(cpu)->lat[c]);
			if (!sum->count)
				continue;
			snprintf(prefix, sizeof(prefix),
				 "latency_cpu cpu=%u ctx=%s", cpu,
				 ps_ctx_names[c]);
			ps_hist_show(m, prefix, sum);
		}
	}
	for_each_possible_cpu(cpu) {
		memset(sum, 0, sizeof(*sum));
		ps_hist_sum_add(sum, &ps_cpu_hists(cpu)->nmi_time);
		if (!sum->count && !ps_cpu_has_stats(cpu))
			continue;
		snprintf(prefix, sizeof(prefix), "nmi_time cpu=%u", cpu);
		ps_hist_show(m, prefix, sum);
	}
	for (k = 0; k < PS_NR_KIND; k++) {
		memset(sum, 0, sizeof(*sum));
		for_each_possible_cpu(cpu)
			ps_hist_sum_add(sum, &ps_cpu_hists(cpu)->to_time[k]);
		snprintf(prefix, sizeof(prefix), "takeover_time kind=%s",
			 ps_kind_names[k]);
		ps_hist_show(m, prefix, sum);
	}
	kvfree(sum);
}

static int ps_stats_show(struct seq_file *m, void *v)
{
	struct ps_ctx_total tot[PS_NR_CTX] = { 0 };
	unsigned int cpu, c, o, k, s, tpc;
	long timeouts;
	u64 end;

	mutex_lock(&ps_mutex);
	tpc = ps_run.cfg.threads_per_cpu;
	end = ps_running ? ktime_get_ns() : ps_run.stop_ns;
	seq_printf(m, "run=%u state=%s last_stop=%s result=%s elapsed_ms=%llu\n",
		   ps_run.id, ps_running ? "running" : "idle",
		   ps_run.stop_reason, ps_run.result,
		   ps_run.start_ns && end >= ps_run.start_ns ?
		   div_u64(end - ps_run.start_ns, NSEC_PER_MSEC) : 0);
	mutex_unlock(&ps_mutex);

	for_each_possible_cpu(cpu)
		if (ps_cpu_has_stats(cpu))
			ps_stats_producers(m, cpu, tpc, tot);
	for (c = 0; c < PS_NR_CTX; c++)
		seq_printf(m, "total ctx=%s attempted=%lu stored=%lu refused=%lu\n",
			   ps_ctx_names[c], tot[c].attempted, tot[c].stored,
			   tot[c].refused);

	for_each_possible_cpu(cpu) {
		struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);

		if (!ps_cpu_has_stats(cpu))
			continue;
		for (c = PS_CTX_EMERG; c <= PS_CTX_PANIC; c++)
			for (o = 0; o < PS_NR_ORIG; o++)
				seq_printf(m, "section cpu=%u ctx=%s from=%s count=%ld\n",
					   cpu, ps_ctx_names[c],
					   ps_origin_names[o],
					   atomic_long_read(&pc->sections[c - PS_CTX_EMERG][o]));
		for (o = 0; o < PS_NR_ORIG; o++)
			seq_printf(m, "panic_busy cpu=%u from=%s count=%ld\n",
				   cpu, ps_origin_names[o],
				   atomic_long_read(&pc->panic_busy[o]));
		seq_printf(m, "nmi cpu=%u sent=%ld handled=%ld late=%ld early=%ld\n",
			   cpu, atomic_long_read(&pc->nmi_sent),
			   atomic_long_read(&pc->nmi_handled),
			   atomic_long_read(&pc->nmi_late),
			   atomic_long_read(&pc->nmi_early));
	}
	if (ps_run.cfg.shapes & BIT(PS_SHAPE_STUTTER))
		seq_printf(m, "stutter bursts=%ld idles=%ld\n",
			   atomic_long_read(&ps_stutter_phases[0]),
			   atomic_long_read(&ps_stutter_phases[1]));

	for (k = 0; k < PS_NR_KIND; k++) {
		seq_printf(m, "takeover kind=%s", ps_kind_names[k]);
		for (s = 0; s < PS_NR_TS; s++)
			seq_printf(m, " %s=%ld", ps_to_stat_names[s],
				   atomic_long_read(&ps_to_stats[k][s]));
		seq_putc(m, '\n');
	}
	seq_puts(m, "takeover_target");
	for (s = 0; s < PS_NR_TG; s++)
		seq_printf(m, " %s=%ld", ps_target_stat_names[s],
			   atomic_long_read(&ps_target_stats[s]));
	seq_putc(m, '\n');

	timeouts = ps_handover_timeouts();
	if (timeouts < 0)
		seq_puts(m, "handover_timeouts=n/a\n");
	else
		seq_printf(m, "handover_timeouts=%ld\n", timeouts);

	ps_stats_hists(m);
	return 0;
}

static int ps_stats_open(struct inode *inode, struct file *file)
{
	return single_open(file, ps_stats_show, NULL);
}

static const struct file_operations ps_stats_fops = {
	.owner		= THIS_MODULE,
	.open		= ps_stats_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* ------------------------------------------------------------------ */

int ps_debugfs_init(void)
{
	unsigned int i;

	ps_dir = debugfs_create_dir(PS_NAME, NULL);
	if (IS_ERR(ps_dir))
		return PTR_ERR(ps_dir);

	debugfs_create_file("control", 0600, ps_dir, NULL, &ps_control_fops);
	debugfs_create_file("stats", 0400, ps_dir, NULL, &ps_stats_fops);
	for (i = 0; i < ps_nr_knobs; i++)
		debugfs_create_file(ps_knobs[i].name, 0600, ps_dir,
				    (void *)&ps_knobs[i], &ps_knob_fops);
	ps_takeover_debugfs_init(ps_dir);
	return 0;
}

void ps_debugfs_exit(void)
{
	debugfs_remove_recursive(ps_dir);
	ps_dir = NULL;
	ps_takeover_debugfs_exit();
}
