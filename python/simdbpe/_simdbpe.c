/*
 * _simdbpe.c - the CPython extension under the `simdbpe` package.
 *
 * A thin layer over the library's public API (simdbpe.h, simdbpe_batch.h);
 * the tiktoken-shaped classes are Python, in __init__.py.
 *
 *   Model   one simdbpe_model, plus idle encoders and idle batch encoders
 *           kept for reuse. A call takes one out of the idle list (or makes
 *           one) while it holds the GIL, releases the GIL to encode, and
 *           puts it back with the GIL held again, so calls from many Python
 *           threads run at once, each on its own encoder, and the lists
 *           need no lock of their own.
 *   Buffer  a malloc'd array of uint32 ids or size_t offsets that exposes
 *           the buffer protocol (numpy.asarray takes it without a copy).
 *   Trainer one simdbpe_trainer: feed bytes stream by stream, train, save
 *           (simdbpe.train in __init__.py drives it); the GIL is released
 *           while it counts and merges.
 *   Error   ValueError with status, byte_offset, document and index
 *           attributes (None where they do not apply; a trainer's UTF-8
 *           error gives the line in `index`); a dataset run's also has
 *           path and line, and `index` is the input's position in the list.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include "simdbpe.h"
#include "simdbpe_batch.h"
#include "simdbpe_dataset.h"
#include "simdbpe_train.h"

_Static_assert(sizeof(unsigned int) == 4, "Buffer format 'I' must be 32 bits");

/* Idle objects kept per model; more are freed when returned. */
#define IDLE_ENCODERS 16
#define IDLE_BATCHES 4
/* Texts shorter than this are encoded without releasing the GIL: the
 * release and re-acquisition would cost more than the encoding. */
#define GIL_RELEASE_BYTES 512

static PyObject *Error;
/* An id that is no token: Error and KeyError at once, as tiktoken raises
 * KeyError from decode and decode_single_token_bytes. */
static PyObject *TokenIdError;

/* ---------------------------------------------------------------- errors */

static PyObject *position_or_none(uint64_t v)
{
    if (v == SIMDBPE_NO_POSITION)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(v);
}

/* Gives exception exc the attributes names[i] = vals[i] (new references,
 * taken over; NULL where making one failed, with its Python error set) and
 * raises it as Error if all were set. */
static void raise_with(PyObject *exc, const char *const *names, PyObject **vals, size_t n)
{
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok = ok && vals[i] && PyObject_SetAttrString(exc, names[i], vals[i]) == 0;
    for (size_t i = 0; i < n; i++)
        Py_XDECREF(vals[i]);
    if (ok)
        PyErr_SetObject(Error, exc);
    Py_DECREF(exc);
}

/* Raises Error from a status and a simdbpe_error; `batch` says whether
 * err->index is a document index. Returns NULL. */
static PyObject *raise_error(simdbpe_status st, const simdbpe_error *err, int batch)
{
    const char *msg = err && err->message[0] ? err->message : simdbpe_strerror(st);
    PyObject *exc = PyObject_CallFunction(Error, "s", msg);
    if (!exc)
        return NULL;
    uint64_t none = SIMDBPE_NO_POSITION;
    static const char *const names[] = {"status", "byte_offset", "document", "index"};
    PyObject *vals[] = {PyUnicode_FromString(simdbpe_status_name(st)),
                        position_or_none(err ? err->byte_offset : none),
                        position_or_none(batch && err ? err->index : none),
                        position_or_none(!batch && err ? err->index : none)};
    raise_with(exc, names, vals, 4);
    return NULL;
}

static PyObject *raise_nomem(simdbpe_status st, const simdbpe_error *err)
{
    if (st == SIMDBPE_ERR_NOMEM)
        return PyErr_NoMemory();
    return raise_error(st, err, 0);
}

/* ---------------------------------------------------------------- Buffer */

typedef struct {
    PyObject_HEAD void *data;
    Py_ssize_t n;
    Py_ssize_t itemsize;
    char format[2];
} Buffer;

static PyTypeObject BufferType;

/* A Buffer taking ownership of `data` (malloc'd, n items of uint32 or size_t). */
static PyObject *buffer_wrap(void *data, size_t n, int offsets)
{
    Buffer *b = PyObject_New(Buffer, &BufferType);
    if (!b) {
        free(data);
        return NULL;
    }
    b->data = data;
    b->n = (Py_ssize_t)n;
    b->itemsize = offsets ? (Py_ssize_t)sizeof(size_t) : 4;
    b->format[0] = offsets ? (sizeof(size_t) == 8 ? 'Q' : 'I') : 'I';
    b->format[1] = '\0';
    return (PyObject *)b;
}

static void buffer_dealloc(Buffer *b)
{
    free(b->data);
    PyObject_Free(b);
}

static int buffer_getbuffer(Buffer *b, Py_buffer *view, int flags)
{
    if (PyBuffer_FillInfo(view, (PyObject *)b, b->data, b->n * b->itemsize, 1, flags) < 0)
        return -1;
    view->itemsize = b->itemsize;
    if (flags & PyBUF_FORMAT)
        view->format = b->format;
    if (flags & PyBUF_ND) {
        view->ndim = 1;
        view->shape = &b->n;
    }
    if ((flags & PyBUF_STRIDES) == PyBUF_STRIDES)
        view->strides = &view->itemsize;
    return 0;
}

static Py_ssize_t buffer_len(Buffer *b)
{
    return b->n;
}

static unsigned long long buffer_at(const Buffer *b, Py_ssize_t i)
{
    return b->itemsize == 4 ? ((const uint32_t *)b->data)[i] : ((const size_t *)b->data)[i];
}

static PyObject *buffer_item(Buffer *b, Py_ssize_t i)
{
    if (i < 0 || i >= b->n) {
        PyErr_SetString(PyExc_IndexError, "Buffer index out of range");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(buffer_at(b, i));
}

/* A list of ids; `ints` (may be NULL) holds a Python int for each id below
 * n_ints, shared by every list instead of one new int per token. */
static PyObject *ids_to_list_cached(const uint32_t *ids, size_t n, PyObject *const *ints,
                                    size_t n_ints)
{
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (!list)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *v;
        if (ids[i] < n_ints) {
            v = ints[ids[i]];
            Py_INCREF(v);
        } else {
            v = PyLong_FromUnsignedLong(ids[i]);
        }
        if (!v) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, v);
    }
    return list;
}

static PyObject *ids_to_list(const uint32_t *ids, size_t n)
{
    return ids_to_list_cached(ids, n, NULL, 0);
}

