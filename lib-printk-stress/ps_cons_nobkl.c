// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress on the 6.1 series (CONFIG_PRINTK_NOBKL_DEBUG): emergency
 * and panic-priority sections are the series' cons_atomic_enter() and
 * cons_atomic_exit(), whose outermost exit flushes the consoles.
 */
#include "ps.h"

static enum cons_prio ps_cons_prio(enum ps_ctx ctx)
{
	BUILD_BUG_ON(CONS_PRIO_EMERGENCY != PS_PRIO_EMERG ||
		     CONS_PRIO_PANIC != PS_PRIO_PANIC ||
		     CONS_PRIO_MAX != PS_NR_PRIO);
	return ctx == PS_CTX_PANIC ? CONS_PRIO_PANIC : CONS_PRIO_EMERGENCY;
}

/**
 * ps_cons_section_enter() - raise this CPU's printing priority for @ctx
 * @ctx: PS_CTX_EMERG or PS_CTX_PANIC
 *
 * Return: the priority to restore at exit.
 */
unsigned long ps_cons_section_enter(enum ps_ctx ctx)
{
	return cons_atomic_enter(ps_cons_prio(ctx));
}

/**
 * ps_cons_section_exit() - restore the priority ps_cons_section_enter() raised
 * @ctx: as at enter
 * @cookie: what enter returned
 */
void ps_cons_section_exit(enum ps_ctx ctx, unsigned long cookie)
{
	cons_atomic_exit(ps_cons_prio(ctx), (enum cons_prio)cookie);
}
