/* SPDX-License-Identifier: GPL-2.0 */
/*
 * printk_stress - in-kernel printk stressor with hostile takeover injection
 *
 * Shared declarations of the module's parts:
 *   ps_main.c   module init/exit, run state, start/stop, banners
 *   ps_knobs.c  knob table, parsing, module parameters
 *   ps_record.c records, histograms, emergency/panic sections
 *   ps_prod.c   producers (task kthreads, hrtimers, NMIs): their table,
 *               their one iteration body, the takeover counters
 *   ps_nmi.c    the NMI handler, the NMI driver and ps_nmi_kick():
 *               linked by Kbuild with CONFIG_X86_LOCAL_APIC only,
 *               ps_nmi_none.c (stubs) otherwise
 *   ps_takeover.c takeover injection and the probes on the series'
 *               tracepoints: linked by Kbuild on the nobkl series only,
 *               ps_takeover_none.c (stubs) otherwise
 *   ps_cons_*.c the console design's emergency and panic sections: one
 *               of nobkl (the 6.1 series), nbcon (mainline, 6.12) or
 *               none, linked by Kbuild from the kernel's config
 *   ps_shape.c  load shapes (stutter, records at the line limit): their
 *               table
 *   ps_cont.c   records in fragments (the cont shape): pr_cont() from
 *               every context
 *   ps_check.c  end-of-run checks (SUCCESS/FAILURE line), stats lines
 *   ps_debugfs.c debugfs interface (control, knobs, stats)
 */
#ifndef _PRINTK_STRESS_H
#define _PRINTK_STRESS_H

#include <linux/atomic.h>
#include <linux/console.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/kcsan-checks.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/timekeeping.h>
#include <linux/types.h>

/*
 * The console design the module is built for, and what it lets the
 * module do. Kbuild links the one ps_cons_*.c of the design:
 *
 *   nobkl  the 6.1 series with CONFIG_PRINTK_NOBKL_DEBUG: emergency and
 *          panic-priority sections (cons_atomic_enter/exit()), hostile
 *          takeover injection (printk_nobkl_debug_takeover())
 *   nbcon  mainline with the 6.12 series' CONFIG_NBCON_DEBUG: emergency
 *          sections (nbcon_cpu_emergency_enter/exit()); panic priority
 *          belongs to the CPU in panic() alone, so no panic sections
 *   none   neither: task, softirq, hardirq and NMI producers only
 *
 * PS_CONS_CONTEXTS is a constant so that the knob table and the
 * defaults can be initialized with it.
 */
#define PS_CONS_NOBKL	(IS_ENABLED(CONFIG_PRINTK_NOBKL_DEBUG) && \
			 IS_ENABLED(CONFIG_FAULT_INJECTION))
#define PS_CONS_NBCON	(!PS_CONS_NOBKL && IS_ENABLED(CONFIG_NBCON_DEBUG))
#define PS_CONS_CONTEXTS (PS_CONS_NOBKL ? PS_CTX_ATOMIC_MASK :		\
			  PS_CONS_NBCON ? BIT(PS_CTX_EMERG) : 0)
#define PS_CONS_NAME	(PS_CONS_NOBKL ? "nobkl" : PS_CONS_NBCON ? "nbcon" : "none")

/* Console priorities, as both designs number them (BUILD_BUG_ON there). */
#define PS_PRIO_EMERG		2
#define PS_PRIO_PANIC		3

/*
 * The takeover injection needs the nobkl series (its debug takeover
 * and a fault_attr): Kbuild links ps_takeover.o when PS_HAVE_NOBKL is 1,
 * ps_takeover_none.o otherwise. PS_HAVE_NOBKL is for knob tables,
 * banners and ordinary if (), not for #if blocks in the .c files.
 */
#if PS_CONS_NOBKL
#define PS_HAVE_NOBKL 1
/* Exported by the series (docs/interfaces.md section 4). */
int printk_nobkl_debug_takeover(enum cons_prio prio);
#else
#define PS_HAVE_NOBKL 0
#endif