static PyObject *buffer_tolist(Buffer *b, PyObject *unused)
{
    (void)unused;
    if (b->itemsize == 4)
        return ids_to_list(b->data, (size_t)b->n);
    PyObject *list = PyList_New(b->n);
    for (Py_ssize_t i = 0; list && i < b->n; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(buffer_at(b, i));
        if (!v) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

static PyObject *buffer_repr(Buffer *b)
{
    return PyUnicode_FromFormat("<simdbpe.Buffer of %zd %s>", b->n,
                                b->itemsize == 4 ? "uint32" : "offsets");
}

static PyBufferProcs buffer_as_buffer = {(getbufferproc)buffer_getbuffer, NULL};
static PySequenceMethods buffer_as_sequence = {.sq_length = (lenfunc)buffer_len,
                                               .sq_item = (ssizeargfunc)buffer_item};
static PyMethodDef buffer_methods[] = {
    {"tolist", (PyCFunction)buffer_tolist, METH_NOARGS, "The values as a list of ints."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject BufferType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "simdbpe.Buffer",
    .tp_basicsize = sizeof(Buffer),
    .tp_dealloc = (destructor)buffer_dealloc,
    .tp_repr = (reprfunc)buffer_repr,
    .tp_as_sequence = &buffer_as_sequence,
    .tp_as_buffer = &buffer_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Read-only array of uint32 ids (format 'I') or of offsets (size_t), with the "
              "buffer protocol: numpy.asarray(buf) shares its memory.",
    .tp_methods = buffer_methods,
};

/* ------------------------------------------------------------------ text */

/* The UTF-8 bytes of a str (cached in the str object) or of a bytes-like
 * object (view held in *view, released by the caller when view->obj). */
static int text_bytes(PyObject *o, const char **s, size_t *len, Py_buffer *view)
{
    view->obj = NULL;
    if (PyUnicode_Check(o)) {
        Py_ssize_t n;
        *s = PyUnicode_AsUTF8AndSize(o, &n);
        *len = (size_t)n;
        return *s ? 0 : -1;
    }
    if (PyObject_GetBuffer(o, view, PyBUF_SIMPLE) < 0) {
        PyErr_Format(PyExc_TypeError, "expected str or bytes, not %.100s", Py_TYPE(o)->tp_name);
        return -1;
    }
    *s = view->buf;
    *len = (size_t)view->len;
    return 0;
}

/* ----------------------------------------------------------------- Model */

typedef struct {
    PyObject_HEAD simdbpe_model *model;
    simdbpe_encoder *idle_enc[IDLE_ENCODERS];
    int n_idle_enc;
    simdbpe_batch *idle_batch[IDLE_BATCHES];
    int n_idle_batch;
    PyObject **ints; /* a Python int per id, made on first use */
    size_t n_ints;
} Model;

/* The model's ids as Python ints, made once (NULL with an error set). */
static PyObject *const *model_ints(Model *self)
{
    if (self->ints)
        return self->ints;
    size_t n = simdbpe_model_vocab_size(self->model);
    PyObject **ints = PyMem_Calloc(n ? n : 1, sizeof *ints);
    if (!ints)
        return (PyObject *const *)PyErr_NoMemory();
    for (size_t i = 0; i < n; i++) {
        if (!(ints[i] = PyLong_FromSize_t(i))) {
            while (i--)
                Py_DECREF(ints[i]);
            PyMem_Free(ints);
            return NULL;
        }
    }
    self->ints = ints;
    self->n_ints = n;
    return ints;
}

static int model_init(Model *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"name_or_path", NULL};
    const char *name;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s", names, &name))
        return -1;
    if (self->model)
        return 0;
    simdbpe_error err;
    simdbpe_status st;
    Py_BEGIN_ALLOW_THREADS st = simdbpe_model_open(name, &self->model, &err);
    Py_END_ALLOW_THREADS if (st != SIMDBPE_OK)
    {
        raise_nomem(st, &err);
        return -1;
    }
    return 0;
}

static void model_dealloc(Model *self)
{
    for (int i = 0; i < self->n_idle_enc; i++)
        simdbpe_encoder_free(self->idle_enc[i]);
    for (int i = 0; i < self->n_idle_batch; i++)
        simdbpe_batch_free(self->idle_batch[i]);
    for (size_t i = 0; i < self->n_ints; i++)
        Py_DECREF(self->ints[i]);
    PyMem_Free(self->ints);
    simdbpe_model_free(self->model);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_model(Model *self)
{
    if (self->model)
        return 0;
    PyErr_SetString(PyExc_ValueError, "simdbpe: model not opened");
    return -1;
}

static simdbpe_encoder *take_encoder(Model *self)
{
    if (self->n_idle_enc > 0)
        return self->idle_enc[--self->n_idle_enc];
    simdbpe_encoder *e = NULL;
    simdbpe_error err;
    simdbpe_status st = simdbpe_encoder_new(self->model, &e, &err);
    if (st != SIMDBPE_OK)
        raise_nomem(st, &err);
    return e;
}

static void give_encoder(Model *self, simdbpe_encoder *e)
{
    if (self->n_idle_enc < IDLE_ENCODERS)
        self->idle_enc[self->n_idle_enc++] = e;
    else
        simdbpe_encoder_free(e);
}

static int parse_options(int special, int errors, simdbpe_encode_options *o)
{
    if (special < 0 || special > 2 || errors < 0 || errors > 1) {
        PyErr_SetString(PyExc_ValueError, "special must be 0-2 and errors 0-1");
        return -1;
    }
    o->special = (simdbpe_special_policy)special;
    o->errors = (simdbpe_utf8_policy)errors;
    return 0;
}

/* encode(text, special=0, errors=0, buffer=False, add_special_tokens=False): one
 * document. */
static PyObject *model_encode(Model *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"text", "special", "errors", "buffer", "add_special_tokens", NULL};
    PyObject *text;
    int special = 0, errors = 0, as_buffer = 0;
    simdbpe_encode_options o = SIMDBPE_ENCODE_OPTIONS_INIT;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|iipi", names, &text, &special, &errors,
                                     &as_buffer, &o.add_special_tokens) ||
        check_model(self) || parse_options(special, errors, &o))
        return NULL;
    const char *s;
    size_t len;
    Py_buffer view;
    if (text_bytes(text, &s, &len, &view) < 0)
        return NULL;
    simdbpe_encoder *e = take_encoder(self);
    PyObject *res = NULL;
    if (e) {
        const uint32_t *ids;
        size_t n;
        simdbpe_error err;
        simdbpe_status st;
        if (len >= GIL_RELEASE_BYTES) {
            Py_BEGIN_ALLOW_THREADS st = simdbpe_encode(e, s, len, &o, &ids, &n, &err);
            Py_END_ALLOW_THREADS
        } else {
            st = simdbpe_encode(e, s, len, &o, &ids, &n, &err);
        }
        if (st != SIMDBPE_OK) {
            raise_nomem(st, &err);
        } else if (as_buffer) {
            uint32_t *copy = malloc(n ? n * sizeof *copy : 1);
            if (copy) {
                memcpy(copy, ids, n * sizeof *copy);
                res = buffer_wrap(copy, n, 0);
            } else {
                PyErr_NoMemory();
            }
        } else if (model_ints(self)) {
            res = ids_to_list_cached(ids, n, self->ints, self->n_ints);
        }
        give_encoder(self, e);
    }
    if (view.obj)
        PyBuffer_Release(&view);
    return res;
}

/* The index of each byte boundary in characters, for byte offsets into
 * UTF-8 text s[0..len): the count of non-continuation bytes before them,
 * kept as the offsets rise (the spans' starts rise, and so do their ends). */
typedef struct char_counter {
    const char *s;
    size_t len, at, chars; /* `chars` characters start before byte `at` */
} char_counter;

static size_t chars_before(char_counter *c, size_t b)
{
    if (b < c->at) {
        c->at = 0;
        c->chars = 0;
    }
    for (; c->at < b && c->at < c->len; c->at++)
        c->chars += ((uint8_t)c->s[c->at] & 0xC0) != 0x80;
    return c->chars;
}

/* v as a Python int (a new reference): the model's shared one when there
 * is one (model_ints made). */
static PyObject *int_of(Model *self, size_t v)
{
    if (v < self->n_ints)
        return Py_NewRef(self->ints[v]);
    return PyLong_FromSize_t(v);
}

/* encode_offsets(text, special=0, errors=0, add_special_tokens=0):
 * (ids, offsets, pieces): per id (simdbpe_encode_offsets) its (start, end),
 * in characters for a str, in bytes for bytes, and its piece (None for
 * the post-processor's). */
static PyObject *model_encode_offsets(Model *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"text", "special", "errors", "add_special_tokens", NULL};
    PyObject *text;
    int special = 0, errors = 0;
    simdbpe_encode_options o = SIMDBPE_ENCODE_OPTIONS_INIT;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|iii", names, &text, &special, &errors,
                                     &o.add_special_tokens) ||
        check_model(self) || parse_options(special, errors, &o))
        return NULL;
    const char *s;
    size_t len;
    Py_buffer view;
    if (text_bytes(text, &s, &len, &view) < 0)
        return NULL;
    int in_chars = PyUnicode_Check(text);
    simdbpe_encoder *e = take_encoder(self);
    PyObject *res = NULL;
    if (e) {
        const uint32_t *ids;
        simdbpe_span *spans = NULL;
        size_t n;
        simdbpe_error err;
        simdbpe_status st;
        Py_BEGIN_ALLOW_THREADS st = simdbpe_encode_offsets(e, s, len, &o, &ids, &spans, &n, &err);
        Py_END_ALLOW_THREADS if (st != SIMDBPE_OK) raise_nomem(st, &err);
        else if (model_ints(self))
        {
            PyObject *list = ids_to_list_cached(ids, n, self->ints, self->n_ints);
            PyObject *offs = list ? PyList_New((Py_ssize_t)n) : NULL;
            PyObject *pieces = offs ? PyList_New((Py_ssize_t)n) : NULL;
            char_counter starts = {s, len, 0, 0}, ends = {s, len, 0, 0};
            for (size_t i = 0; pieces && i < n; i++) {
                size_t a = spans[i].start, b = spans[i].end;
                if (in_chars) {
                    a = chars_before(&starts, a);
                    b = chars_before(&ends, b);
                }
                /* The model's shared ints where they reach (offsets and
                 * pieces below the vocabulary size): making an int a number
                 * was most of the call's time. */
                PyObject *pa = int_of(self, a), *pb = int_of(self, b);
                PyObject *t = pa && pb ? PyTuple_Pack(2, pa, pb) : NULL;
                Py_XDECREF(pa);
                Py_XDECREF(pb);
                PyObject *p = spans[i].piece == SIMDBPE_NO_PIECE ? Py_NewRef(Py_None)
                                                                 : int_of(self, spans[i].piece);
                if (!t || !p) {
                    Py_XDECREF(t);
                    Py_XDECREF(p);
                    Py_CLEAR(pieces);
                } else {
                    PyList_SET_ITEM(offs, (Py_ssize_t)i, t);
                    PyList_SET_ITEM(pieces, (Py_ssize_t)i, p);
                }
            }
            if (pieces)
                res = PyTuple_Pack(3, list, offs, pieces);
            Py_XDECREF(list);
            Py_XDECREF(offs);
            Py_XDECREF(pieces);
        }
        free(spans);
        give_encoder(self, e);
    }
    if (view.obj)
        PyBuffer_Release(&view);
    return res;
}

