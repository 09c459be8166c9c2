// SPDX-License-Identifier: GPL-2.0
/*
 * _datreader: the trace.dat reader of the analysis, in C.
 *
 * The analysis reads a trace.dat through libtracecmd and libtraceevent,
 * the libraries trace-cmd itself is built on.  A real run holds millions
 * of records; read from Python through ctypes, each one costs a few
 * microseconds of interpreter time before the checker sees it, as much
 * as all the checking.  This module does the per-record work in C and
 * hands the checker ready-made items:
 *
 *   - libtracecmd merges the CPUs' records in timestamp order
 *     (tracecmd_iterate_events(), the order `trace-cmd report` prints);
 *   - records of other events are counted and skipped;
 *   - a printk nobkl_* record (or a 6.12 nbcon_* one, translated by the
 *     Python side) becomes an Event(lineno, name, cpu, ts,
 *     fields) tuple, fields being the strings `trace-cmd report` prints;
 *     a nobkl_store (6.12: vprintk_store) record (most of them) a
 *     Store(lineno, cpu, ts, seq,
 *     len, level, caller, text) tuple with the numbers as ints.
 *     Numeric fields and the text are read from the raw record.  The
 *     other fields (console name, symbolic prio/ctx/how/where, CPU
 *     numbers, caller) are rendered once per distinct raw value by the
 *     Python side (libtraceevent's own formatting, parsed by the text
 *     reader's parser) and copied from a cache after that;
 *   - a record after lost events (missed_events) is preceded by a call of
 *     the drop callback, where `trace-cmd report` prints
 *     "CPU:N [M EVENTS DROPPED]";
 *   - a nobkl record that is shorter than its fields, one of fixed size
 *     that is 8 bytes or more longer (a flipped bit in its type), one
 *     whose fields do not parse, or a nobkl_store whose level is no
 *     printk level (0-7) or whose text is not one NUL-terminated string
 *     of its length, goes to the damage callback (the trace lost that
 *     event);
 *   - each CPU's last timestamp read is returned, so the caller can tell
 *     a CPU whose reading ended before the file's last record of it.
 *
 * Line numbers are those the items have in `trace-cmd report` output:
 * line 1 is the "cpus=N" header, then one line per record and per drop
 * marker.  Timestamps are microseconds, rounded, as the report prints
 * them (libtraceevent's "%6.1000d"), as a float of seconds.
 *
 * analysis/tracedat.py builds this file on first use and wraps it; the
 * Python side owns everything that is not per record.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <string.h>
#include <trace-cmd.h>

/* exported by libtracecmd.so.1 3.1.6, not declared in its trace-cmd.h */
int tracecmd_cpus(struct tracecmd_input *handle);
char *tracecmd_get_cpustats(struct tracecmd_input *handle);
struct tep_record *tracecmd_read_cpu_last(struct tracecmd_input *handle, int cpu);

#define MAX_FIELDS	16
#define MAX_KEY		256	/* bytes of the rendered fields of one event */
#define CACHE_MAX	65536	/* templates kept per event type */

/* a numeric field, printed as a plain decimal number */
struct num_field {
	PyObject *name;
	int offset;
	int size;
	bool is_signed;
};

/* a field rendered by libtraceevent; its raw bytes are the cache key */
struct keyed_field {
	int offset;
	int size;
	bool is_string;		/* char array: the bytes after its NUL vary */
};

struct event_type {
	int id;
	PyObject *name;
	int nr_num;
	struct num_field num[MAX_FIELDS];
	int nr_keyed;
	struct keyed_field keyed[MAX_FIELDS];
	int key_size;
	int text_offset;	/* offset of the __data_loc word, or -1 */
	bool text_relative;
	int min_size;		/* the record must cover every field */
	PyObject *templates;	/* key bytes -> dict of the rendered fields */
	bool is_store;		/* nobkl_store: a Store, not an Event */
};

typedef struct {
	PyObject_HEAD
	struct tracecmd_input *handle;
	struct tep_handle *tep;
	struct event_type *types;
	int nr_types;
	struct event_type **by_id;	/* event id -> type, NULL for others */
	int max_id;
	struct tep_event *console;	/* printk:console, or NULL */
	PyObject *event_class;		/* analysis.traceparse.Event */
	PyObject *store_class;		/* analysis.traceparse.Store */
	PyObject *text_key;
	PyObject *caller_key;

	/* the state of one feed() */
	PyObject *sink;
	PyObject *on_drop;
	PyObject *on_damage;
	PyObject *render;
	unsigned long long *cpu_last;	/* each CPU's last record: raw ts + 1, 0: none */
	int nr_cpu_last;
	struct trace_seq seq;
	unsigned long long lineno;	/* the report line of the current record */
	unsigned long long events;
	unsigned long long other;
	unsigned long long first_ts;
	unsigned long long last_ts;
	bool any;
	unsigned long long last_usec;
	PyObject *last_ts_obj;
	unsigned long long test_missed_at;	/* tests: fake lost events */
	long long test_missed;
	bool failed;
} Reader;

/**
 * reader_add_type() - Learn the layout of one nobkl event type.
 * @self:	the reader
 * @name:	event name (system "printk")
 * @fields:	its fields in print order
 * @numeric:	the names of the fields printed as plain numbers
 * @optional:	the names of fields an older format may lack (then left
 *		out), or NULL
 *
 * Return: 0 on success (also when the trace lacks the event), -1 with a
 * Python exception set when the event's format is not the expected one.
 */