/*
 * NMIs need the x86 local APIC: Kbuild links ps_nmi.o when PS_HAVE_NMI
 * is 1, ps_nmi_none.o otherwise. Like PS_HAVE_NOBKL, for knob tables,
 * banners and ordinary if () only.
 */
#define PS_HAVE_NMI	IS_ENABLED(CONFIG_X86_LOCAL_APIC)

#define PS_NAME			"printk_stress"
#define PS_PAYLOAD_MAX		800
#define PS_HEADER_MAX		128	/* "pstress v=2 r=.. ... l=<len> " */
/*
 * The longest record text printk() stores (6.1's LOG_LINE_MAX, less the
 * terminating NUL and the two bytes of the level prefix that the records'
 * format string begins with); a longer one is cut there.
 */
#define PS_LOG_LINE_MAX		(1024 - (IS_ENABLED(CONFIG_PRINTK_CALLER) ? 48 : 32))
#define PS_TEXT_MAX		(PS_LOG_LINE_MAX - 3)
#define PS_CRC_LEN		11	/* " k=<crc32_hex8>" */
#define PS_RECORD_MAX		(PS_HEADER_MAX + PS_TEXT_MAX)
#define PS_RECORD_VERSION	2	/* v=<version> */
#define PS_MAX_THREADS		16	/* threads_per_cpu */
/*
 * Histograms of durations in ns (struct ps_hist): log-linear, each power
 * of two from 2^PS_HIST_SUB_BITS ns on split into PS_HIST_SUB equal
 * buckets, one bucket per ns below 2 * PS_HIST_SUB ns, up to
 * 2^PS_HIST_TOP_BITS ns (~69 s); the last bucket, PS_HIST_OVERFLOW, holds
 * all longer ones. ps_hist_bucket() has the bucket bounds.
 */
#define PS_HIST_SUB_BITS	5
#define PS_HIST_SUB		BIT(PS_HIST_SUB_BITS)		/* 32 */
#define PS_HIST_TOP_BITS	36
#define PS_HIST_OVERFLOW	((PS_HIST_TOP_BITS - PS_HIST_SUB_BITS + 1) * \
				 PS_HIST_SUB)			/* 1024 */
#define PS_HIST_BUCKETS		(PS_HIST_OVERFLOW + 1)
#define PS_MAX_PRINTERS		8
#define PS_NR_PRIO		4	/* enum cons_prio without CONS_PRIO_MAX */
#define PS_NR_LEVELS		4	/* interrupt_context_level(): 0 .. 3 */
/* Printer kthreads of the series are named "pr/<console><index>". */
#define PS_PRINTER_PREFIX	"pr/"

/* Record contexts, as printed in x=<ctx> (docs/interfaces.md section 3) */
enum ps_ctx {
	PS_CTX_TASK,
	PS_CTX_HARDIRQ,
	PS_CTX_NMI,
	PS_CTX_EMERG,
	PS_CTX_PANIC,
	PS_CTX_SOFTIRQ,		/* the CPU's softirq hrtimer */
	PS_CTX_DEFERRED,	/* printk_deferred() from a task kthread */
	PS_NR_CTX
};

#define PS_CTX_ATOMIC_MASK	(BIT(PS_CTX_EMERG) | BIT(PS_CTX_PANIC))

/* Load shapes (ps_shape.c), as named in the shapes knob */
enum ps_shape {
	PS_SHAPE_STUTTER,	/* idle/burst phases of random length */
	PS_SHAPE_TRUNCATE,	/* records at the ringbuffer's line limit */
	PS_SHAPE_MULTILINE,	/* records of several lines */
	PS_SHAPE_CONT,		/* records in fragments, pr_cont() (ps_cont.c) */
	PS_NR_SHAPE
};

/* Where emergency/panic sections and takeover decisions run from */
enum ps_origin {
	PS_ORIG_TASK,
	PS_ORIG_HARDIRQ,
	PS_ORIG_NMI,
	PS_ORIG_SOFTIRQ,
	PS_NR_ORIG
};