static simdbpe_batch *take_batch(Model *self, unsigned threads)
{
    for (int i = 0; i < self->n_idle_batch; i++) {
        simdbpe_batch *b = self->idle_batch[i];
        if (simdbpe_batch_threads(b) == threads) {
            self->idle_batch[i] = self->idle_batch[--self->n_idle_batch];
            return b;
        }
    }
    simdbpe_batch_options bo = SIMDBPE_BATCH_OPTIONS_INIT;
    bo.threads = threads;
    simdbpe_batch *b = NULL;
    simdbpe_error err;
    simdbpe_status st = simdbpe_batch_new(self->model, &bo, &b, &err);
    if (st != SIMDBPE_OK)
        raise_nomem(st, &err);
    return b;
}

static void give_batch(Model *self, simdbpe_batch *b)
{
    if (self->n_idle_batch == IDLE_BATCHES) {
        simdbpe_batch_free(self->idle_batch[0]);
        memmove(self->idle_batch, self->idle_batch + 1,
                (IDLE_BATCHES - 1) * sizeof *self->idle_batch);
        self->n_idle_batch--;
    }
    self->idle_batch[self->n_idle_batch++] = b;
}

/* The texts of a batch: pointers and lengths, and the views to release.
 * `items` is a tuple (a copy of the caller's sequence) holding every text
 * alive while the GIL is released. */
typedef struct texts {
    PyObject *items;
    const char **s;
    size_t *len;
    Py_buffer *views;
    size_t n, n_views;
} texts;

static void texts_release(texts *t)
{
    for (size_t i = 0; i < t->n_views; i++)
        PyBuffer_Release(&t->views[i]);
    PyMem_Free(t->s);
    PyMem_Free(t->len);
    PyMem_Free(t->views);
    Py_XDECREF(t->items);
}

static int texts_collect(PyObject *seq, texts *t)
{
    memset(t, 0, sizeof *t);
    t->items = PySequence_Tuple(seq);
    if (!t->items)
        return -1;
    t->n = (size_t)PyTuple_GET_SIZE(t->items);
    size_t cap = t->n ? t->n : 1;
    t->s = PyMem_Malloc(cap * sizeof *t->s);
    t->len = PyMem_Malloc(cap * sizeof *t->len);
    t->views = PyMem_Malloc(cap * sizeof *t->views);
    if (!t->s || !t->len || !t->views) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < t->n; i++) {
        Py_buffer *v = &t->views[t->n_views];
        if (text_bytes(PyTuple_GET_ITEM(t->items, (Py_ssize_t)i), &t->s[i], &t->len[i], v) < 0)
            return -1;
        if (v->obj)
            t->n_views++;
    }
    return 0;
}

/* (ids, offsets) as a list of lists. */
static PyObject *batch_lists(Model *self, const uint32_t *ids, const size_t *off, size_t n_docs)
{
    if (!model_ints(self))
        return NULL;
    PyObject *out = PyList_New((Py_ssize_t)n_docs);
    for (size_t d = 0; out && d < n_docs; d++) {
        PyObject *l = ids_to_list_cached(ids + off[d], off[d + 1] - off[d], self->ints,
                                         self->n_ints);
        if (!l) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)d, l);
    }
    return out;
}

/* encode_batch(texts, special=0, errors=0, threads=1, buffer=False,
 * add_special_tokens=False). */
static PyObject *model_encode_batch(Model *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"texts", "special", "errors", "threads", "buffer",
                            "add_special_tokens", NULL};
    PyObject *seq;
    int special = 0, errors = 0, threads = 1, as_buffer = 0;
    simdbpe_encode_options o = SIMDBPE_ENCODE_OPTIONS_INIT;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|iiipp", names, &seq, &special, &errors,
                                     &threads, &as_buffer, &o.add_special_tokens) ||
        check_model(self) || parse_options(special, errors, &o))
        return NULL;
    if (threads < 1 || threads > 1024) {
        PyErr_SetString(PyExc_ValueError, "num_threads must be between 1 and 1024");
        return NULL;
    }
    texts t;
    PyObject *res = NULL;
    simdbpe_batch *b = NULL;
    if (texts_collect(seq, &t) < 0 || !(b = take_batch(self, (unsigned)threads))) {
        texts_release(&t);
        return NULL;
    }
    uint32_t *ids;
    size_t n_ids, *off;
    simdbpe_error err;
    simdbpe_status st;
    Py_BEGIN_ALLOW_THREADS st =
        simdbpe_batch_encode(b, t.s, t.len, t.n, &o, 0, &ids, &n_ids, &off, &err);
    Py_END_ALLOW_THREADS give_batch(self, b);
    if (st != SIMDBPE_OK) {
        st == SIMDBPE_ERR_NOMEM ? PyErr_NoMemory() : raise_error(st, &err, 1);
    } else if (as_buffer) {
        PyObject *pi = buffer_wrap(ids, n_ids, 0);
        PyObject *po = buffer_wrap(off, t.n + 1, 1);
        if (pi && po)
            res = PyTuple_Pack(2, pi, po);
        Py_XDECREF(pi);
        Py_XDECREF(po);
    } else {
        res = batch_lists(self, ids, off, t.n);
        simdbpe_free(ids);
        simdbpe_free(off);
    }
    texts_release(&t);
    return res;
}

/* An id given as a Python int or anything with __index__ (numpy integers):
 * TypeError for anything else and OverflowError below 0 or past 32 bits,
 * as tiktoken (and HF tokenizers) raise them. `what` and `i` (or -1) name
 * it in the message. */
static int id_arg(PyObject *o, uint32_t *out, const char *what, Py_ssize_t i)
{
    PyObject *num = PyNumber_Index(o);
    if (!num)
        return -1; /* TypeError: '<type>' object cannot be interpreted as an integer */
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(num, &overflow);
    Py_DECREF(num);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow || v < 0 || v > (long long)UINT32_MAX) {
        if (i >= 0)
            PyErr_Format(PyExc_OverflowError, "%s[%zd] is not a token id (0 .. 2**32-1)", what, i);
        else
            PyErr_Format(PyExc_OverflowError, "%s is not a token id (0 .. 2**32-1)", what);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* Raises TokenIdError (message `msg`) for the id at position `index` (or
 * SIMDBPE_NO_POSITION). Returns NULL. */
static PyObject *raise_token_id(const char *msg, uint64_t index)
{
    PyObject *exc = PyObject_CallFunction(TokenIdError, "s", msg);
    if (!exc)
        return NULL;
    static const char *const names[] = {"status", "byte_offset", "document", "index"};
    PyObject *vals[] = {PyUnicode_FromString(simdbpe_status_name(SIMDBPE_ERR_TOKEN_ID)),
                        Py_NewRef(Py_None), Py_NewRef(Py_None), position_or_none(index)};
    int ok = 1;
    for (size_t k = 0; k < 4; k++)
        ok = ok && vals[k] && PyObject_SetAttrString(exc, names[k], vals[k]) == 0;
    for (size_t k = 0; k < 4; k++)
        Py_XDECREF(vals[k]);
    if (ok)
        PyErr_SetObject(TokenIdError, exc);
    Py_DECREF(exc);
    return NULL;
}

/* The ids of a decode call as a uint32 array (a 'I' buffer is used in place). */
static uint32_t *ids_arg(PyObject *o, size_t *n, Py_buffer *view, int *owned)
{
    *owned = 0;
    view->obj = NULL;
    if (PyObject_CheckBuffer(o) && PyObject_GetBuffer(o, view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) == 0) {
        if (view->itemsize == 4 && view->format &&
            (strcmp(view->format, "I") == 0 || strcmp(view->format, "<I") == 0 ||
             strcmp(view->format, "=I") == 0)) {
            *n = (size_t)(view->len / 4);
            return view->buf;
        }
        PyBuffer_Release(view);
        view->obj = NULL;
    }
    PyErr_Clear();
    PyObject *fast = PySequence_Fast(o, "ids must be a sequence of ints");
    if (!fast)
        return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    uint32_t *ids = PyMem_Malloc((size_t)(len ? len : 1) * sizeof *ids);
    if (!ids) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        uint32_t v;
        if (id_arg(PySequence_Fast_GET_ITEM(fast, i), &v, "ids", i) < 0) {
            PyMem_Free(ids);
            Py_DECREF(fast);
            return NULL;
        }
        ids[i] = v;
    }
    Py_DECREF(fast);
    *n = (size_t)len;
    *owned = 1;
    return ids;
}

