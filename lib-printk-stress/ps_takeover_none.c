// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress without the nobkl series (nbcon, none): no takeover
 * injection and no probes on the series' tracepoints. The knobs refuse
 * every takeover kind (-EOPNOTSUPP), there is no fail_takeover parameter
 * and no fail_takeover/ directory; the takeover counters stay 0 and
 * handover_timeouts reads n/a.
 */
#include <linux/build_bug.h>

#include "ps.h"

/**
 * ps_tp_register() - no series tracepoints to attach to
 *
 * Return: 0, no probe attached.
 */
int ps_tp_register(void)
{
	BUILD_BUG_ON(PS_HAVE_NOBKL);
	return 0;
}

/**
 * ps_tp_unregister() - nothing to detach
 */
void ps_tp_unregister(void)
{
}

/**
 * ps_tp_start() - no probes to let record
 */
void ps_tp_start(void)
{
}

/**
 * ps_tp_stop() - no probes recording
 */
void ps_tp_stop(void)
{
}

/**
 * ps_handover_timeouts() - handover timeouts are not observable
 *
 * Return: -1.
 */
long ps_handover_timeouts(void)
{
	return -1;
}

/**
 * ps_owner_tracked() - the console owner is not tracked
 *
 * Return: false.
 */
bool ps_owner_tracked(void)
{
	return false;
}

/**
 * ps_handover_clear() - no handover timeout count to clear
 */
void ps_handover_clear(void)
{
}

/**
 * ps_takeover_init() - no fail_takeover to set up
 */
void ps_takeover_init(void)
{
}

/**
 * ps_takeover_setup() - no fail_takeover= parameter
 *
 * Return: 0.
 */
int ps_takeover_setup(void)
{
	return 0;
}

/**
 * ps_takeover_attr_loaded() - no fail_takeover to remember
 */
void ps_takeover_attr_loaded(void)
{
}

/**
 * ps_takeover_attr_reset() - no fail_takeover to reset
 */
void ps_takeover_attr_reset(void)
{
}

/**
 * ps_takeovers_armed() - takeovers are never injected
 * @cfg: unused
 *
 * Return: false.
 */
bool ps_takeovers_armed(const struct ps_cfg *cfg)
{
	return false;
}

/**
 * ps_takeover_format() - no fail_takeover in the banners
 * @buf: unused
 * @size: unused
 *
 * Return: 0.
 */
int ps_takeover_format(char *buf, size_t size)
{
	return 0;
}

/**
 * ps_takeover_debugfs_init() - no fail_takeover/ directory
 * @dir: unused
 */
void ps_takeover_debugfs_init(struct dentry *dir)
{
}

/**
 * ps_takeover_debugfs_exit() - no fail_takeover/ directory
 */
void ps_takeover_debugfs_exit(void)
{
}

/**
 * ps_maybe_takeover() - no takeover decision
 * @cpu: unused
 */
void ps_maybe_takeover(unsigned int cpu)
{
}

/**
 * ps_nmi_takeovers() - never called: no takeover kind is ever requested
 * @pc: unused
 * @bits: unused
 */
void ps_nmi_takeovers(struct ps_pcpu *pc, unsigned int bits)
{
}

/**
 * ps_printers_find() - no printer kthreads as owner hints
 */
void ps_printers_find(void)
{
	ps_run.nr_printers = 0;
}

/**
 * ps_printers_put() - no printer kthreads referenced
 */
void ps_printers_put(void)
{
}
