// SPDX-License-Identifier: GPL-2.0
/*
 * printk_stress load shapes: how the producers' load looks over time and
 * what a record looks like, on top of the producers' own rates.
 *
 * One table, ps_shapes[] (like the producers' table), one row per shape
 * of the shapes knob:
 *
 * - stutter:  the whole load alternates between burst phases (the
 *             producers print) and idle phases (no producer prints, no
 *             section, no takeover decision), each phase of a random
 *             length, uniform in [stutter_ms/2, 3*stutter_ms/2], so the
 *             phases do not lock onto the producers' periods (torture.c's
 *             stutter, with jitter). A run starts with a burst phase.
 * - truncate: records at the ringbuffer's line limit: record n, n even,
 *             has a whole text (up to and including its k=<crc>) of
 *             PS_TEXT_MAX - 2 + n / 2 % 5 characters, so of five such
 *             records two fit with room to spare, one exactly, and two
 *             are cut by printk() after PS_TEXT_MAX characters (one and
 *             two characters of the crc lost); odd records keep
 *             payload_len. The analysis accepts a cut record as such: its
 *             header regenerates the whole record, of which the stored
 *             text is the first PS_TEXT_MAX characters.
 * - multiline: record n has 1 + n % PS_ML_LINES lines: line breaks in
 *             place of the payload characters at len * i / lines (i = 1
 *             .. lines - 1); the crc covers the text with them. The
 *             console prints each line with its own prefix, all in one
 *             buffer of CONSOLE_LOG_MAX bytes, and leaves out the lines
 *             that do not fit: so not for the records of truncate.
 * - cont:     every other record of a producer is printed in fragments,
 *             the first with printk() and the rest with KERN_CONT, as
 *             pr_cont() does (ps_cont.c); the other shapes change whole
 *             records only.
 *
 * Invariants: a shape changes when and what the writers print, never
 * the record format's rules (docs/interfaces.md section 3): each record
 * still begins with a header that names its producer and n and ends with
 * the crc of all before it (when not cut), and n still counts every
 * record passed to printk(). The stutter phase is read
 * locklessly, from the clock; a record started in a burst phase is
 * finished when the phase ends.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/random.h>

#include "ps.h"

const char * const ps_shape_names[PS_NR_SHAPE] = {
	[PS_SHAPE_STUTTER]	= "stutter",
	[PS_SHAPE_TRUNCATE]	= "truncate",
	[PS_SHAPE_MULTILINE]	= "multiline",
	[PS_SHAPE_CONT]		= "cont",
};

#define PS_ML_LINES	4	/* multiline: up to this many lines */

/*
 * The stutter phases are a function of the clock, not the work of a
 * timer: phase i begins at i * stutter_ms + ps_stutter_jitter(i) after
 * the shape started, where the jitter of phase 0 is 0 and any other's
 * lies in [-stutter_ms/4, stutter_ms/4]. So each phase lasts between
 * stutter_ms/2 and 3*stutter_ms/2, and every producer that reads the
 * clock, in any context, knows the phase it is in. A timer could not
 * promise that: an atomic flush with interrupts disabled on the timer's
 * CPU holds its expiry back for as long as the flush prints, and the
 * phases stopped switching under exactly the load they shape.
 */
static u64 ps_stutter_begin_ns;
static u32 ps_stutter_seed;
static bool ps_stutter_on;		/* acquired by the producers */
atomic_long_t ps_stutter_phases[2];	/* burst, idle phases begun */

/**
 * ps_stutter_jitter() - how far the start of a phase is off its grid point
 * @i: the phase
 * @period: stutter_ms in ns
 *
 * Return: 0 for phase 0, else a value in [-@period/4, @period/4] that
 * depends on @i and the run's seed only.
 */
static s64 ps_stutter_jitter(u64 i, u64 period)
{
	u64 span;
	u32 h;

	if (!i)
		return 0;
	h = hash_64(i ^ ps_stutter_seed, 32);
	/* in us, so that the product stays in 64 bits up to 60 s */
	span = div_u64(period / 2, NSEC_PER_USEC) + 1;
	return (s64)(((u64)h * span) >> 32) * NSEC_PER_USEC - (s64)(period / 4);
}

/**
 * ps_stutter_phase_at() - the stutter phase a time falls in
 * @t: a time of CLOCK_MONOTONIC in ns, not before the shape started
 *
 * Return: the phase, counted from 0 (a burst phase); odd phases are idle.
 * The jitter is below half a period, so the grid cell of @t is off the
 * phase by one at most.
 */
static u64 ps_stutter_phase_at(u64 t)
{
	u64 period = (u64)ps_run.cfg.stutter_ms * NSEC_PER_MSEC;
	u64 d = t - ps_stutter_begin_ns;
	u64 i;

	/* another CPU's clock may read a little behind the start */
	if ((s64)d < 0)
		return 0;
	i = div64_u64(d, period);
	if ((s64)d < (s64)(i * period) + ps_stutter_jitter(i, period))
		return i - 1;
	if ((s64)d >= (s64)((i + 1) * period) + ps_stutter_jitter(i + 1, period))
		return i + 1;
	return i;
}

/**
 * ps_stutter_idle() - whether the producers are in an idle phase now
 *
 * Lockless and NMI-safe (the NMI-safe monotonic clock, no shared write).
 *
 * Return: true in an idle phase of a running stutter shape.
 */