static PyObject *model_decode_bytes(Model *self, PyObject *arg)
{
    if (check_model(self))
        return NULL;
    size_t n, need = 0;
    Py_buffer view;
    int owned;
    uint32_t *ids = ids_arg(arg, &n, &view, &owned);
    if (!ids)
        return NULL;
    simdbpe_error err;
    PyObject *res = NULL;
    simdbpe_status st = simdbpe_decode(self->model, ids, n, NULL, 0, &need, &err);
    if (st == SIMDBPE_OK || st == SIMDBPE_ERR_BUFFER_TOO_SMALL) {
        res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)need);
        if (res) {
            size_t got;
            st = simdbpe_decode(self->model, ids, n, (uint8_t *)PyBytes_AS_STRING(res), need,
                                &got, &err);
        }
    }
    if (st == SIMDBPE_ERR_TOKEN_ID) {
        Py_CLEAR(res);
        char msg[64]; /* tiktoken's words */
        snprintf(msg, sizeof msg, "Invalid token for decoding: %u", ids[err.index]);
        raise_token_id(msg, err.index);
    } else if (st != SIMDBPE_OK) {
        Py_CLEAR(res);
        raise_nomem(st, &err);
    }
    if (owned)
        PyMem_Free(ids);
    if (view.obj)
        PyBuffer_Release(&view);
    return res;
}

static PyObject *model_vocab_size(Model *self, PyObject *unused)
{
    (void)unused;
    if (check_model(self))
        return NULL;
    return PyLong_FromUnsignedLong(simdbpe_model_vocab_size(self->model));
}

/* token_bytes(id): the bytes of one token; TokenIdError (a KeyError whose
 * message is the id, as tiktoken's) when it has none. */
static PyObject *model_token_bytes(Model *self, PyObject *arg)
{
    uint32_t id;
    if (check_model(self) || id_arg(arg, &id, "token", -1) < 0)
        return NULL;
    const uint8_t *b;
    size_t len;
    if (simdbpe_model_token_bytes(self->model, id, &b, &len) != SIMDBPE_OK) {
        char msg[16];
        snprintf(msg, sizeof msg, "%u", id);
        return raise_token_id(msg, SIMDBPE_NO_POSITION);
    }
    return PyBytes_FromStringAndSize((const char *)b, (Py_ssize_t)len);
}

/* token_table() -> [bytes or None]: every id's bytes, None for ids
 * without a token. */
static PyObject *model_token_table(Model *self, PyObject *unused)
{
    (void)unused;
    if (check_model(self))
        return NULL;
    uint32_t n = simdbpe_model_vocab_size(self->model);
    PyObject *out = PyList_New((Py_ssize_t)n);
    for (uint32_t id = 0; out && id < n; id++) {
        const uint8_t *b;
        size_t len;
        PyObject *v = simdbpe_model_token_bytes(self->model, id, &b, &len) == SIMDBPE_OK
                          ? PyBytes_FromStringAndSize((const char *)b, (Py_ssize_t)len)
                          : Py_NewRef(Py_None);
        if (!v) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)id, v);
    }
    return out;
}

static PyObject *model_pattern(Model *self, PyObject *unused)
{
    (void)unused;
    if (check_model(self))
        return NULL;
    const char *p = simdbpe_model_pattern(self->model);
    if (!p)
        Py_RETURN_NONE;
    return PyUnicode_FromString(p);
}

/* decodes_per_token() -> simdbpe_model_decodes_per_token: False for a
 * SentencePiece-style model (its tokens are vocabulary strings, decoded
 * by its decoder chain), True for byte-level ones. */
static PyObject *model_decodes_per_token(Model *self, PyObject *unused)
{
    (void)unused;
    if (check_model(self))
        return NULL;
    return PyBool_FromLong(simdbpe_model_decodes_per_token(self->model));
}

/* eot() -> the model's end-of-text id (simdbpe_model_eot), or None. */
static PyObject *model_eot(Model *self, PyObject *unused)
{
    (void)unused;
    if (check_model(self))
        return NULL;
    uint32_t id;
    if (simdbpe_model_eot(self->model, &id) != SIMDBPE_OK)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLong(id);
}

static PyObject *model_pretokenizer(Model *self, PyObject *unused)
{
    (void)unused;
    if (check_model(self))
        return NULL;
    return PyUnicode_FromString(simdbpe_model_pretokenizer(self->model));
}

/* image() -> bytes: the model compiled (the .sbpe format), which
 * model_from_image opens again: how a model with no file pickles. */
static PyObject *model_image(Model *self, PyObject *unused)
{
    (void)unused;
    if (check_model(self))
        return NULL;
    size_t n = simdbpe_model_compiled_size(self->model), got;
    PyObject *res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (!res)
        return NULL;
    simdbpe_error err;
    simdbpe_status st = simdbpe_model_compile(self->model, PyBytes_AS_STRING(res), n, &got, &err);
    if (st != SIMDBPE_OK) {
        Py_DECREF(res);
        return raise_nomem(st, &err);
    }
    return res;
}

/* specials() -> [(text: bytes, id: int, flags: int)]: every added token
 * (flags SIMDBPE_ADDED_*). */
static PyObject *model_specials(Model *self, PyObject *unused)
{
    (void)unused;
    if (check_model(self))
        return NULL;
    size_t n = simdbpe_model_special_count(self->model);
    PyObject *out = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; out && i < n; i++) {
        uint32_t id;
        const char *text;
        size_t len;
        simdbpe_model_special_at(self->model, i, &id, &text, &len);
        PyObject *item = Py_BuildValue("(y#kI)", text, (Py_ssize_t)len, (unsigned long)id,
                                       simdbpe_model_special_flags(self->model, i));
        if (!item) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, item);
    }
    return out;
}

/* ------------------------------------------------------------- datasets */

/* The paths of encode_files: a list of bytes (os.fsencode'd by __init__.py),
 * borrowed from `list`, which outlives the run. */
static const char **dataset_paths(PyObject *list, size_t *n)
{
    if (!PyList_Check(list)) {
        PyErr_SetString(PyExc_TypeError, "paths must be a list of bytes");
        return NULL;
    }
    *n = (size_t)PyList_GET_SIZE(list);
    const char **p = PyMem_Malloc((*n ? *n : 1) * sizeof *p);
    if (!p)
        return (const char **)PyErr_NoMemory();
    for (size_t i = 0; i < *n; i++) {
        PyObject *b = PyList_GET_ITEM(list, (Py_ssize_t)i);
        if (!PyBytes_Check(b) || !(p[i] = PyBytes_AsString(b))) {
            PyMem_Free(p);
            PyErr_SetString(PyExc_TypeError, "paths must be a list of bytes");
            return NULL;
        }
    }
    return p;
}

/* Raises Error for a failed run: the whole message, status, and where
 * (path and `index` in the list, line, byte offset). */
static PyObject *raise_dataset_error(simdbpe_status st, const simdbpe_error *err,
                                     const simdbpe_dataset *ds, PyObject *paths)
{
    if (st == SIMDBPE_ERR_NOMEM)
        return PyErr_NoMemory();
    const char *msg = ds ? simdbpe_dataset_message(ds) : err->message;
    PyObject *exc = PyObject_CallFunction(Error, "O&", PyUnicode_DecodeFSDefault, msg);
    if (!exc)
        return NULL;
    uint64_t none = SIMDBPE_NO_POSITION;
    int has_path = err->index != none && err->index < (uint64_t)PyList_GET_SIZE(paths);
    PyObject *given = has_path ? PyList_GET_ITEM(paths, (Py_ssize_t)err->index) : NULL;
    static const char *const names[] = {"status", "byte_offset", "document",
                                        "index",  "path",        "line"};
    PyObject *vals[] = {
        PyUnicode_FromString(simdbpe_status_name(st)),
        position_or_none(err->byte_offset),
        Py_NewRef(Py_None),
        position_or_none(err->index),
        given ? PyUnicode_DecodeFSDefault(PyBytes_AsString(given)) : Py_NewRef(Py_None),
        err->line ? PyLong_FromUnsignedLongLong(err->line) : Py_NewRef(Py_None)};
    raise_with(exc, names, vals, 6);
    return NULL;
}