/* Hostile takeover kinds */
enum ps_kind {
	PS_TO_EMERG_REMOTE,
	PS_TO_PANIC_REMOTE,
	PS_TO_EMERG_NMI,
	PS_TO_PANIC_NMI,
	PS_NR_KIND
};

#define PS_KIND_NMI_MASK	(BIT(PS_TO_EMERG_NMI) | BIT(PS_TO_PANIC_NMI))

/* The how argument of the nobkl_acquire event (docs/interfaces.md) */
enum ps_acq {
	PS_ACQ_DIRECT,
	PS_ACQ_HANDOVER,
	PS_ACQ_HOSTILE,
	PS_NR_ACQ
};

/*
 * Writers: the contexts of one CPU that print records, each one record
 * after the other (w=<writer> in a record). A producer (run, cpu, ctx,
 * writer) therefore has a single writer, and its records reach the
 * ringbuffer in n order. Task kthread i of a CPU is writer i.
 */
enum {
	PS_W_HARDIRQ = PS_MAX_THREADS,	/* the CPU's hrtimer */
	PS_W_NMI,			/* the CPU's NMI handler */
	PS_W_SOFTIRQ,			/* the CPU's softirq hrtimer */
	PS_NR_WRITERS
};

struct ps_writer {
	unsigned int	cpu;
	unsigned int	id;		/* task kthread index, PS_W_* */
	unsigned long	iter;		/* producer iterations (sections) */
	char		name[8];	/* task<i>, hardirq, nmi */
	char		rec[PS_RECORD_MAX];
};

extern const char * const ps_ctx_names[PS_NR_CTX];
extern const char * const ps_origin_names[PS_NR_ORIG];
extern const char * const ps_kind_names[PS_NR_KIND];
extern const char * const ps_shape_names[PS_NR_SHAPE];

/*
 * The invariants the module checks itself at the end of a run (the
 * SUCCESS/FAILURE line); break_check makes one of them fail on purpose.
 */
enum ps_check {
	PS_CHK_STORED,		/* every record attempted was stored */
	PS_CHK_NMI,		/* every NMI sent was handled */
	PS_CHK_TAKEOVERS,	/* every injection has exactly one outcome */
	PS_CHK_RECORDS,		/* every enabled CPU and context printed */
	PS_NR_CHECK
};

extern const char * const ps_check_names[PS_NR_CHECK];
/* The checks break_check can break */
#define PS_CHK_BREAKABLE	(BIT(PS_CHK_STORED) | BIT(PS_CHK_RECORDS))

/* The knob values. All are module parameters and debugfs files. */
struct ps_cfg {
	unsigned int	contexts;	/* BIT(enum ps_ctx) */
	unsigned int	atomic_from;	/* BIT(enum ps_origin) */
	unsigned int	takeover_kinds;	/* BIT(enum ps_kind) */
	bool		cpus_all;
	bool		nmi_cpus_all;
	struct cpumask	cpus;
	struct cpumask	nmi_cpus;
	unsigned int	threads_per_cpu;
	unsigned int	task_rate;
	unsigned int	burst;
	unsigned int	irq_period_us;
	unsigned int	irq_burst;
	unsigned int	nmi_period_us;
	unsigned int	nmi_burst;
	unsigned int	emerg_every;
	unsigned int	panic_every;
	unsigned int	atomic_burst;
	unsigned int	payload_len;
	unsigned int	level;
	unsigned int	duration_s;
	unsigned int	stats_interval_s;
	unsigned int	shapes;		/* BIT(enum ps_shape) */
	unsigned int	stutter_ms;
	unsigned int	break_check;	/* BIT(enum ps_check), load time only */
};

/* ps_knobs.c */
enum ps_knob_type {
	PS_K_UINT,
	PS_K_SET,
	PS_K_CPUS,
};