static int reader_add_type(Reader *self, PyObject *name, PyObject *fields,
			   PyObject *numeric, PyObject *optional)
{
	const char *cname = PyUnicode_AsUTF8(name);
	struct tep_event *ev;
	struct event_type *t;
	Py_ssize_t i, n;

	if (!cname)
		return -1;
	ev = tep_find_event_by_name(self->tep, "printk", cname);
	if (!ev)
		return 0;
	n = PyTuple_Size(fields);
	if (n < 0 || n > MAX_FIELDS) {
		PyErr_SetString(PyExc_ValueError, "bad field list");
		return -1;
	}
	t = &self->types[self->nr_types];
	memset(t, 0, sizeof(*t));
	t->id = ev->id;
	t->text_offset = -1;
	for (i = 0; i < n; i++) {
		PyObject *fname = PyTuple_GET_ITEM(fields, i);
		const char *fn = PyUnicode_AsUTF8(fname);
		struct tep_format_field *f;
		int is_num;

		if (!fn)
			return -1;
		/*
		 * The 6.12 events have no ctx field: their context is the
		 * common_flags every event has.
		 */
		f = strncmp(fn, "common_", 7) ? tep_find_field(ev, fn) :
						 tep_find_common_field(ev, fn);
		if (!f) {
			int opt = optional ? PySequence_Contains(optional, fname) : 0;

			if (opt < 0)
				return -1;
			if (opt)
				continue;
			PyErr_Format(PyExc_ValueError,
				     "event %s has no field %s (foreign tracepoint format)",
				     cname, fn);
			return -1;
		}
		if (f->offset + f->size > t->min_size)
			t->min_size = f->offset + f->size;
		if (!strcmp(fn, "text")) {
			if (!(f->flags & TEP_FIELD_IS_DYNAMIC) || f->size != 4) {
				PyErr_Format(PyExc_ValueError,
					     "%s.text is not a dynamic array", cname);
				return -1;
			}
			t->text_offset = f->offset;
			t->text_relative = f->flags & TEP_FIELD_IS_RELATIVE;
			continue;
		}
		is_num = PySequence_Contains(numeric, fname);
		if (is_num < 0)
			return -1;
		if (is_num) {
			struct num_field *nf = &t->num[t->nr_num++];

			if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8) {
				PyErr_Format(PyExc_ValueError, "%s.%s has size %d",
					     cname, fn, f->size);
				return -1;
			}
			nf->name = PyUnicode_InternFromString(fn);
			if (!nf->name)
				return -1;
			nf->offset = f->offset;
			nf->size = f->size;
			nf->is_signed = f->flags & TEP_FIELD_IS_SIGNED;
		} else {
			struct keyed_field *kf = &t->keyed[t->nr_keyed++];

			kf->offset = f->offset;
			kf->size = f->size;
			kf->is_string = f->flags & TEP_FIELD_IS_STRING;
			t->key_size += f->size;
		}
	}
	if (t->key_size > MAX_KEY) {
		PyErr_Format(PyExc_ValueError, "%s: rendered fields too large", cname);
		return -1;
	}
	t->templates = PyDict_New();
	if (!t->templates)
		return -1;
	/* a Store holds seq, len and level, in this order, and the caller */
	t->is_store = !strcmp(cname, "nobkl_store") || !strcmp(cname, "vprintk_store");
	if (t->is_store &&
	    (t->nr_num != 3 || strcmp(PyUnicode_AsUTF8(t->num[0].name), "seq") ||
	     strcmp(PyUnicode_AsUTF8(t->num[1].name), "len") ||
	     strcmp(PyUnicode_AsUTF8(t->num[2].name), "level") || t->text_offset < 0)) {
		PyErr_Format(PyExc_ValueError, "%s: fields not seq, len, level, caller, text",
			     cname);
		return -1;
	}
	Py_INCREF(name);
	t->name = name;
	self->nr_types++;
	return 0;
}

/**
 * reader_index_types() - Map event ids to the types found.
 * @self:	the reader
 *
 * Return: 0, or -1 with MemoryError set.
 */
static int reader_index_types(Reader *self)
{
	int i;

	self->max_id = -1;
	for (i = 0; i < self->nr_types; i++)
		if (self->types[i].id > self->max_id)
			self->max_id = self->types[i].id;
	if (self->max_id < 0)
		return 0;
	self->by_id = PyMem_Calloc(self->max_id + 1, sizeof(*self->by_id));
	if (!self->by_id) {
		PyErr_NoMemory();
		return -1;
	}
	for (i = 0; i < self->nr_types; i++)
		self->by_id[self->types[i].id] = &self->types[i];
	return 0;
}

/**
 * Reader_init() - Reader(path, event_fields, numeric, event_class, store_class[, optional]).
 * @self:	the reader
 * @args:	see above: the trace.dat, {event name: (field, ...)} of the
 *		printk events to read, the names of the numeric fields, the
 *		Event and Store tuple classes, and the names of the fields
 *		which an event's format may lack, for all events or as
 *		{event name: (field, ...)} (default none)
 * @kwds:	the same by name
 *
 * Return: 0, or -1 with OSError (the file cannot be opened) or ValueError
 * (an event's format is not the expected one) set.
 */