/* A run's totals as a dict. */
static PyObject *dataset_totals(const simdbpe_dataset *ds)
{
    const simdbpe_dataset_result *r = simdbpe_dataset_result_of(ds);
    PyObject *skips = PyList_New((Py_ssize_t)r->n_skipped_documents);
    for (size_t i = 0; skips && i < r->n_skipped_documents; i++) {
        PyObject *m = PyUnicode_DecodeFSDefault(r->skipped_documents[i]);
        if (!m) {
            Py_CLEAR(skips);
            break;
        }
        PyList_SET_ITEM(skips, (Py_ssize_t)i, m);
    }
    PyObject *files = skips ? PyList_New((Py_ssize_t)r->n_files) : NULL;
    for (size_t i = 0; files && i < r->n_files; i++) {
        PyObject *f = Py_BuildValue("{sKsKsK}", "documents", r->files[i].documents, "tokens",
                                    r->files[i].tokens, "skipped", r->files[i].skipped);
        if (!f) {
            Py_CLEAR(files);
            break;
        }
        PyList_SET_ITEM(files, (Py_ssize_t)i, f);
    }
    PyObject *d = NULL;
    if (files)
        d = Py_BuildValue("{sKsKsKsKsKsKsOsOsdsssIsIsOsN}", "documents", r->documents, "tokens",
                          r->tokens, "bytes", r->bytes, "text_bytes", r->text_bytes, "skipped",
                          r->skipped, "cuts", r->cuts, "skipped_documents", skips, "files",
                          files, "seconds", r->seconds, "kernel", r->kernel ? r->kernel : "",
                          "threads", r->threads, "cache_mb", r->cache_mb, "already_done",
                          simdbpe_dataset_already_done(ds) ? Py_True : Py_False, "eot_token",
                          r->eot == SIMDBPE_EOT_NONE ? Py_NewRef(Py_None)
                                                     : PyLong_FromUnsignedLong(r->eot_id));
    Py_XDECREF(skips);
    Py_XDECREF(files);
    return d;
}

/* What a run's callbacks share with encode_files: the caller's callables
 * (or NULL), the notices so far, and an exception one of them raised (or
 * KeyboardInterrupt), which stops the run and is raised when it returns. */
typedef struct py_run {
    PyObject *progress, *on_message, *notices;
    PyObject *exc_type, *exc_value, *exc_tb;
} py_run;

/* After each batch, from whichever thread writes it (the GIL taken for the
 * call): the caller's progress callable, then pending signals (Ctrl-C), which
 * Python handles only when the thread that wrote is the main one; with
 * several threads the caller's thread writes some of the batches. */
static int py_run_progress(void *user, uint64_t raw, uint64_t bytes, uint64_t docs)
{
    py_run *r = user;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = r->exc_type != NULL;
    if (!stop && r->progress) {
        PyObject *res = PyObject_CallFunction(r->progress, "KKK", (unsigned long long)raw,
                                              (unsigned long long)bytes,
                                              (unsigned long long)docs);
        stop = res == NULL;
        Py_XDECREF(res);
    }
    if (!stop)
        stop = PyErr_CheckSignals() < 0;
    if (stop && !r->exc_type)
        PyErr_Fetch(&r->exc_type, &r->exc_value, &r->exc_tb);
    PyGILState_Release(g);
    return stop;
}

/* A skipped document or a notice: to the caller's callable ("skipped" or
 * "notice", text); notices are kept for the result too. */
static void py_run_message(void *user, simdbpe_dataset_event ev, const char *text)
{
    py_run *r = user;
    PyGILState_STATE g = PyGILState_Ensure();
    if (!r->exc_type) {
        PyObject *t = PyUnicode_DecodeFSDefault(text);
        int ok = t != NULL;
        if (ok && ev == SIMDBPE_DATASET_NOTICE)
            ok = PyList_Append(r->notices, t) == 0;
        if (ok && r->on_message) {
            PyObject *res = PyObject_CallFunction(
                r->on_message, "sO", ev == SIMDBPE_DATASET_NOTICE ? "notice" : "skipped", t);
            ok = res != NULL;
            Py_XDECREF(res);
        }
        Py_XDECREF(t);
        if (!ok)
            PyErr_Fetch(&r->exc_type, &r->exc_value, &r->exc_tb); /* stops at the next batch */
    }
    PyGILState_Release(g);
}

/* new + prepare + run without the GIL. */
static simdbpe_status dataset_encode(const simdbpe_model *m, const simdbpe_dataset_options *o,
                                     const char **paths, size_t n, simdbpe_dataset **ds,
                                     simdbpe_error *err)
{
    simdbpe_status st;
    Py_BEGIN_ALLOW_THREADS st = simdbpe_dataset_new(m, o, ds, err);
    if (st == SIMDBPE_OK)
        st = simdbpe_dataset_prepare(*ds, paths, n, err);
    if (st == SIMDBPE_OK)
        st = simdbpe_dataset_run(*ds, err);
    Py_END_ALLOW_THREADS return st;
}

/* encode_files(paths, output, options...): see simdbpe.encode_files. */
static PyObject *model_encode_files(Model *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"paths", "output", "input_format", "json_key", "doc_separator",
                            "special", "errors", "add_special_tokens", "skip_errors",
                            "output_format", "eot", "dtype_bytes", "shard_tokens", "model_name",
                            "threads", "cache_mb", "batch_bytes", "rank", "world_size",
                            "progress", "on_message", "eot_token", NULL};
    PyObject *list;
    const char *output = NULL, *sep = NULL;
    Py_ssize_t sep_len = 0;
    int input = 0, special = 0, errors = 0, add = 0, skip = 0, format = 1, eot = 0;
    unsigned dtype = 0, threads = 0, cache_mb = 0;
    unsigned long long shard = 0, batch = 0;
    long rank = 0, world = 0;
    py_run r = {0};
    simdbpe_dataset_options o;
    simdbpe_dataset_options_init(&o);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Oy|izz#iippiiIKzIIKllOOz", names, &list,
                                     &output, &input, &o.json_key, &sep, &sep_len, &special,
                                     &errors, &add, &skip, &format, &eot, &dtype, &shard,
                                     &o.model_name, &threads, &cache_mb, &batch, &rank, &world,
                                     &r.progress, &r.on_message, &o.eot_token) ||
        check_model(self) || parse_options(special, errors, &o.encode))
        return NULL;
    if (r.progress == Py_None)
        r.progress = NULL;
    if (r.on_message == Py_None)
        r.on_message = NULL;
    if ((r.progress && !PyCallable_Check(r.progress)) ||
        (r.on_message && !PyCallable_Check(r.on_message))) {
        PyErr_SetString(PyExc_TypeError, "progress and on_message must be callables or None");
        return NULL;
    }
    if (!(r.notices = PyList_New(0)))
        return NULL;
    o.on_progress = py_run_progress;
    o.on_message = py_run_message;
    o.user = &r;
    o.input_format = (simdbpe_input_format)input;
    o.doc_separator = sep;
    o.doc_separator_len = (size_t)sep_len;
    o.encode.add_special_tokens = add;
    o.skip_errors = skip;
    o.output_format = (simdbpe_output_format)format;
    o.output = output;
    o.eot = (simdbpe_eot)eot;
    o.dtype_bytes = dtype;
    o.shard_tokens = shard;
    o.threads = threads;
    o.cache_mb = cache_mb;
    o.batch_bytes = (size_t)batch;
    o.rank = rank;
    o.world_size = world;
    size_t n;
    const char **paths = dataset_paths(list, &n);
    if (!paths) {
        Py_DECREF(r.notices);
        return NULL;
    }
    simdbpe_dataset *ds = NULL;
    simdbpe_error err;
    simdbpe_status st = dataset_encode(self->model, &o, paths, n, &ds, &err);
    PyObject *res = NULL;
    if (r.exc_type) /* a callback's exception, or Ctrl-C: the run stopped for it */
        PyErr_Restore(r.exc_type, r.exc_value, r.exc_tb);
    else if (st != SIMDBPE_OK)
        raise_dataset_error(st, &err, ds, list);
    else if ((res = dataset_totals(ds)) != NULL &&
             PyDict_SetItemString(res, "notices", r.notices) < 0)
        Py_CLEAR(res);
    simdbpe_dataset_free(ds);
    PyMem_Free(paths);
    Py_DECREF(r.notices);
    return res;
}

static PyObject *model_add_tokens(Model *self, PyObject *arg);