bool ps_stutter_idle(void)
{
	/* pairs with ps_stutter_start(): the start and seed are set */
	if (!smp_load_acquire(&ps_stutter_on))
		return false;
	return ps_stutter_phase_at(ps_clock_ns()) & 1;
}

/**
 * ps_stutter_start() - begin with a burst phase now
 */
static void ps_stutter_start(void)
{
	ps_stutter_begin_ns = ps_clock_ns();
	ps_stutter_seed = get_random_u32();
	atomic_long_set(&ps_stutter_phases[0], 1);
	atomic_long_set(&ps_stutter_phases[1], 0);
	/* the producers read the phase's parameters after the flag */
	smp_store_release(&ps_stutter_on, true);
}

/**
 * ps_stutter_stop() - leave no idle phase; count the phases the run began
 *
 * The phases begun are those that started before the run's deadline, or
 * before now when the run stops early: the same for every reader of the
 * clock, whatever the load did to the timers.
 */
static void ps_stutter_stop(void)
{
	u64 end, last;

	if (!READ_ONCE(ps_stutter_on))
		return;
	WRITE_ONCE(ps_stutter_on, false);
	end = min(ps_clock_ns(), ps_run.deadline_ns);
	last = end > ps_stutter_begin_ns ? ps_stutter_phase_at(end) : 0;
	atomic_long_set(&ps_stutter_phases[0], last / 2 + 1);
	atomic_long_set(&ps_stutter_phases[1], (last + 1) / 2);
}

/**
 * ps_truncate_len() - the payload length of a record at the line limit
 * @n: the record's n
 * @hlen: the length its header has with a three-digit l=
 *
 * Return: 0 for an odd @n (not a record of truncate, when the shape is
 * on); else the payload length that makes the whole record text (header,
 * payload, " k=<crc>") PS_TEXT_MAX - 2 + @n / 2 % 5 characters long; it
 * has three digits, so the header keeps @hlen.
 */
static unsigned int ps_truncate_len(unsigned long n, unsigned int hlen)
{
	if (!(ps_run.cfg.shapes & BIT(PS_SHAPE_TRUNCATE)) || (n & 1))
		return 0;
	return PS_TEXT_MAX - 2 + n / 2 % 5 - hlen - PS_CRC_LEN;
}

/**
 * ps_multiline_breaks() - the line breaks of a multi-line record
 * @buf: its payload, generated
 * @len: the payload length
 * @n: the record's n
 *
 * Replaces the characters at @len * i / lines (i = 1 .. lines - 1,
 * lines = 1 + @n % PS_ML_LINES) with line breaks; a payload shorter
 * than two characters a line, and a record of truncate, stays one line.
 */
static void ps_multiline_breaks(char *buf, unsigned int len, unsigned long n)
{
	unsigned int lines = 1 + n % PS_ML_LINES, i;

	if (len < 2 * lines || ps_truncate_len(n, 0))
		return;
	for (i = 1; i < lines; i++)
		buf[len * i / lines] = '\n';
}

const struct ps_shape_ops ps_shapes[PS_NR_SHAPE] = {
	[PS_SHAPE_STUTTER] = {
		.name = "stutter",
		.start = ps_stutter_start, .stop = ps_stutter_stop,
	},
	[PS_SHAPE_TRUNCATE] = {
		.name = "truncate",
		.payload_len = ps_truncate_len,
	},
	[PS_SHAPE_MULTILINE] = {
		.name = "multiline",
		.payload = ps_multiline_breaks,
	},
	/* the producers print every other record in fragments (ps_cont.c) */
	[PS_SHAPE_CONT] = {
		.name = "cont",
	},
};

/**
 * ps_shapes_start() - start the shapes of the run's shapes knob
 */
void ps_shapes_start(void)
{
	unsigned int s;

	for (s = 0; s < PS_NR_SHAPE; s++)
		if ((ps_run.cfg.shapes & BIT(s)) && ps_shapes[s].start)
			ps_shapes[s].start();
}

/**
 * ps_shapes_stop() - stop every shape, in reverse table order (a no-op
 * for one that did not start)
 */
void ps_shapes_stop(void)
{
	unsigned int s;

	for (s = PS_NR_SHAPE; s-- > 0;)
		if (ps_shapes[s].stop)
			ps_shapes[s].stop();
}

/**
 * ps_payload_len() - the payload length of a record
 * @n: the record's n
 * @hlen: the length of its header with a three-digit l=
 *
 * Return: payload_len, unless a shape of the run sets the length of
 * this record (its payload_len gives one, not 0).
 */
unsigned int ps_payload_len(unsigned long n, unsigned int hlen)
{
	unsigned int s, len;

	for (s = 0; s < PS_NR_SHAPE; s++) {
		if (!(ps_run.cfg.shapes & BIT(s)) || !ps_shapes[s].payload_len)
			continue;
		len = ps_shapes[s].payload_len(n, hlen);
		if (len)
			return len;
	}
	return ps_run.cfg.payload_len;
}

/**
 * ps_shape_payload() - let the run's shapes change a generated payload
 * @buf: the payload
 * @len: its length
 * @n: the record's n
 */
void ps_shape_payload(char *buf, unsigned int len, unsigned long n)
{
	unsigned int s;

	for (s = 0; s < PS_NR_SHAPE; s++)
		if ((ps_run.cfg.shapes & BIT(s)) && ps_shapes[s].payload)
			ps_shapes[s].payload(buf, len, n);
}
