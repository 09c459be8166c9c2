// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress NMIs (x86 local APIC): the NMI producer and the NMIs of
 * the takeover injection. Linked when CONFIG_X86_LOCAL_APIC=y (Kbuild,
 * PS_HAVE_NMI); ps_nmi_none.c stands in for it otherwise.
 *
 * A driver hrtimer sends NMI IPIs to the NMI target CPUs; the module's
 * NMI_LOCAL handler only handles NMIs it requested (per-CPU pending
 * word), so other NMIs are not swallowed. It prints the CPU's NMI
 * records through ps_step() and runs the takeovers requested of it
 * (ps_nmi_takeovers()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>

#include "ps.h"

#include <asm/apic.h>
#include <asm/irq_vectors.h>
#include <asm/nmi.h>

/* ------------------------------------------------------------------ */
/* NMIs */

/*
 * ps_nmi_kick - request @bits from @cpu's NMI handler, send it an NMI
 *
 * Returns the requested bits that were already pending (merged into the
 * NMI in flight).
 *
 * Only the 0 -> non-zero transition sends an NMI; requests added while
 * one is pending are picked up by its handler (atomic_xchg() there is
 * ordered against this atomic_fetch_or()). Any NMI of @cpu runs the
 * handler, so one from another source can take the request before our
 * NMI arrives; ours then finds nothing to do. nmi_sent, counted after
 * the request and before the NMI, tells the handler when that happened
 * (see ps_nmi_handler()). Interrupts are off in between, so a sender in
 * task context is not preempted with its request published and its NMI
 * not sent.
 */
unsigned int ps_nmi_kick(unsigned int cpu, unsigned int bits)
{
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);
	unsigned long flags;
	unsigned int old;

	local_irq_save(flags);
	old = atomic_fetch_or(bits, &pc->nmi_pending);
	if (!old) {
		atomic_long_inc(&pc->nmi_sent);
		apic->send_IPI_mask(cpumask_of(cpu), NMI_VECTOR);
	}
	local_irq_restore(flags);
	return old & bits;
}

/* ------------------------------------------------------------------ */
/* NMI handler and NMI driver */

/**
 * ps_nmi_print() - serve a print request in the NMI handler
 * @pc: this CPU's state
 *
 * Prints this CPU's NMI records (and the sections due), then sets the
 * quiet time: the CPU gets no print request (ps_driver_fn()) for as long
 * as this one took. Measured with ps_clock_ns(), NMI-safe and
 * the same on every CPU, never with jiffies: they do not advance while
 * the CPU that keeps them is in NMI, so a flush of seconds there looked
 * like none. A request that came before the previous quiet time ended
 * is counted (nmi_early; none, as long as the clock goes forward).
 */
static void ps_nmi_print(struct ps_pcpu *pc)
{
	u64 start = ps_clock_ns(), end;

	if (start < (u64)atomic64_read(&pc->nmi_quiet_ns))
		atomic_long_inc(&pc->nmi_early);
	WRITE_ONCE(pc->nmi_printing, 1);
	ps_step(&ps_producers[PS_ORIG_NMI], &pc->nmi_writer);
	end = ps_clock_ns();
	atomic64_set(&pc->nmi_quiet_ns, end + (end - start));
	WRITE_ONCE(pc->nmi_printing, 0);
}

/*
 * ps_nmi_handler - NMI_LOCAL handler: serve the pending requests
 *
 * Every request (0 -> non-zero transition of nmi_pending) is taken by
 * exactly one run of this handler and has exactly one NMI of ours, sent
 * after it (ps_nmi_kick()). When the requests taken so far outnumber the
 * NMIs sent, this NMI came from another source before ours was even
 * sent: ours will find nothing pending and no NMI_LOCAL handler claims
 * it, so it is owed to ps_nmi_unknown().
 *
 * nmi_busy is set before the requests are taken: from a request until
 * the handler has set its quiet time, either nmi_pending holds it (a new
 * request merges into it) or nmi_busy is set (the driver sends none).
 */