static PyMethodDef model_methods[] = {
    {"encode_files", (PyCFunction)(void (*)(void))model_encode_files,
     METH_VARARGS | METH_KEYWORDS,
     "encode_files(paths, output, ...): a dataset run (simdbpe_dataset.h); returns its totals."},
    {"encode", (PyCFunction)(void (*)(void))model_encode, METH_VARARGS | METH_KEYWORDS,
     "encode(text, special=0, errors=0, buffer=False): ids of one str or bytes text; "
     "special 0 text, 1 allow, 2 error; errors 0 strict, 1 replace."},
    {"encode_batch", (PyCFunction)(void (*)(void))model_encode_batch,
     METH_VARARGS | METH_KEYWORDS,
     "encode_batch(texts, special=0, errors=0, threads=1, buffer=False): a list of id lists, "
     "or (ids, offsets) Buffers."},
    {"decode_bytes", (PyCFunction)model_decode_bytes, METH_O, "The bytes of a sequence of ids."},
    {"vocab_size", (PyCFunction)model_vocab_size, METH_NOARGS, "One more than the largest id."},
    {"token_bytes", (PyCFunction)model_token_bytes, METH_O, "The bytes of one token."},
    {"token_table", (PyCFunction)model_token_table, METH_NOARGS,
     "Every id's bytes (None for ids without a token)."},
    {"pattern", (PyCFunction)model_pattern, METH_NOARGS,
     "The pre-tokenizer's regex (simdbpe_model_pattern), or None."},
    {"decodes_per_token", (PyCFunction)model_decodes_per_token, METH_NOARGS,
     "False for a SentencePiece-style model (simdbpe_model_decodes_per_token)."},
    {"eot", (PyCFunction)model_eot, METH_NOARGS,
     "The model's end-of-text id (simdbpe_model_eot), or None."},
    {"pretokenizer", (PyCFunction)model_pretokenizer, METH_NOARGS,
     "The pre-tokenizer family's name."},
    {"image", (PyCFunction)model_image, METH_NOARGS, "The model compiled (.sbpe bytes)."},
    {"add_tokens", (PyCFunction)model_add_tokens, METH_O,
     "add_tokens([(text, flags)]): (a new Model with them added, HF's count)."},
    {"specials", (PyCFunction)model_specials, METH_NOARGS,
     "[(text bytes, id, flags)] of the added tokens (flags: 1 special, 2 normalized, 4 also "
     "in the BPE vocabulary)."},
    {"encode_offsets", (PyCFunction)(void (*)(void))model_encode_offsets,
     METH_VARARGS | METH_KEYWORDS,
     "encode_offsets(text, special=0, errors=0, add_special_tokens=0): (ids, [(start, end)], "
     "[piece]), offsets in characters of a str (bytes of bytes)."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "simdbpe._simdbpe.Model",
    .tp_basicsize = sizeof(Model),
    .tp_dealloc = (destructor)model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Model(name_or_path): a model opened with simdbpe_model_open.",
    .tp_methods = model_methods,
    .tp_init = (initproc)model_init,
    .tp_new = PyType_GenericNew,
};

/* --------------------------------------------------------------- Trainer */

typedef struct {
    PyObject_HEAD simdbpe_trainer *t;
    int busy; /* a call runs without the GIL: the trainer is for one thread at a time */
} Trainer;

static const char *const MODES[] = {"lines", "documents", NULL};
static const char *const ERRORS[] = {"strict", "replace", NULL};

static int pick(const char *what, const char *value, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(value, names[i]))
            return i;
    PyErr_Format(PyExc_ValueError, "unknown %s '%s'", what, value);
    return -1;
}

static int trainer_init(Trainer *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"vocab_size", "min_frequency", "special_tokens", "mode",
                            "doc_separator", "pre_tokenizer", "threads", "errors", NULL};
    unsigned vocab = 30000, threads = 0;
    unsigned long long min_freq = 0;
    PyObject *specials = NULL;
    const char *mode = "lines", *errors = "strict", *pretok = "gpt2";
    const char *sep = NULL;
    Py_ssize_t sep_len = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|IKOsz#sIs", names, &vocab, &min_freq,
                                     &specials, &mode, &sep, &sep_len, &pretok, &threads,
                                     &errors))
        return -1;
    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    o.vocab_size = vocab;
    o.min_frequency = min_freq;
    o.threads = threads;
    o.pre_tokenizer = pretok;
    o.doc_separator = sep;
    o.doc_separator_len = (size_t)sep_len;
    int m = pick("mode", mode, MODES), e = pick("errors", errors, ERRORS);
    if (m < 0 || e < 0)
        return -1;
    o.mode = m ? SIMDBPE_TRAIN_DOCUMENTS : SIMDBPE_TRAIN_LINES;
    o.errors = e ? SIMDBPE_UTF8_REPLACE : SIMDBPE_UTF8_STRICT;
    PyObject *seq = NULL;
    const char **texts = NULL;
    if (specials && specials != Py_None) {
        if (!(seq = PySequence_Fast(specials, "special_tokens must be a sequence of str")))
            return -1;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        texts = PyMem_Calloc(n ? (size_t)n : 1, sizeof *texts);
        for (Py_ssize_t i = 0; texts && i < n; i++)
            if (!(texts[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i)))) {
                PyMem_Free(texts);
                Py_DECREF(seq);
                return -1;
            }
        o.specials = texts;
        o.n_specials = (size_t)n;
    }
    simdbpe_trainer_free(self->t);
    self->t = NULL;
    simdbpe_error err;
    simdbpe_status st = simdbpe_trainer_new(&o, &self->t, &err);
    PyMem_Free(texts);
    Py_XDECREF(seq);
    if (st != SIMDBPE_OK) {
        raise_nomem(st, &err);
        return -1;
    }
    return 0;
}

static void trainer_dealloc(Trainer *self)
{
    simdbpe_trainer_free(self->t);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Takes the trainer for a call (0), or raises. */
static int check_trainer(Trainer *self)
{
    if (!self->t) {
        PyErr_SetString(PyExc_ValueError, "simdbpe: trainer not created");
        return -1;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "simdbpe: the trainer is in use by another thread (one at a time)");
        return -1;
    }
    self->busy = 1;
    return 0;
}

static PyObject *trainer_failed(simdbpe_status st, const simdbpe_error *err)
{
    raise_nomem(st, err);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (value && PyObject_IsInstance(value, Error) == 1 && err->line) {
        PyObject *line = PyLong_FromUnsignedLongLong(err->line);
        if (line)
            PyObject_SetAttrString(value, "index", line);
        Py_XDECREF(line);
    }
    PyErr_Restore(type, value, tb);
    return NULL;
}

/* feed(data): the next bytes of the current stream (bytes-like or str). */
static PyObject *trainer_feed(Trainer *self, PyObject *arg)
{
    if (check_trainer(self))
        return NULL;
    const char *s;
    size_t len;
    Py_buffer view;
    if (text_bytes(arg, &s, &len, &view)) {
        self->busy = 0;
        return NULL;
    }
    simdbpe_error err;
    simdbpe_status st;
    Py_BEGIN_ALLOW_THREADS st = simdbpe_trainer_feed(self->t, s, len, &err);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (view.obj)
        PyBuffer_Release(&view);
    if (st != SIMDBPE_OK)
        return trainer_failed(st, &err);
    Py_RETURN_NONE;
}

/* One step of the trainer that takes nothing but the trainer, without the
 * GIL: 0, or -1 with the exception set. */
static int trainer_step(Trainer *self, simdbpe_status (*step)(simdbpe_trainer *, simdbpe_error *))
{
    if (check_trainer(self))
        return -1;
    simdbpe_error err;
    simdbpe_status st;
    Py_BEGIN_ALLOW_THREADS st = step(self->t, &err);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (st == SIMDBPE_OK)
        return 0;
    trainer_failed(st, &err);
    return -1;
}