struct ps_knob {
	const char		*name;
	enum ps_knob_type	type;
	size_t			off;		/* of the value in ps_cfg */
	size_t			off_all;	/* PS_K_CPUS: of the "all" flag */
	unsigned int		min;		/* PS_K_UINT */
	unsigned int		max;		/* PS_K_UINT */
	const char * const	*names;		/* PS_K_SET */
	unsigned int		nr_names;	/* PS_K_SET */
	unsigned int		unsupported;	/* PS_K_SET: bits this build lacks */
};

extern const struct ps_knob ps_knobs[];
extern const unsigned int ps_nr_knobs;
extern struct ps_cfg ps_cfg;		/* current knob values */
extern struct ps_cfg ps_cfg_loaded;	/* values at module load (reset) */

int ps_knob_set(const struct ps_knob *k, struct ps_cfg *cfg, const char *buf);
int ps_knob_show(const struct ps_knob *k, const struct ps_cfg *cfg,
		 char *buf, size_t size);
int ps_cfg_format(const struct ps_cfg *cfg, char *buf, size_t size);
extern const struct ps_knob ps_break_check_knob;

/* ps_main.c: state, all protected by ps_mutex */
extern struct mutex ps_mutex;
extern bool ps_running;
extern bool ps_stopping;		/* READ_ONCE() in producers */
extern atomic64_t ps_deadline_ns;	/* the running run's end (ps_clock_ns()), S64_MAX: none */

struct ps_thread;

struct ps_run {
	unsigned int		id;
	struct ps_cfg		cfg;		/* snapshot taken at start */
	struct cpumask		cpus;		/* effective producer CPUs */
	struct cpumask		nmi_cpus;	/* effective NMI targets */
	struct cpumask		timer_cpus;	/* hrtimers started on */
	struct cpumask		stimer_cpus;	/* softirq hrtimers started on */
	struct ps_thread	**threads;
	unsigned int		nr_threads;
	bool			driver_started;
	bool			nmi_registered;
	struct hrtimer		driver;		/* sends NMIs */
	struct task_struct	*printers[PS_MAX_PRINTERS];
	unsigned int		nr_printers;
	u64			start_ns;
	u64			stop_ns;
	u64			deadline_ns;
	const char		*stop_reason;
	const char		*result;	/* SUCCESS, FAILURE, none */
};

extern struct ps_run ps_run;
extern unsigned int ps_run_id;

int ps_start(void);
void ps_stop(const char *reason);
void ps_reset(void);

/**
 * ps_clock_ns() - the NMI-safe monotonic clock, the same on every CPU
 *
 * ktime_get_mono_fast_ns() reads the timekeeper's latch: the reader
 * retries when an update changed the latch under it, so its accesses
 * race with the update by design. 6.1's latch reader does not tell KCSAN
 * (later kernels annotate it), so KCSAN does not watch this read: any
 * report there would be about the timekeeping code, not the stressor.
 * jiffies would not do in NMI context: they stand still while the CPU
 * that keeps them is in NMI.
 *
 * Return: nanoseconds of CLOCK_MONOTONIC.
 */
static inline u64 ps_clock_ns(void)
{
	u64 now;

	kcsan_disable_current();
	now = ktime_get_mono_fast_ns();
	kcsan_enable_current();
	return now;
}

/*
 * Producers stop at the run's deadline by themselves, not only when the
 * auto-stop work tears the run down: that work waits for a timer of one
 * CPU, and a CPU kept in an atomic console flush, from hardirq context,
 * by the records the other CPUs go on storing never runs it. Once they
 * stop storing, the flush ends and the work runs. The deadline is an
 * atomic64_t so that a 32bit CPU never reads half of an old one.
 */
static inline bool ps_is_stopping(void)
{
	return READ_ONCE(ps_stopping) ||
	       ps_clock_ns() >= (u64)atomic64_read(&ps_deadline_ns);
}

/* ps_record.c */
__printf(1, 2) int ps_printk(const char *fmt, ...);
__printf(2, 3) int ps_printk_ctx(enum ps_ctx ctx, const char *fmt, ...);