static int ps_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	struct ps_pcpu *pc = this_cpu_ptr(ps_pcpu);
	unsigned int bits;
	u64 t0;

	WRITE_ONCE(pc->nmi_busy, 1);
	bits = atomic_xchg(&pc->nmi_pending, 0);	/* a full barrier */
	if (!bits) {
		WRITE_ONCE(pc->nmi_busy, 0);
		return NMI_DONE;	/* not ours */
	}
	t0 = local_clock();
	if (atomic_long_inc_return(&pc->nmi_handled) >
	    atomic_long_read(&pc->nmi_sent))
		atomic_inc(&pc->nmi_owed);

	if (bits & ~PS_NMI_PRINT)
		ps_nmi_takeovers(pc, bits);
	if ((bits & PS_NMI_PRINT) && !ps_is_stopping())
		ps_nmi_print(pc);
	ps_hist_add(&pc->hists->nmi_time, local_clock() - t0);
	WRITE_ONCE(pc->nmi_busy, 0);
	return NMI_HANDLED;
}

/*
 * ps_nmi_unknown - NMI_UNKNOWN handler: claim an NMI of ours that arrived
 * after another NMI had served its request (see ps_nmi_handler()), so
 * it is not reported as an NMI for an unknown reason.
 */
static int ps_nmi_unknown(unsigned int type, struct pt_regs *regs)
{
	struct ps_pcpu *pc = this_cpu_ptr(ps_pcpu);

	if (!atomic_add_unless(&pc->nmi_owed, -1, 0))
		return NMI_DONE;
	atomic_long_inc(&pc->nmi_late);
	return NMI_HANDLED;
}

int ps_nmi_register(void)
{
	int ret;

	ret = register_nmi_handler(NMI_UNKNOWN, ps_nmi_unknown, 0, PS_NAME);
	if (ret)
		return ret;
	ret = register_nmi_handler(NMI_LOCAL, ps_nmi_handler, 0, PS_NAME);
	if (ret)
		unregister_nmi_handler(NMI_UNKNOWN, PS_NAME);
	return ret;
}

/* How long stop waits for an NMI of ours after @cpu's handler ran */
#define PS_NMI_DRAIN_NS		NSEC_PER_SEC
/* ... and at most, from the start of the drain */
#define PS_NMI_DRAIN_MAX_NS	(60ULL * NSEC_PER_SEC)

/*
 * ps_nmi_drain - wait for @cpu's NMIs in flight
 *
 * Until none is pending or owed, or PS_NMI_DRAIN_NS after the CPU's
 * handler last ran: an NMI sent to a CPU whose handler flushes a
 * backlog for seconds stays latched until the handler returns, and
 * must find the handler still registered. Measured with the clock
 * source, not jiffies: jiffies do not advance while the CPU that keeps
 * them is in NMI. @start is when the drain began.
 */
static bool ps_nmi_drain(unsigned int cpu, u64 start)
{
	struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);
	u64 now = ps_clock_ns(), until = now + PS_NMI_DRAIN_NS;

	while ((atomic_read(&pc->nmi_pending) || atomic_read(&pc->nmi_owed)) &&
	       cpu_online(cpu) && now < until &&
	       now - start < PS_NMI_DRAIN_MAX_NS) {
		usleep_range(500, 1000);
		now = ps_clock_ns();
		if (READ_ONCE(pc->nmi_busy))
			until = now + PS_NMI_DRAIN_NS;
	}
	return !atomic_read(&pc->nmi_pending);
}

/*
 * Wait until every NMI the module sent has arrived (its handler cleared
 * the pending word, and no NMI is owed to the NMI_UNKNOWN handler), then
 * unregister; unregister_nmi_handler() waits for handlers still running.
 * Senders must be stopped already. An owed NMI that never comes (the
 * kernel swallowed it as the second of two back-to-back NMIs) only
 * costs the wait.
 */