static PyObject *trainer_end_stream(Trainer *self, PyObject *unused)
{
    (void)unused;
    if (trainer_step(self, simdbpe_trainer_end_stream))
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *trainer_train(Trainer *self, PyObject *unused)
{
    (void)unused;
    if (trainer_step(self, simdbpe_trainer_train))
        return NULL;
    return Py_BuildValue("(InK)", simdbpe_trainer_vocab_size(self->t),
                         (Py_ssize_t)simdbpe_trainer_merge_count(self->t),
                         (unsigned long long)simdbpe_trainer_unique_words(self->t));
}

static PyObject *trainer_save(Trainer *self, PyObject *arg)
{
    if (check_trainer(self))
        return NULL;
    PyObject *path = NULL;
    if (!PyUnicode_FSConverter(arg, &path)) {
        self->busy = 0;
        return NULL;
    }
    simdbpe_error err;
    simdbpe_status st;
    const char *dir = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS st = simdbpe_trainer_save(self->t, dir, &err);
    Py_END_ALLOW_THREADS self->busy = 0;
    Py_DECREF(path);
    if (st != SIMDBPE_OK)
        return trainer_failed(st, &err);
    Py_RETURN_NONE;
}

static PyMethodDef trainer_methods[] = {
    {"feed", (PyCFunction)trainer_feed, METH_O,
     "feed(data): the next bytes (or str) of the current stream."},
    {"end_stream", (PyCFunction)trainer_end_stream, METH_NOARGS,
     "Ends the current stream (a file, or one text)."},
    {"train", (PyCFunction)trainer_train, METH_NOARGS,
     "Computes the merges; returns (vocab size, merges, unique words)."},
    {"save", (PyCFunction)trainer_save, METH_O,
     "save(dir): vocab.json, merges.txt, tokenizer.json [, special_tokens], atomically."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject TrainerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "simdbpe._simdbpe.Trainer",
    .tp_basicsize = sizeof(Trainer),
    .tp_dealloc = (destructor)trainer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Trainer(vocab_size=30000, min_frequency=0, special_tokens=None, mode='lines', "
              "doc_separator=None, pre_tokenizer='gpt2', threads=0, errors='strict'): one "
              "simdbpe_trainer.",
    .tp_methods = trainer_methods,
    .tp_init = (initproc)trainer_init,
    .tp_new = PyType_GenericNew,
};

/* ----------------------------------------------------------------- Input */

/* One input read as the dataset engine reads it (simdbpe_dataset_input):
 * gzip and zstd decompressed as a stream; simdbpe.open_input wraps it as
 * a Python file object. */
typedef struct {
    PyObject_HEAD simdbpe_dataset_input *in;
    PyObject *path;
} Input;

static int input_init(Input *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"path", NULL};
    PyObject *path;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&", names, PyUnicode_FSConverter, &path))
        return -1;
    simdbpe_dataset_input_close(self->in);
    self->in = NULL;
    Py_XSETREF(self->path, path);
    simdbpe_error err;
    simdbpe_status st;
    const char *p = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS st = simdbpe_dataset_input_open(p, &self->in, &err);
    Py_END_ALLOW_THREADS if (st != SIMDBPE_OK)
    {
        if (st == SIMDBPE_ERR_NOMEM)
            PyErr_NoMemory();
        else
            PyErr_Format(PyExc_OSError, "%s: %s", p, err.message);
        return -1;
    }
    return 0;
}

static void input_dealloc(Input *self)
{
    simdbpe_dataset_input_close(self->in);
    Py_XDECREF(self->path);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* readinto(buffer) -> count (0 at the end); OSError (the file and the
 * reason) for a damaged stream. */
static PyObject *input_readinto(Input *self, PyObject *arg)
{
    if (!self->in) {
        PyErr_SetString(PyExc_ValueError, "read of a closed input");
        return NULL;
    }
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_WRITABLE) < 0)
        return NULL;
    simdbpe_error err;
    long got;
    Py_BEGIN_ALLOW_THREADS got = simdbpe_dataset_input_read(self->in, b.buf, (size_t)b.len, &err);
    Py_END_ALLOW_THREADS PyBuffer_Release(&b);
    if (got < 0)
        return PyErr_Format(PyExc_OSError, "%s: %s", PyBytes_AS_STRING(self->path), err.message);
    return PyLong_FromLong(got);
}

static PyObject *input_close(Input *self, PyObject *unused)
{
    (void)unused;
    simdbpe_dataset_input_close(self->in);
    self->in = NULL;
    Py_RETURN_NONE;
}

static PyMethodDef input_methods[] = {
    {"readinto", (PyCFunction)input_readinto, METH_O,
     "readinto(buffer): decompressed bytes into buffer; their count, 0 at the end."},
    {"close", (PyCFunction)input_close, METH_NOARGS, "Closes the input."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject InputType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "simdbpe._simdbpe.Input",
    .tp_basicsize = sizeof(Input),
    .tp_dealloc = (destructor)input_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Input(path): a file read as the dataset engine reads it (gzip and zstd "
              "decompressed; \"-\" is standard input).",
    .tp_methods = input_methods,
    .tp_init = (initproc)input_init,
    .tp_new = PyType_GenericNew,
};

/* ---------------------------------------------------------------- module */

static PyObject *mod_version(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyUnicode_FromString(simdbpe_version());
}

/* ids_buffer(ids) -> Buffer: a list of ids (or a uint32 buffer) packed. */
static PyObject *mod_ids_buffer(PyObject *m, PyObject *arg)
{
    (void)m;
    size_t n;
    Py_buffer view;
    int owned;
    uint32_t *ids = ids_arg(arg, &n, &view, &owned);
    if (!ids)
        return NULL;
    uint32_t *copy = malloc(n ? n * sizeof *copy : 1);
    if (copy)
        memcpy(copy, ids, n * sizeof *copy);
    if (owned)
        PyMem_Free(ids);
    if (view.obj)
        PyBuffer_Release(&view);
    return copy ? buffer_wrap(copy, n, 0) : PyErr_NoMemory();
}

/* A Model object over `model` (taken over), or NULL. */
static PyObject *model_wrap(simdbpe_model *model)
{
    Model *m = (Model *)ModelType.tp_alloc(&ModelType, 0);
    if (!m) {
        simdbpe_model_free(model);
        return NULL;
    }
    m->model = model;
    return (PyObject *)m;
}

/* add_tokens([(text, flags)]) -> (Model, count): simdbpe_model_add_tokens. */
static PyObject *model_add_tokens(Model *self, PyObject *arg)
{
    if (check_model(self))
        return NULL;
    PyObject *seq = PySequence_Fast(arg, "tokens must be a sequence of (str, flags)");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    simdbpe_added_token *t = PyMem_Calloc((size_t)n + 1, sizeof *t);
    PyObject *res = NULL;
    if (!t) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        Py_ssize_t len;
        unsigned long flags;
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 ||
            !(t[i].text = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(item, 0), &len)) ||
            ((flags = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(item, 1))) == (unsigned long)-1 &&
             PyErr_Occurred())) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "tokens must be (str, flags) pairs");
            goto done;
        }
        t[i].len = (size_t)len;
        t[i].flags = (unsigned)flags;
    }
    simdbpe_model *m = NULL;
    size_t count = 0;
    simdbpe_error err;
    simdbpe_status st;
    Py_BEGIN_ALLOW_THREADS st = simdbpe_model_add_tokens(self->model, t, (size_t)n, &m, &count, &err);
    Py_END_ALLOW_THREADS if (st != SIMDBPE_OK) raise_nomem(st, &err);
    else
    {
        PyObject *model = model_wrap(m);
        if (model)
            res = Py_BuildValue("(Nn)", model, (Py_ssize_t)count);
    }
done:
    PyMem_Free(t);
    Py_DECREF(seq);
    return res;
}

/* model_from_tiktoken(ranks, encoding=None, pat_str=None, specials=None):
 * a Model from a rank file's contents (simdbpe_model_load_tiktoken_with);
 * specials a list of (text, id). */
static PyObject *mod_model_from_tiktoken(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *names[] = {"ranks", "encoding", "pat_str", "specials", NULL};
    Py_buffer ranks;
    simdbpe_tiktoken_options o = SIMDBPE_TIKTOKEN_OPTIONS_INIT;
    PyObject *specials = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*|zzO", names, &ranks, &o.encoding, &o.pat_str,
                                     &specials))
        return NULL;
    PyObject *seq = NULL, *res = NULL;
    const char **texts = NULL;
    uint32_t *ids = NULL;
    if (specials != Py_None) {
        if (!(seq = PySequence_Fast(specials, "specials must be a sequence of (text, id)")))
            goto done;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        texts = PyMem_Calloc((size_t)n + 1, sizeof *texts);
        ids = PyMem_Calloc((size_t)n + 1, sizeof *ids);
        if (!texts || !ids) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
            if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 ||
                !(texts[i] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(item, 0))) ||
                id_arg(PyTuple_GET_ITEM(item, 1), &ids[i], "special token id", -1) < 0) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_TypeError, "specials must be (str, int) pairs");
                goto done;
            }
        }
        o.special_texts = texts;
        o.special_ids = ids;
        o.n_specials = (size_t)n;
    }
    simdbpe_model *m = NULL;
    simdbpe_error err;
    simdbpe_status st;
    Py_BEGIN_ALLOW_THREADS st =
        simdbpe_model_load_tiktoken_with(ranks.buf, (size_t)ranks.len, &o, &m, &err);
    Py_END_ALLOW_THREADS if (st != SIMDBPE_OK) raise_nomem(st, &err);
    else res = model_wrap(m);
done:
    PyMem_Free(texts);
    PyMem_Free(ids);
    Py_XDECREF(seq);
    PyBuffer_Release(&ranks);
    return res;
}

