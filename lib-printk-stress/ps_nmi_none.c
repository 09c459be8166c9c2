// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress without NMIs (no CONFIG_X86_LOCAL_APIC): the knobs refuse
 * the nmi context, the nmi origin and the NMI takeover kinds
 * (-EOPNOTSUPP), so no run needs the NMI handler or the NMI driver.
 */
#include <linux/bug.h>
#include <linux/errno.h>

#include "ps.h"

/**
 * ps_nmi_kick() - never called: no NMI takeover kind is ever enabled
 * @cpu: unused
 * @bits: unused
 *
 * Return: 0.
 */
unsigned int ps_nmi_kick(unsigned int cpu, unsigned int bits)
{
	WARN_ON_ONCE(1);
	return 0;
}

/**
 * ps_nmi_register() - no NMI handler to register
 *
 * Return: -EOPNOTSUPP.
 */
int ps_nmi_register(void)
{
	BUILD_BUG_ON(PS_HAVE_NMI);
	return -EOPNOTSUPP;
}

/**
 * ps_nmi_drain_unregister() - no NMI handler to unregister
 */
void ps_nmi_drain_unregister(void)
{
}

/**
 * ps_driver_start() - no NMI driver to start
 */
void ps_driver_start(void)
{
}