static int Reader_init(Reader *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"path", "event_fields", "numeric", "event_class",
				 "store_class", "optional", NULL};
	PyObject *path, *event_fields, *numeric, *event_class, *store_class, *key, *value;
	PyObject *optional = NULL;
	Py_ssize_t pos = 0;
	int ret = -1;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&O!OO!O!|O", kwlist,
					 PyUnicode_FSConverter, &path,
					 &PyDict_Type, &event_fields, &numeric,
					 &PyType_Type, &event_class,
					 &PyType_Type, &store_class, &optional))
		return -1;
	if (self->handle) {
		PyErr_SetString(PyExc_RuntimeError, "reader already open");
		goto out;
	}
	tracecmd_set_loglevel(TEP_LOG_NONE);
	tep_set_loglevel(TEP_LOG_NONE);
	self->handle = tracecmd_open(PyBytes_AS_STRING(path), 0);
	if (!self->handle) {
		PyErr_Format(PyExc_OSError,
			     "libtracecmd cannot open %s: truncated or not a trace.dat file",
			     PyBytes_AS_STRING(path));
		goto out;
	}
	self->tep = tracecmd_get_tep(self->handle);
	self->console = tep_find_event_by_name(self->tep, "printk", "console");
	self->types = PyMem_Calloc(PyDict_Size(event_fields) + 1, sizeof(*self->types));
	if (!self->types) {
		PyErr_NoMemory();
		goto out;
	}
	while (PyDict_Next(event_fields, &pos, &key, &value)) {
		PyObject *opt = optional;

		if (!PyUnicode_Check(key) || !PyTuple_Check(value)) {
			PyErr_SetString(PyExc_TypeError, "event_fields: {name: (field, ...)}");
			goto out;
		}
		if (opt && PyDict_Check(opt)) {
			opt = PyDict_GetItemWithError(optional, key);
			if (!opt && PyErr_Occurred())
				goto out;
		}
		if (reader_add_type(self, key, value, numeric, opt) < 0)
			goto out;
	}
	Py_INCREF(event_class);
	self->event_class = event_class;
	Py_INCREF(store_class);
	self->store_class = store_class;
	self->text_key = PyUnicode_InternFromString("text");
	self->caller_key = PyUnicode_InternFromString("caller");
	if (self->text_key && self->caller_key)
		ret = reader_index_types(self);
out:
	Py_DECREF(path);
	return ret;
}

/**
 * reader_close() - Free the event types and close the file.
 * @self:	the reader (may be closed already)
 */
static void reader_close(Reader *self)
{
	int i;

	for (i = 0; i < self->nr_types; i++) {
		struct event_type *t = &self->types[i];
		int j;

		for (j = 0; j < t->nr_num; j++)
			Py_CLEAR(t->num[j].name);
		Py_CLEAR(t->templates);
		Py_CLEAR(t->name);
	}
	self->nr_types = 0;
	PyMem_Free(self->types);
	self->types = NULL;
	PyMem_Free(self->by_id);
	self->by_id = NULL;
	self->console = NULL;
	PyMem_Free(self->cpu_last);
	self->cpu_last = NULL;
	self->nr_cpu_last = 0;
	self->max_id = -1;
	if (self->handle)
		tracecmd_close(self->handle);
	self->handle = NULL;
	self->tep = NULL;
}

/**
 * Reader_dealloc() - Free a reader.
 * @self:	the reader
 */