void ps_nmi_drain_unregister(void)
{
	u64 start = ps_clock_ns();
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		if (!ps_nmi_drain(cpu, start))
			pr_warn("NMI to CPU %u not delivered\n", cpu);
	unregister_nmi_handler(NMI_LOCAL, PS_NAME);
	unregister_nmi_handler(NMI_UNKNOWN, PS_NAME);
	for_each_possible_cpu(cpu) {
		atomic_set(&per_cpu_ptr(ps_pcpu, cpu)->nmi_pending, 0);
		atomic_set(&per_cpu_ptr(ps_pcpu, cpu)->nmi_owed, 0);
	}
}

static enum hrtimer_restart ps_driver_fn(struct hrtimer *timer)
{
	u64 now = ps_clock_ns();
	unsigned int cpu;

	if (ps_is_stopping())
		return HRTIMER_NORESTART;
	/*
	 * Skip a CPU whose handler still prints: an atomic flush in NMI
	 * context can take longer than the period (a panic-priority
	 * section prints the whole backlog), and an NMI sent meanwhile
	 * would start the next one the moment the handler returns. Seen on
	 * i386: one CPU printed in NMI context back to back for 20 s, a
	 * soft lockup of a CPU waiting for its IPI and an RCU stall.
	 * And after a long one, leave the CPU outside NMI context for as
	 * long as the handler took: with a request the moment it returned,
	 * a CPU whose every NMI flushed a backlog for most of a second
	 * spent 99 % of its time in NMI context and, idle in between, never
	 * let RCU see a quiescent state (stalls on x86_64 and i386). The
	 * quiet time is on the clock (ps_nmi_print()), and no request goes
	 * to a handler that has taken its requests but not set the quiet
	 * time yet (nmi_busy, see ps_nmi_handler()).
	 */
	for_each_cpu(cpu, &ps_run.nmi_cpus) {
		struct ps_pcpu *pc = per_cpu_ptr(ps_pcpu, cpu);

		if (cpu_online(cpu) && !READ_ONCE(pc->nmi_busy) &&
		    !READ_ONCE(pc->nmi_printing) &&
		    now >= (u64)atomic64_read(&pc->nmi_quiet_ns))
			ps_nmi_kick(cpu, PS_NMI_PRINT);
	}
	hrtimer_forward_now(timer, ps_us(ps_run.cfg.nmi_period_us));
	return HRTIMER_RESTART;
}

/**
 * ps_driver_cpu() - the CPU the NMI driver runs on
 *
 * An online CPU outside nmi_cpus if there is one. An hrtimer fires only
 * while its CPU has interrupts on, so a driver on a target CPU would
 * send that CPU its NMIs only between its interrupts-off sections (a
 * console driver's port lock, a printer thread's record), never inside
 * one, where an NMI is the only context that can meet the owner.
 * Return: the CPU, or the current one when every CPU is a target.
 */
static unsigned int ps_driver_cpu(void)
{
	unsigned int cpu;

	for_each_online_cpu(cpu)
		if (!cpumask_test_cpu(cpu, &ps_run.nmi_cpus))
			return cpu;
	return raw_smp_processor_id();
}

static void ps_driver_arm(void *unused)
{
	hrtimer_start(&ps_run.driver, ps_us(ps_run.cfg.nmi_period_us),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

void ps_driver_start(void)
{
	unsigned int cpu = ps_driver_cpu();

	hrtimer_init(&ps_run.driver, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_PINNED_HARD);
	ps_run.driver.function = ps_driver_fn;
	/* a CPU gone offline since it was chosen: arm it here */
	if (smp_call_function_single(cpu, ps_driver_arm, NULL, 1))
		ps_driver_arm(NULL);
	ps_run.driver_started = true;
}
