// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress on a kernel without a console design it can drive: no
 * emergency or panic sections (PS_CONS_CONTEXTS is 0, the knobs refuse
 * them), so these are never called.
 */
#include "ps.h"

/**
 * ps_cons_section_enter() - never called: PS_CONS_CONTEXTS is 0
 * @ctx: unused
 *
 * Return: 0.
 */
unsigned long ps_cons_section_enter(enum ps_ctx ctx)
{
	WARN_ON_ONCE(1);
	return 0;
}

/**
 * ps_cons_section_exit() - never called: PS_CONS_CONTEXTS is 0
 * @ctx: unused
 * @cookie: unused
 */
void ps_cons_section_exit(enum ps_ctx ctx, unsigned long cookie)
{
	WARN_ON_ONCE(1);
}