static void Reader_dealloc(Reader *self)
{
	reader_close(self);
	Py_CLEAR(self->event_class);
	Py_CLEAR(self->store_class);
	Py_CLEAR(self->text_key);
	Py_CLEAR(self->caller_key);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/**
 * decimal() - A number as a Python string of its decimal digits.
 * @v:		the magnitude
 * @negative:	print a minus sign
 *
 * What "%llu" / "%lld" print, without the cost of snprintf(): three
 * numbers of most events go through here.
 *
 * Return: a new reference, NULL on error.
 */
static PyObject *decimal(unsigned long long v, bool negative)
{
	char buf[24], *p = buf + sizeof(buf);
	PyObject *s;

	do {
		*--p = '0' + v % 10;
		v /= 10;
	} while (v);
	if (negative)
		*--p = '-';
	s = PyUnicode_New(buf + sizeof(buf) - p, 127);
	if (s)
		memcpy(PyUnicode_1BYTE_DATA(s), p, buf + sizeof(buf) - p);
	return s;
}

/**
 * read_number() - A numeric field of a record as its decimal string.
 * @self:	the reader (for the file's byte order)
 * @nf:		the field
 * @data:	the record's data
 *
 * Return: a new reference, NULL on error.
 */
static PyObject *read_number(Reader *self, const struct num_field *nf,
			     const char *data)
{
	unsigned long long v = tep_read_number(self->tep, data + nf->offset, nf->size);

	if (nf->is_signed) {
		int shift = 64 - 8 * nf->size;
		long long sv = (long long)(v << shift) >> shift;

		if (sv < 0)
			return decimal(-(unsigned long long)sv, true);
	}
	return decimal(v, false);
}

/**
 * read_long() - A numeric field of a record as a Python int.
 * @self:	the reader (for the file's byte order)
 * @nf:		the field
 * @data:	the record's data
 *
 * Return: a new reference, NULL on error.
 */
static PyObject *read_long(Reader *self, const struct num_field *nf, const char *data)
{
	unsigned long long v = tep_read_number(self->tep, data + nf->offset, nf->size);

	if (nf->is_signed) {
		int shift = 64 - 8 * nf->size;

		return PyLong_FromLongLong((long long)(v << shift) >> shift);
	}
	return PyLong_FromUnsignedLongLong(v);
}

/**
 * read_text() - The text of a record (a __data_loc char array).
 * @self:	the reader
 * @t:		the event type
 * @data:	the record's data
 * @size:	its size
 *
 * The tracepoint writes the text and one NUL, and the array's length
 * (in the __data_loc word) counts both: the text ends at that NUL.  An
 * array whose only NUL is not its last byte is damaged; its bytes up to
 * the last are returned then (NULs included), as `trace-cmd report`
 * prints more than the text too, and the checker finds the text's length
 * wrong either way.  Nothing is read past the record's end.
 *
 * Return: a new reference (latin-1 decoded), NULL on error.
 */
static PyObject *read_text(Reader *self, const struct event_type *t,
			   const char *data, int size)
{
	unsigned int word = tep_read_number(self->tep, data + t->text_offset, 4);
	unsigned int off = word & 0xffff;
	unsigned int len = word >> 16;
	const char *nul;

	if (t->text_relative)
		off += t->text_offset + 4;
	if (off > (unsigned int)size)
		off = size;
	if (off + len > (unsigned int)size)
		len = size - off;
	nul = len ? memchr(data + off, '\0', len) : NULL;
	if (nul && nul == data + off + len - 1)
		len = nul - (data + off);
	else if (len)
		len--;		/* damaged: not the text, and not its length */
	return PyUnicode_DecodeLatin1(data + off, len, NULL);
}

/**
 * template_key() - The cache key of a record's rendered fields.
 * @t:		the event type
 * @data:	the record's data
 * @buf:	MAX_KEY bytes
 *
 * The tracepoints copy whole char arrays, so the bytes after a string's
 * NUL are whatever the kernel's buffer held: they are zeroed here, or
 * records that print the same would miss the cache.
 *
 * Return: a new bytes object, NULL on error.
 */
static PyObject *template_key(const struct event_type *t, const char *data, char *buf)
{
	int i, pos = 0;

	for (i = 0; i < t->nr_keyed; i++) {
		const struct keyed_field *kf = &t->keyed[i];
		const char *src = data + kf->offset;

		if (kf->is_string) {
			const char *nul = memchr(src, '\0', kf->size);
			int n = nul ? nul - src : kf->size;

			memcpy(buf + pos, src, n);
			memset(buf + pos + n, 0, kf->size - n);
		} else {
			memcpy(buf + pos, src, kf->size);
		}
		pos += kf->size;
	}
	return PyBytes_FromStringAndSize(buf, pos);
}

/**
 * rendered_fields() - The cached rendering of a record's keyed fields.
 * @self:	the reader
 * @t:		the event type
 * @record:	the record
 *
 * On a miss libtraceevent prints the record's fields (as `trace-cmd
 * report` does) and the Python render callback parses them.
 *
 * Return: a borrowed dict, Py_None for a record the callback rejected
 * (malformed), NULL on error.
 */
static PyObject *rendered_fields(Reader *self, struct event_type *t,
				 struct tep_record *record)
{
	char keybuf[MAX_KEY];
	PyObject *key, *tmpl;

	key = template_key(t, record->data, keybuf);
	if (!key)
		return NULL;
	tmpl = PyDict_GetItemWithError(t->templates, key);
	if (tmpl || PyErr_Occurred()) {
		Py_DECREF(key);
		return tmpl;
	}
	trace_seq_reset(&self->seq);
	tep_print_event(self->tep, &self->seq, record, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&self->seq);
	tmpl = PyObject_CallFunction(self->render, "OKy#", t->name, self->lineno,
				     self->seq.buffer, (Py_ssize_t)self->seq.len);
	if (!tmpl) {
		Py_DECREF(key);
		return NULL;
	}
	if (tmpl == Py_None) {
		/* malformed: on_record() reports it; not cached */
		Py_DECREF(key);
		Py_DECREF(tmpl);
		return Py_None;
	}
	if (!PyDict_Check(tmpl)) {
		PyErr_SetString(PyExc_TypeError, "render() must return a dict or None");
		goto err;
	}
	if (PyDict_Size(t->templates) >= CACHE_MAX)
		PyDict_Clear(t->templates);
	if (PyDict_SetItem(t->templates, key, tmpl) < 0)
		goto err;
	Py_DECREF(key);
	Py_DECREF(tmpl);	/* the cache holds it */
	return tmpl;
err:
	Py_DECREF(key);
	Py_DECREF(tmpl);
	return NULL;
}

/**
 * build_fields() - The fields dict of one nobkl record.
 * @self:	the reader
 * @t:		the event type
 * @record:	the record
 * @tmpl:	its rendered fields
 *
 * Return: a new dict, NULL on error.
 */
static PyObject *build_fields(Reader *self, struct event_type *t,
			      struct tep_record *record, PyObject *tmpl)
{
	PyObject *fields, *v = NULL;
	int i;

	fields = PyDict_Copy(tmpl);
	if (!fields)
		return NULL;
	for (i = 0; i < t->nr_num; i++) {
		v = read_number(self, &t->num[i], record->data);
		if (!v || PyDict_SetItem(fields, t->num[i].name, v) < 0)
			goto err;
		Py_DECREF(v);
	}
	if (t->text_offset >= 0) {
		v = read_text(self, t, record->data, record->size);
		if (!v || PyDict_SetItem(fields, self->text_key, v) < 0)
			goto err;
		Py_DECREF(v);
	}
	return fields;
err:
	Py_XDECREF(v);
	Py_DECREF(fields);
	return NULL;
}

/**
 * timestamp() - A record's timestamp as the report prints it.
 * @self:	the reader
 * @ts:		raw timestamp (ns)
 *
 * Microseconds, rounded, as seconds: the same float as Python's
 * ((ts + 500) // 1000) / 1e6.  Consecutive records often share it.
 *
 * Return: a new reference, NULL on error.
 */
static PyObject *timestamp(Reader *self, unsigned long long ts)
{
	unsigned long long usec = (ts + 500) / 1000;

	if (!self->last_ts_obj || usec != self->last_usec) {
		PyObject *f = PyFloat_FromDouble((double)usec / 1e6);

		if (!f)
			return NULL;
		Py_XSETREF(self->last_ts_obj, f);
		self->last_usec = usec;
	}
	Py_INCREF(self->last_ts_obj);
	return self->last_ts_obj;
}

/**
 * new_event() - An Event(lineno, name, cpu, ts, fields) tuple.
 * @self:	the reader
 * @t:		the event type
 * @record:	the record
 * @fields:	its fields (reference stolen)
 *
 * Event is a namedtuple: a tuple subclass, allocated the way tuple's own
 * subtype constructor does it, without a Python-level __new__ call.
 *
 * Return: a new reference, NULL on error.
 */
static PyObject *new_event(Reader *self, struct event_type *t,
			   struct tep_record *record, PyObject *fields)
{
	PyTypeObject *cls = (PyTypeObject *)self->event_class;
	PyObject *ev, *lineno, *cpu, *ts;

	lineno = PyLong_FromUnsignedLongLong(self->lineno);
	cpu = PyLong_FromLong(record->cpu);
	ts = timestamp(self, record->ts);
	ev = cls->tp_alloc(cls, 5);
	if (!lineno || !cpu || !ts || !ev) {
		Py_XDECREF(lineno);
		Py_XDECREF(cpu);
		Py_XDECREF(ts);
		Py_XDECREF(ev);
		Py_DECREF(fields);
		return NULL;
	}
	Py_INCREF(t->name);
	PyTuple_SET_ITEM(ev, 0, lineno);
	PyTuple_SET_ITEM(ev, 1, t->name);
	PyTuple_SET_ITEM(ev, 2, cpu);
	PyTuple_SET_ITEM(ev, 3, ts);
	PyTuple_SET_ITEM(ev, 4, fields);
	return ev;
}

/**
 * new_store() - A Store(lineno, cpu, ts, seq, len, level, caller, text).
 * @self:	the reader
 * @t:		the nobkl_store type
 * @record:	the record
 * @tmpl:	its rendered fields
 *
 * Return: a new reference, NULL on error.
 */
static PyObject *new_store(Reader *self, struct event_type *t, struct tep_record *record,
			   PyObject *tmpl)
{
	PyTypeObject *cls = (PyTypeObject *)self->store_class;
	PyObject *caller, *st;
	PyObject *item[8];
	int i;

	caller = PyDict_GetItemWithError(tmpl, self->caller_key);
	if (!caller) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_KeyError, "caller");
		return NULL;
	}
	Py_INCREF(caller);
	item[0] = PyLong_FromUnsignedLongLong(self->lineno);
	item[1] = PyLong_FromLong(record->cpu);
	item[2] = timestamp(self, record->ts);
	item[3] = read_long(self, &t->num[0], record->data);
	item[4] = read_long(self, &t->num[1], record->data);
	item[5] = read_long(self, &t->num[2], record->data);
	item[6] = caller;
	item[7] = read_text(self, t, record->data, record->size);
	st = cls->tp_alloc(cls, 8);
	for (i = 0; i < 8; i++) {
		if (!item[i] || !st) {
			for (i = 0; i < 8; i++)
				Py_XDECREF(item[i]);
			Py_XDECREF(st);
			return NULL;
		}
	}
	for (i = 0; i < 8; i++)
		PyTuple_SET_ITEM(st, i, item[i]);
	return st;
}