/*
 * A log-linear histogram of durations with its maximum (see
 * PS_HIST_SUB_BITS); updated from any context including NMI, so only
 * atomics (atomic64_t is cmpxchg8b on i386, NMI-safe). The counts are
 * 32 bits: a bucket of one CPU would need 2^32 calls within a run of at
 * most 3600 s (duration_s), over a million a second, and one printk() of
 * a record, with its formatting, takes longer than a microsecond.
 */
struct ps_hist {
	atomic64_t	max_ns;
	atomic_t	b[PS_HIST_BUCKETS];	/* see ps_hist_bucket() */
};

/*
 * A CPU's histograms, 12 of 4112 bytes: about 48 KiB, too large for the
 * per-CPU allocator (32 KiB at most), so each CPU has its own allocation
 * (ps_hists_alloc()), reached through its struct ps_pcpu.
 */
struct ps_hists {
	struct ps_hist	lat[PS_NR_CTX];		/* printk() calls */
	struct ps_hist	nmi_time;		/* NMI handler, requests served */
	struct ps_hist	to_time[PS_NR_KIND];	/* takeover calls */
};

unsigned int ps_hist_bucket(u64 ns);
u64 ps_hist_lower(unsigned int b);
void ps_hist_add(struct ps_hist *h, u64 ns);
void ps_hist_clear(struct ps_hist *h);
int ps_hists_alloc(void);
void ps_hists_free(void);

/* One producer's records in fragments (the cont shape, ps_cont.c) */
struct ps_cont_stats {
	atomic_long_t	next;		/* next n; equals records begun */
	atomic_long_t	frags;		/* fragments passed to printk() */
	atomic_long_t	stored;		/* of them, printk() returned > 0 */
	atomic_long_t	refused;	/* of them, printk() returned 0 */
};

/* One producer's counters (written only by its writer) */
struct ps_prod_stats {
	atomic_long_t	next;		/* next n; equals records attempted */
	atomic_long_t	stored;		/* printk() returned > 0 */
	atomic_long_t	refused;	/* printk() returned 0: not stored */
	struct ps_cont_stats cont;	/* its records in fragments */
};

struct ps_pcpu {
	struct hrtimer		timer;
	struct hrtimer		stimer;		/* softirq expiry */
	atomic_t		nmi_pending;	/* PS_NMI_* requests */
	int			nmi_printing;	/* the handler prints now */
	int			nmi_busy;	/* the handler serves requests now */
	int			atomic_prio;	/* our section on this CPU */
	/*
	 * Our sections and takeovers running on this CPU, per priority:
	 * a takeover nested into one of them at its priority finds the
	 * CPU's write contexts of that priority in use.
	 */
	int			prio_held[PS_NR_PRIO];
	/*
	 * Per interrupt context level: the priority of our takeover
	 * running at that level (0: none), and the acquire kinds the
	 * nobkl_acquire probe saw it make (BIT(PS_ACQ_*)).
	 */
	int			to_prio[PS_NR_LEVELS];
	unsigned int		to_seen[PS_NR_LEVELS];
	atomic_t		kind_rr;
	struct ps_prod_stats	prod[PS_NR_WRITERS][PS_NR_CTX];
	struct ps_hists		*hists;		/* ps_hists_alloc() */
	atomic_long_t		sections[2][PS_NR_ORIG];
	atomic_long_t		panic_busy[PS_NR_ORIG];	/* by origin */
	unsigned long		task_iter_max;	/* of its kthreads, at stop */
	atomic_long_t		nmi_sent;	/* NMIs sent */
	atomic_long_t		nmi_handled;	/* requests served */
	atomic_t		nmi_owed;	/* NMIs of ours still to come */
	atomic_long_t		nmi_late;	/* claimed as NMI_UNKNOWN */
	atomic_long_t		nmi_early;	/* print requests in the quiet time */
	atomic64_t		nmi_quiet_ns;	/* mono fast ns: quiet time ends */
	struct ps_writer	irq_writer;
	struct ps_writer	nmi_writer;
	struct ps_writer	sirq_writer;
};