/* model_from_buffer(data, name=None): a Model from a model file's contents
 * (simdbpe_model_load_buffer). */
static PyObject *mod_model_from_buffer(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *names[] = {"data", "name", NULL};
    Py_buffer b;
    const char *name = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*|z", names, &b, &name))
        return NULL;
    simdbpe_model *m = NULL;
    simdbpe_error err;
    simdbpe_status st;
    Py_BEGIN_ALLOW_THREADS st = simdbpe_model_load_buffer(b.buf, (size_t)b.len, name, &m, &err);
    Py_END_ALLOW_THREADS PyBuffer_Release(&b);
    if (st != SIMDBPE_OK)
        return raise_nomem(st, &err);
    return model_wrap(m);
}

/* A path the library returned (NULL: None), released. */
static PyObject *take_path(char *path)
{
    if (!path)
        Py_RETURN_NONE;
    PyObject *s = PyUnicode_DecodeFSDefault(path);
    simdbpe_free(path);
    return s;
}

/* locate(name) -> str or None: simdbpe_model_locate. */
static PyObject *mod_locate(PyObject *mod, PyObject *arg)
{
    (void)mod;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    char *path;
    simdbpe_error err;
    simdbpe_status st;
    Py_BEGIN_ALLOW_THREADS st = simdbpe_model_locate(name, &path, &err);
    Py_END_ALLOW_THREADS if (st != SIMDBPE_OK) return raise_nomem(st, &err);
    return take_path(path);
}

/* find_pretrained(repo_id, revision=None) -> str:
 * simdbpe_model_find_pretrained. */
static PyObject *mod_find_pretrained(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *names[] = {"repo_id", "revision", NULL};
    const char *repo_id, *revision = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|z", names, &repo_id, &revision))
        return NULL;
    char *path;
    simdbpe_error err;
    simdbpe_status st;
    Py_BEGIN_ALLOW_THREADS st = simdbpe_model_find_pretrained(repo_id, revision, &path, &err);
    Py_END_ALLOW_THREADS if (st != SIMDBPE_OK) return raise_nomem(st, &err);
    return take_path(path);
}

/* expand_inputs([bytes]) -> [bytes]: simdbpe_dataset_expand_inputs (globs,
 * @LIST); OSError or ValueError naming the argument. */
static PyObject *mod_expand_inputs(PyObject *mod, PyObject *arg)
{
    (void)mod;
    size_t n;
    const char **args = dataset_paths(arg, &n);
    if (!args)
        return NULL;
    char **paths;
    size_t n_paths;
    simdbpe_error err;
    simdbpe_status st = simdbpe_dataset_expand_inputs(args, n, &paths, &n_paths, &err);
    PyMem_Free(args);
    if (st != SIMDBPE_OK) {
        if (st == SIMDBPE_ERR_NOMEM)
            return PyErr_NoMemory();
        PyObject *msg = PyUnicode_DecodeFSDefault(err.message);
        if (msg)
            PyErr_SetObject(st == SIMDBPE_ERR_IO ? PyExc_OSError : PyExc_ValueError, msg);
        Py_XDECREF(msg);
        return NULL;
    }
    PyObject *out = PyList_New((Py_ssize_t)n_paths);
    for (size_t i = 0; out && i < n_paths; i++) {
        PyObject *b = PyBytes_FromString(paths[i]);
        if (!b) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, b);
    }
    simdbpe_dataset_inputs_free(paths, n_paths);
    return out;
}

/* model_from_image(data): a Model from a compiled image (Model.image). */
static PyObject *mod_model_from_image(PyObject *mod, PyObject *arg)
{
    (void)mod;
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0)
        return NULL;
    simdbpe_model *m = NULL;
    simdbpe_error err;
    simdbpe_status st;
    Py_BEGIN_ALLOW_THREADS st = simdbpe_model_load_compiled(b.buf, (size_t)b.len, &m, &err);
    Py_END_ALLOW_THREADS PyBuffer_Release(&b);
    if (st != SIMDBPE_OK)
        return raise_nomem(st, &err);
    return model_wrap(m);
}

static PyMethodDef module_methods[] = {
    {"model_from_tiktoken", (PyCFunction)(void (*)(void))mod_model_from_tiktoken,
     METH_VARARGS | METH_KEYWORDS,
     "model_from_tiktoken(ranks, encoding=None, pat_str=None, specials=None): a Model from "
     "a rank file's contents."},
    {"model_from_buffer", (PyCFunction)(void (*)(void))mod_model_from_buffer,
     METH_VARARGS | METH_KEYWORDS,
     "model_from_buffer(data, name=None): a Model from a model file's contents."},
    {"expand_inputs", mod_expand_inputs, METH_O,
     "expand_inputs([bytes]): the paths the arguments name (globs, @LIST), as `simdbpe "
     "encode` takes them."},
    {"locate", mod_locate, METH_O,
     "locate(name): the path simdbpe_model_open(name) reads, None for a built-in name."},
    {"find_pretrained", (PyCFunction)(void (*)(void))mod_find_pretrained,
     METH_VARARGS | METH_KEYWORDS,
     "find_pretrained(repo_id, revision=None): the repo's tokenizer.json in the local "
     "Hugging Face cache."},
    {"model_from_image", mod_model_from_image, METH_O,
     "model_from_image(data): a Model from a compiled image (Model.image())."},
    {"version", mod_version, METH_NOARGS, "The version of the linked library."},
    {"ids_buffer", mod_ids_buffer, METH_O, "A Buffer holding a sequence of ids."},
    {NULL, NULL, 0, NULL}};

/* The library's names of a kind of value (simdbpe_dataset.h), as a tuple
 * indexed by value: name(0), name(1), ... up to the first NULL. */
static PyObject *names_tuple(const char *(*name)(unsigned))
{
    Py_ssize_t n = 0;
    while (name((unsigned)n))
        n++;
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t && i < n; i++) {
        PyObject *s = PyUnicode_FromString(name((unsigned)i));
        if (!s) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}

static const char *input_format_name(unsigned v)
{
    return simdbpe_input_format_name((simdbpe_input_format)v);
}
static const char *output_format_name(unsigned v)
{
    return simdbpe_output_format_name((simdbpe_output_format)v);
}
static const char *eot_name(unsigned v)
{
    return simdbpe_eot_name((simdbpe_eot)v);
}

/* Adds the tuple of names as module attribute `attr`; -1 on failure. */
static int add_names(PyObject *m, const char *attr, const char *(*name)(unsigned))
{
    PyObject *t = names_tuple(name);
    int rc = t ? PyModule_AddObjectRef(m, attr, t) : -1;
    Py_XDECREF(t);
    return rc;
}

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_simdbpe",
                                        "simdbpe's C extension (use the simdbpe package).", -1,
                                        module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__simdbpe(void);
PyMODINIT_FUNC PyInit__simdbpe(void)
{
    if (PyType_Ready(&BufferType) < 0 || PyType_Ready(&ModelType) < 0 ||
        PyType_Ready(&TrainerType) < 0 || PyType_Ready(&InputType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    Error = PyErr_NewExceptionWithDoc(
        "simdbpe.Error",
        "A failure of the simdbpe library: a ValueError with `status` (the library's status "
        "name), `byte_offset` (into the text), `document` (index in a batch) and `index` "
        "(position of a bad id); None where they do not apply.",
        PyExc_ValueError, NULL);
    PyObject *bases = Error ? PyTuple_Pack(2, Error, PyExc_KeyError) : NULL;
    if (bases)
        TokenIdError = PyErr_NewExceptionWithDoc(
            "simdbpe.TokenIdError",
            "An id that is not a token (decode, decode_single_token_bytes): both simdbpe.Error "
            "(status ERR_TOKEN_ID, `index` the id's position) and KeyError, as tiktoken raises.",
            bases, NULL);
    Py_XDECREF(bases);
    if (!Error || !TokenIdError || PyModule_AddObjectRef(m, "Error", Error) < 0 ||
        PyModule_AddObjectRef(m, "TokenIdError", TokenIdError) < 0 ||
        PyModule_AddObjectRef(m, "Model", (PyObject *)&ModelType) < 0 ||
        PyModule_AddObjectRef(m, "Trainer", (PyObject *)&TrainerType) < 0 ||
        PyModule_AddObjectRef(m, "Buffer", (PyObject *)&BufferType) < 0 ||
        PyModule_AddObjectRef(m, "Input", (PyObject *)&InputType) < 0 ||
        add_names(m, "INPUT_FORMATS", input_format_name) < 0 ||
        add_names(m, "OUTPUT_FORMATS", output_format_name) < 0 ||
        add_names(m, "EOTS", eot_name) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
