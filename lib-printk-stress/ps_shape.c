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
 *
 * Invariants: a shape changes when and what the writers print, never
 * the record format's rules (docs/interfaces.md section 3): each record
 * still begins with a header that names its producer and n and ends with
 * the crc of all before it (when not cut), and n still counts every
 * record passed to printk(). The stutter phase is read
 * locklessly; a record started in a burst phase is finished when the
 * phase ends.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/random.h>

#include "ps.h"

const char * const ps_shape_names[PS_NR_SHAPE] = {
	[PS_SHAPE_STUTTER]	= "stutter",
	[PS_SHAPE_TRUNCATE]	= "truncate",
	[PS_SHAPE_MULTILINE]	= "multiline",
};

#define PS_ML_LINES	4	/* multiline: up to this many lines */

/* Written by the stutter hrtimer only; READ_ONCE() in the producers */
bool ps_stutter_idle;
static struct hrtimer ps_stutter_timer;
static bool ps_stutter_started;
atomic_long_t ps_stutter_phases[2];	/* burst, idle phases begun */

/**
 * ps_stutter_phase() - the length of the next stutter phase
 *
 * Return: uniform in [stutter_ms/2, 3*stutter_ms/2] ms.
 */
static ktime_t ps_stutter_phase(void)
{
	unsigned int ms = ps_run.cfg.stutter_ms;

	return ms_to_ktime(ms / 2 + get_random_u32_below(ms + 1));
}

/**
 * ps_stutter_fn() - the stutter hrtimer: the next phase begins
 * @timer: ps_stutter_timer
 *
 * Return: HRTIMER_RESTART until the run stops (the last phase ends
 * as a burst phase, so nothing is left idle).
 */
static enum hrtimer_restart ps_stutter_fn(struct hrtimer *timer)
{
	bool idle = !READ_ONCE(ps_stutter_idle);

	if (ps_is_stopping()) {
		WRITE_ONCE(ps_stutter_idle, false);
		return HRTIMER_NORESTART;
	}
	WRITE_ONCE(ps_stutter_idle, idle);
	atomic_long_inc(&ps_stutter_phases[idle]);
	hrtimer_forward_now(timer, ps_stutter_phase());
	return HRTIMER_RESTART;
}

/**
 * ps_stutter_start() - begin with a burst phase, arm the stutter hrtimer
 */
static void ps_stutter_start(void)
{
	WRITE_ONCE(ps_stutter_idle, false);
	atomic_long_set(&ps_stutter_phases[0], 1);
	atomic_long_set(&ps_stutter_phases[1], 0);
	hrtimer_init(&ps_stutter_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	ps_stutter_timer.function = ps_stutter_fn;
	hrtimer_start(&ps_stutter_timer, ps_stutter_phase(),
		      HRTIMER_MODE_REL_HARD);
	ps_stutter_started = true;
}

/**
 * ps_stutter_stop() - cancel the stutter hrtimer, leave no idle phase
 */
static void ps_stutter_stop(void)
{
	if (ps_stutter_started)
		hrtimer_cancel(&ps_stutter_timer);
	ps_stutter_started = false;
	WRITE_ONCE(ps_stutter_idle, false);
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