enum ps_to_stat {
	PS_TS_INJECTED,		/* decided by fail_takeover */
	PS_TS_DELIVERED,	/* NMI kinds: the NMI arrived */
	PS_TS_ON_OWNER,		/* NMI kinds: landed on a console owner */
	PS_TS_TAKEN,		/* a console taken over from its owner (hostile) */
	PS_TS_DIRECT,		/* a free console acquired, none taken over */
	PS_TS_UNTRACED,		/* acquired, how unknown: no acquire probe */
	PS_TS_REFUSED_POLICY,	/* none acquired, not nested (the owner's prio) */
	PS_TS_REFUSED_NESTED,	/* none acquired, nested into ours at that prio */
	PS_TS_DROPPED,		/* NMI kinds: target offline, or stopping */
	PS_TS_MERGED,		/* NMI kinds: same request already pending */
	PS_NR_TS
};

enum ps_target_stat {
	PS_TG_TRACED,		/* owner CPU seen by the nobkl_acquire probe */
	PS_TG_SECTION,		/* CPU inside a lower-prio section of ours */
	PS_TG_PRINTER,		/* CPU running a printer kthread */
	PS_TG_PRINTER_LAST,	/* CPU a printer kthread last ran on */
	PS_TG_FALLBACK,		/* no hint: an NMI target CPU */
	PS_NR_TG
};

extern struct ps_pcpu __percpu *ps_pcpu;
extern atomic_long_t ps_to_stats[PS_NR_KIND][PS_NR_TS];
extern atomic_long_t ps_target_stats[PS_NR_TG];
extern const char * const ps_to_stat_names[PS_NR_TS];
extern const char * const ps_target_stat_names[PS_NR_TG];

/* ps_record.c */
void ps_fill(char *buf, unsigned int len, u32 state);
void ps_emit_burst(struct ps_writer *w, enum ps_ctx ctx, unsigned int burst);
void ps_maybe_atomic(struct ps_writer *w, enum ps_origin orig);
/*
 * ps_cons_*.c: open and close a section of @ctx (PS_CTX_EMERG, or
 * PS_CTX_PANIC where PS_CONS_CONTEXTS has it) on this CPU, with
 * preemption disabled; what enter returns, exit gets back.
 */
unsigned long ps_cons_section_enter(enum ps_ctx ctx);
void ps_cons_section_exit(enum ps_ctx ctx, unsigned long cookie);
void ps_writer_init(struct ps_writer *w, unsigned int cpu, unsigned int id);
bool ps_writer_prints(unsigned int id, enum ps_ctx ctx);
int ps_writer_name(unsigned int id, char *buf, size_t size);
void ps_stats_sum(unsigned int cpu, enum ps_ctx ctx, long *attempted,
		  long *stored, long *refused);

/*
 * ps_prod.c: one entry per producer (enum ps_origin), like locktorture's
 * ops. A run prepares (may fail, before it is committed) and starts the
 * producers its knobs need, in table order, and stops all of them in
 * reverse order (stop is a no-op for one that did not start).
 */
struct ps_producer_ops {
	const char	*name;
	enum ps_origin	orig;
	unsigned int	ctxs;		/* BIT(enum ps_ctx): its own records */
	size_t		burst_off;	/* of its burst knob in ps_cfg */
	bool		decides_takeovers;
	bool		(*needed)(const struct ps_cfg *cfg);
	int		(*prepare)(const struct cpumask *cpus);	/* or NULL */
	void		(*start)(void);
	void		(*stop)(void);
};

extern const struct ps_producer_ops ps_producers[PS_NR_ORIG];
void ps_step(const struct ps_producer_ops *ops, struct ps_writer *w);

/* ps_pcpu.nmi_pending bits */
#define PS_NMI_PRINT		BIT(0)
#define PS_NMI_TO_SHIFT		8	/* + enum ps_kind: takeover request */

/* An hrtimer period in us, as the knobs give it */
static inline ktime_t ps_us(unsigned int us)
{
	return ns_to_ktime((u64)us * NSEC_PER_USEC);
}