/**
 * report_drop() - Tell the Python side about events lost before a record.
 * @self:	the reader
 * @lineno:	the report line of the drop marker
 * @cpu:	the CPU that lost them
 * @missed:	how many (-1: an unknown number)
 *
 * Return: 0, or -1 with the callback's exception set.
 */
static int report_drop(Reader *self, unsigned long long lineno, int cpu, long long missed)
{
	PyObject *r;

	r = PyObject_CallFunction(self->on_drop, "KiL", lineno, cpu, missed);
	if (!r)
		return -1;
	Py_DECREF(r);
	return 0;
}

/**
 * report_damage() - Tell the Python side about a nobkl record it cannot use.
 * @self:	the reader
 * @t:		its event type
 * @record:	the record
 * @why:	what is wrong with it
 *
 * Return: 0, or -1 with the callback's exception set.
 */
static int report_damage(Reader *self, struct event_type *t, struct tep_record *record,
			 const char *why)
{
	PyObject *r;

	r = PyObject_CallFunction(self->on_damage, "KiKOs", self->lineno, record->cpu,
				  record->ts, t->name, why);
	if (!r)
		return -1;
	Py_DECREF(r);
	return 0;
}

/**
 * report_unknown() - Tell the Python side about a record of no known event.
 * @self:	the reader
 * @record:	the record (`trace-cmd report` prints "[UNKNOWN EVENT]")
 *
 * Return: 0, or -1 with the callback's exception set.
 */
