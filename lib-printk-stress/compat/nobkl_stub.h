/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Build-test only (PS_NOBKL_STUB=1): the nobkl API of docs/interfaces.md
 * section 4 as the series declares it in <linux/console.h>, so the
 * CONFIG_PRINTK_NOBKL_DEBUG parts compile against a plain 6.1 tree.
 */
#ifndef _PS_NOBKL_STUB_H
#define _PS_NOBKL_STUB_H

enum cons_prio {
	CONS_PRIO_NONE = 0,
	CONS_PRIO_NORMAL,
	CONS_PRIO_EMERGENCY,
	CONS_PRIO_PANIC,
	CONS_PRIO_MAX,
};

/* The fields the module's nobkl_acquire probe reads */
struct cons_context {
	enum cons_prio		prio;
	unsigned int		thread		: 1;
};

enum cons_prio cons_atomic_enter(enum cons_prio prio);
void cons_atomic_exit(enum cons_prio prio, enum cons_prio prev_prio);

#endif