void ps_prod_init(void);
void ps_stats_clear(void);
bool ps_need_threads(const struct ps_cfg *cfg);
bool ps_need_timers(const struct ps_cfg *cfg);
bool ps_need_stimers(const struct ps_cfg *cfg);
bool ps_need_driver(const struct ps_cfg *cfg);
bool ps_need_nmi(const struct ps_cfg *cfg);
int ps_threads_create(const struct cpumask *cpus);
void ps_threads_wake(void);
void ps_threads_stop(void);
void ps_timers_start(void);
void ps_timers_cancel(void);
void ps_stimers_start(void);
void ps_stimers_cancel(void);
void ps_driver_cancel(void);

/* ps_nmi.c with CONFIG_X86_LOCAL_APIC, ps_nmi_none.c (stubs) otherwise */
unsigned int ps_nmi_kick(unsigned int cpu, unsigned int bits);
int ps_nmi_register(void);
void ps_nmi_drain_unregister(void);
void ps_driver_start(void);

/*
 * ps_takeover.c on the nobkl series, ps_takeover_none.c otherwise (its
 * stubs: nothing injected, nothing probed, the knobs refuse the kinds)
 */
struct dentry;

void ps_takeover_init(void);
int ps_takeover_setup(void);
void ps_takeover_attr_loaded(void);
void ps_takeover_attr_reset(void);
bool ps_takeovers_armed(const struct ps_cfg *cfg);
int ps_takeover_format(char *buf, size_t size);
void ps_takeover_debugfs_init(struct dentry *dir);
void ps_takeover_debugfs_exit(void);
void ps_maybe_takeover(unsigned int cpu);
void ps_nmi_takeovers(struct ps_pcpu *pc, unsigned int bits);
void ps_printers_find(void);
void ps_printers_put(void);
int ps_tp_register(void);		/* at load: attach the probes */
void ps_tp_unregister(void);		/* at unload: detach them */
void ps_tp_start(void);			/* a run starts: they record */
void ps_tp_stop(void);			/* the run ends: they stop */
long ps_handover_timeouts(void);	/* < 0: not observable */
bool ps_owner_tracked(void);
void ps_handover_clear(void);

/*
 * ps_shape.c: one entry per load shape (enum ps_shape). A run starts the
 * shapes of its shapes knob after the producers and stops all of them
 * first (stop is a no-op for one that did not start); payload_len, when
 * set, gives a record's payload length instead of the knob (0: not for
 * this record); payload,
 * when set, changes the generated payload before the crc covers it.
 */
struct ps_shape_ops {
	const char	*name;
	void		(*start)(void);				/* or NULL */
	void		(*stop)(void);				/* or NULL */
	unsigned int	(*payload_len)(unsigned long n, unsigned int hlen);
	void		(*payload)(char *buf, unsigned int len, unsigned long n);
};

extern const struct ps_shape_ops ps_shapes[PS_NR_SHAPE];
bool ps_stutter_idle(void);
extern atomic_long_t ps_stutter_phases[2];	/* burst, idle */
void ps_shapes_start(void);
void ps_shapes_stop(void);
unsigned int ps_payload_len(unsigned long n, unsigned int hlen);
void ps_shape_payload(char *buf, unsigned int len, unsigned long n);

/* In a stutter idle phase no producer prints (lockless, any context) */
static inline bool ps_shape_idle(void)
{
	return ps_stutter_idle();
}

/* ps_cont.c: records in fragments */
bool ps_cont_turn(struct ps_writer *w, enum ps_ctx ctx);
void ps_cont_emit(struct ps_writer *w, enum ps_ctx ctx);
void ps_cont_clear(struct ps_cont_stats *cs);

/* ps_check.c */
int ps_summary_format(char *buf, size_t size);
void ps_stats_line(void);
bool ps_result_line(void);

/* ps_debugfs.c */
int ps_debugfs_init(void);
void ps_debugfs_exit(void);

#endif /* _PRINTK_STRESS_H */