static int report_unknown(Reader *self, struct tep_record *record)
{
	PyObject *r;

	r = PyObject_CallFunction(self->on_damage, "KiKss", self->lineno, record->cpu,
				  record->ts, "[UNKNOWN EVENT]", "a record of no event in the file");
	if (!r)
		return -1;
	Py_DECREF(r);
	return 0;
}

/**
 * store_level_ok() - Whether a nobkl_store record's level is a printk level.
 * @self:	the reader (for the file's byte order)
 * @t:		the nobkl_store type
 * @record:	the record
 *
 * The ringbuffer keeps a record's level in three bits: any other value is
 * a damaged record (traceparse.store_problem() says the same for the text
 * reader).
 *
 * Return: true for 0-7.
 */
static bool store_level_ok(Reader *self, struct event_type *t, struct tep_record *record)
{
	const struct num_field *nf = &t->num[2];
	unsigned long long v = tep_read_number(self->tep, record->data + nf->offset, nf->size);

	if (nf->is_signed) {
		int shift = 64 - 8 * nf->size;
		long long sv = (long long)(v << shift) >> shift;

		return sv >= 0 && sv <= 7;
	}
	return v <= 7;
}

/**
 * store_text_ok() - Whether a nobkl_store record's text is one string.
 * @self:	the reader (for the file's byte order)
 * @t:		the nobkl_store type
 * @record:	the record
 *
 * The text's __data_loc word gives its place and length, the NUL
 * included; a record text has no NUL of its own.  A NUL before the end
 * or none at the end is a damaged record, which `trace-cmd report` would
 * print cut at the first NUL or run past: the text reader then finds a
 * text that is not `len` characters long, and the readers agree that
 * the record is damaged (read_text() copes with it all the same).
 *
 * Return: true when the text is a NUL-terminated string of its length.
 */
static bool store_text_ok(Reader *self, const struct event_type *t,
			  const struct tep_record *record)
{
	const char *data = record->data;
	unsigned int word = tep_read_number(self->tep, data + t->text_offset, 4);
	unsigned int off = word & 0xffff;
	unsigned int len = word >> 16;

	if (t->text_relative)
		off += t->text_offset + 4;
	if (!len || off + len > (unsigned int)record->size)
		return false;
	return memchr(data + off, '\0', len) == data + off + len - 1;
}

/**
 * note_cpu_last() - Remember a record's timestamp as its CPU's last one.
 * @self:	the reader
 * @record:	the record
 */
/**
 * console_lines() - The further report lines of a printk:console record.
 * @self:	the reader
 * @record:	a record of printk:console
 *
 * `trace-cmd report` prints the message as it is, so each line break in
 * a multi-line record's message starts a report line of its own.
 *
 * Return: the number of line breaks in the message.
 */
static unsigned long long console_lines(Reader *self, struct tep_record *record)
{
	unsigned long long n = 0;
	const char *msg, *end;
	int len = 0;

	msg = tep_get_field_raw(NULL, self->console, "msg", record, &len, 0);
	if (!msg || len <= 0)
		return 0;
	for (end = msg + strnlen(msg, len); (msg = memchr(msg, '\n', end - msg)); msg++)
		n++;
	return n;
}

static void note_cpu_last(Reader *self, struct tep_record *record)
{
	if (record->cpu >= 0 && record->cpu < self->nr_cpu_last)
		self->cpu_last[record->cpu] = record->ts + 1;
}

/**
 * on_record() - tracecmd_iterate_events() callback: one record.
 * @handle:	the trace
 * @record:	the record
 * @cpu:	its CPU
 * @data:	the reader
 *
 * Return: 0 to go on, -1 to stop (a Python exception is set).
 * libtracecmd 3.1.6 ends the iteration on a negative value only.
 */
