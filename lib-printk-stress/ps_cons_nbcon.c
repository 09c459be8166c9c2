// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress on mainline nbcon with the 6.12 series' CONFIG_NBCON_DEBUG,
 * which exports the emergency sections: nbcon_cpu_emergency_enter() and
 * nbcon_cpu_emergency_exit(). Inside one, printk() flushes the nbcon
 * consoles atomically at emergency priority, taking a console over from
 * its printer thread when it is in a safe state. Panic priority belongs
 * to the CPU in panic() alone: PS_CONS_CONTEXTS has no panic sections.
 */
#include "ps.h"

/**
 * ps_cons_section_enter() - open an emergency section on this CPU
 * @ctx: PS_CTX_EMERG
 *
 * Return: 0 (nbcon sections nest by a per-CPU count).
 */
unsigned long ps_cons_section_enter(enum ps_ctx ctx)
{
	BUILD_BUG_ON(NBCON_PRIO_EMERGENCY != PS_PRIO_EMERG ||
		     NBCON_PRIO_PANIC != PS_PRIO_PANIC);
	nbcon_cpu_emergency_enter();
	return 0;
}

/**
 * ps_cons_section_exit() - close the section ps_cons_section_enter() opened
 * @ctx: as at enter
 * @cookie: unused
 */
void ps_cons_section_exit(enum ps_ctx ctx, unsigned long cookie)
{
	nbcon_cpu_emergency_exit();
}