static int on_record(struct tracecmd_input *handle, struct tep_record *record,
		     int cpu, void *data)
{
	Reader *self = data;
	long long missed = record->missed_events;
	struct event_type *t = NULL;
	struct tep_event *other;
	PyObject *tmpl, *fields, *ev, *r;
	int id;

	id = tep_data_type(self->tep, record);
	if (id >= 0 && id <= self->max_id)
		t = self->by_id[id];
	/*
	 * The trace's span is that of its printk events, as the text
	 * reader's: a scenario may record other events too (sched_switch),
	 * which count only for the last timestamp of their CPU.
	 */
	other = t ? NULL : tep_find_event(self->tep, id);
	if (!other || !other->system || !strcmp(other->system, "printk")) {
		if (!self->any) {
			self->first_ts = record->ts;
			self->any = true;
		}
		self->last_ts = record->ts;
	}
	note_cpu_last(self, record);
	if (self->test_missed_at && self->lineno == self->test_missed_at)
		missed = self->test_missed;
	if (missed && report_drop(self, ++self->lineno, record->cpu, missed) < 0)
		goto fail;
	self->lineno++;
	if (!t) {
		/* a record of no event the file describes is a damaged one */
		if (!other) {
			if (report_unknown(self, record) < 0)
				goto fail;
			return 0;
		}
		self->other++;
		if (self->console && id == self->console->id)
			self->lineno += console_lines(self, record);
		return 0;
	}
	if (record->size < t->min_size) {
		if (report_damage(self, t, record, "record shorter than its fields") < 0)
			goto fail;
		return 0;
	}
	/*
	 * The nobkl events but the store have fixed fields only: their
	 * records are those fields and less than 8 bytes of padding.  A
	 * longer one is a record of another event whose type a flipped bit
	 * turned into this one (an emit read as a commit).
	 */
	if (!t->is_store && record->size >= t->min_size + 8) {
		if (report_damage(self, t, record, "record longer than its fields") < 0)
			goto fail;
		return 0;
	}
	tmpl = rendered_fields(self, t, record);
	if (!tmpl)
		goto fail;
	if (tmpl == Py_None) {
		/* its fields do not parse */
		if (report_damage(self, t, record, "fields do not parse") < 0)
			goto fail;
		return 0;
	}
	if (t->is_store && !store_level_ok(self, t, record)) {
		if (report_damage(self, t, record, "level is no printk level (0-7)") < 0)
			goto fail;
		return 0;
	}
	if (t->is_store && !store_text_ok(self, t, record)) {
		if (report_damage(self, t, record, "text is not one string of its length") < 0)
			goto fail;
		return 0;
	}
	if (t->is_store) {
		ev = new_store(self, t, record, tmpl);
	} else {
		fields = build_fields(self, t, record, tmpl);
		ev = fields ? new_event(self, t, record, fields) : NULL;
	}
	if (!ev)
		goto fail;
	self->events++;
	r = PyObject_CallOneArg(self->sink, ev);
	Py_DECREF(ev);
	if (!r)
		goto fail;
	Py_DECREF(r);
	return 0;
fail:
	self->failed = true;
	return -1;
}

/**
 * cpu_last_dict() - The last raw timestamp read of each CPU with records.
 * @self:	the reader, after an iteration
 *
 * Return: a new dict {cpu: ts}, NULL on error.
 */
static PyObject *cpu_last_dict(Reader *self)
{
	PyObject *d = PyDict_New(), *k, *v;
	int cpu, err;

	for (cpu = 0; d && cpu < self->nr_cpu_last; cpu++) {
		if (!self->cpu_last[cpu])
			continue;
		k = PyLong_FromLong(cpu);
		v = PyLong_FromUnsignedLongLong(self->cpu_last[cpu] - 1);
		err = !k || !v || PyDict_SetItem(d, k, v) < 0;
		Py_XDECREF(k);
		Py_XDECREF(v);
		if (err)
			Py_CLEAR(d);
	}
	return d;
}

/**
 * Reader_feed() - Read the whole trace (see the method's doc string).
 * @self:	the reader
 * @args:	sink, on_drop, on_damage, render
 * @kwds:	those, and test_missed_at/test_missed (tests: pretend events
 *		were lost before the record after that report line)
 *
 * Return: (rc, lines, events, other, first_ts, last_ts, cpu_last), or
 * NULL with the exception of a callback.
 */
static PyObject *Reader_feed(Reader *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"sink", "on_drop", "on_damage", "render", "test_missed_at",
				 "test_missed", NULL};
	PyObject *cpu_last, *ret;
	int rc, ncpus;

	self->test_missed_at = 0;
	self->test_missed = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO|KL", kwlist, &self->sink,
					 &self->on_drop, &self->on_damage, &self->render,
					 &self->test_missed_at, &self->test_missed))
		return NULL;
	if (!self->handle) {
		PyErr_SetString(PyExc_ValueError, "reader is closed");
		return NULL;
	}
	ncpus = tracecmd_cpus(self->handle);
	PyMem_Free(self->cpu_last);
	self->nr_cpu_last = ncpus > 0 ? ncpus : 0;
	self->cpu_last = PyMem_Calloc(self->nr_cpu_last + 1, sizeof(*self->cpu_last));
	if (!self->cpu_last) {
		self->nr_cpu_last = 0;
		return PyErr_NoMemory();
	}
	self->lineno = 1;	/* the `cpus=N` header */
	self->events = self->other = 0;
	self->any = self->failed = false;
	trace_seq_init(&self->seq);
	rc = tracecmd_iterate_events(self->handle, NULL, 0, on_record, self);
	trace_seq_destroy(&self->seq);
	Py_CLEAR(self->last_ts_obj);
	self->sink = self->on_drop = self->on_damage = self->render = NULL;
	if (self->failed)
		return NULL;
	cpu_last = cpu_last_dict(self);
	if (!cpu_last)
		return NULL;
	if (!self->any)
		ret = Py_BuildValue("(iKKKOOO)", rc, self->lineno, self->events, self->other,
				    Py_None, Py_None, cpu_last);
	else
		ret = Py_BuildValue("(iKKKKKO)", rc, self->lineno, self->events, self->other,
				    self->first_ts, self->last_ts, cpu_last);
	Py_DECREF(cpu_last);
	return ret;
}

/**
 * Reader_cpus() - The number of CPUs in the file.
 * @self:	the reader
 * @unused:	no arguments
 *
 * Return: an int, NULL when the reader is closed.
 */
static PyObject *Reader_cpus(Reader *self, PyObject *unused)
{
	if (!self->handle) {
		PyErr_SetString(PyExc_ValueError, "reader is closed");
		return NULL;
	}
	return PyLong_FromLong(tracecmd_cpus(self->handle));
}

/**
 * Reader_cpu_range() - First and last raw timestamp of one CPU.
 * @self:	the reader
 * @arg:	the CPU number
 *
 * Return: (first, last), or None when the CPU has no record.
 * libtracecmd 3.1.6 crashes in tracecmd_read_cpu_last() on some CPUs
 * without records: the last record is only asked for when a first one
 * exists.
 */
static PyObject *Reader_cpu_range(Reader *self, PyObject *arg)
{
	struct tep_record *rec;
	unsigned long long first, last;
	long cpu = PyLong_AsLong(arg);

	if (cpu == -1 && PyErr_Occurred())
		return NULL;
	if (!self->handle) {
		PyErr_SetString(PyExc_ValueError, "reader is closed");
		return NULL;
	}
	rec = tracecmd_read_cpu_first(self->handle, cpu);
	if (!rec)
		Py_RETURN_NONE;
	first = rec->ts;
	tracecmd_free_record(rec);
	rec = tracecmd_read_cpu_last(self->handle, cpu);
	if (!rec)
		return Py_BuildValue("(KO)", first, Py_None);
	last = rec->ts;
	tracecmd_free_record(rec);
	return Py_BuildValue("(KK)", first, last);
}

/**
 * Reader_cpustats() - The ring buffer statistics trace-cmd record saved.
 * @self:	the reader
 * @unused:	no arguments
 *
 * Return: the text (empty when there is none), NULL when closed.
 */
static PyObject *Reader_cpustats(Reader *self, PyObject *unused)
{
	const char *s;

	if (!self->handle) {
		PyErr_SetString(PyExc_ValueError, "reader is closed");
		return NULL;
	}
	s = tracecmd_get_cpustats(self->handle);
	return PyUnicode_DecodeLatin1(s ? s : "", s ? strlen(s) : 0, "replace");
}

/**
 * Reader_close() - Close the file; the reader cannot read any more.
 * @self:	the reader
 * @unused:	no arguments
 *
 * Return: None.
 */
static PyObject *Reader_close(Reader *self, PyObject *unused)
{
	reader_close(self);
	Py_RETURN_NONE;
}

static PyMethodDef Reader_methods[] = {
	{"feed", (PyCFunction)(void (*)(void))Reader_feed, METH_VARARGS | METH_KEYWORDS,
	 "feed(sink, on_drop, on_damage, render) -> (rc, lines, events, other, first_ts,\n"
	 "last_ts, cpu_last)\n"
	 "Call sink(Event) for each nobkl record in trace order, on_drop(lineno, cpu,\n"
	 "missed) before a record after lost events, render(name, lineno, info) for\n"
	 "the rendered fields of a record not seen before (None: they do not parse),\n"
	 "on_damage(lineno, cpu, ts, name, why) for a nobkl record that is too short\n"
	 "or whose fields do not parse.  cpu_last: {cpu: last raw ts read}."},
	{"cpus", (PyCFunction)Reader_cpus, METH_NOARGS, "Number of CPUs in the file."},
	{"cpu_range", (PyCFunction)Reader_cpu_range, METH_O,
	 "cpu_range(cpu) -> (first, last) raw timestamps, or None."},
	{"cpustats", (PyCFunction)Reader_cpustats, METH_NOARGS,
	 "The kernel ring buffer statistics trace-cmd record saved."},
	{"close", (PyCFunction)Reader_close, METH_NOARGS, "Close the file."},
	{NULL}
};

static PyTypeObject ReaderType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "_datreader.Reader",
	.tp_doc = "Reader(path, event_fields, numeric, event_class, store_class): a trace.dat",
	.tp_basicsize = sizeof(Reader),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)Reader_init,
	.tp_dealloc = (destructor)Reader_dealloc,
	.tp_methods = Reader_methods,
};

static struct PyModuleDef datreader_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "_datreader",
	.m_doc = "trace.dat reader of the printk-nobkl-stress analysis",
	.m_size = -1,
};

/**
 * PyInit__datreader() - The module: its Reader type.
 *
 * Return: the module, NULL on error.
 */
PyMODINIT_FUNC PyInit__datreader(void)
{
	PyObject *m;

	if (PyType_Ready(&ReaderType) < 0)
		return NULL;
	m = PyModule_Create(&datreader_module);
	if (!m)
		return NULL;
	Py_INCREF(&ReaderType);
	if (PyModule_AddObject(m, "Reader", (PyObject *)&ReaderType) < 0) {
		Py_DECREF(&ReaderType);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
