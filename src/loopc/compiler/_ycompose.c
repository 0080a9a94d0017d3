/* Optional compiled composer of the strict YAML layer (loopc.compiler.yamlload,
 * docs/architecture.md#the-yaml-layer).
 *
 * Builds the same YDocument tree as yamlload's pure-Python composer, straight
 * from libyaml's events, without an event object per event.  It handles only
 * clean documents: on anything the Python composer would report or treat
 * specially (a parse error, an anchor, alias or tag, a second document, an
 * empty one, a duplicate or complex key, a key starting with NUL, the node or
 * nesting budget, an invisible character starting a plain scalar) it returns None and yamlload
 * composes the text again in Python, which reports exactly as before.
 *
 * libyaml is the copy inside ruamel.yaml.clib's extension (the parser the
 * Python composer uses), found with dlopen/dlsym on that file, so both
 * composers read the very same events.  No libyaml is linked; yaml.h gives
 * the structure layouts.  If the build fails the package still installs and
 * yamlload uses the Python composer (setup.py, optional extension).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <dlfcn.h>
#include <string.h>
#include <yaml.h>

typedef int (*init_fn)(yaml_parser_t *);
typedef void (*delete_fn)(yaml_parser_t *);
typedef void (*input_fn)(yaml_parser_t *, const unsigned char *, size_t);
typedef int (*parse_fn)(yaml_parser_t *, yaml_event_t *);
typedef void (*event_delete_fn)(yaml_event_t *);

static init_fn p_init;
static delete_fn p_delete;
static input_fn p_input;
static parse_fn p_parse;
static event_delete_fn p_event_delete;

/* classes and helpers from Python (setup()) */
static PyTypeObject *T_scalar, *T_map, *T_seq;
static PyObject *C_links;         /* YLinks */
static PyObject *F_resolve;       /* resolve_plain */
static PyObject *S_special;       /* frozenset of plain scalars resolving to non-strings */
static PyObject *S_invisible;     /* frozenset of invisible characters */
static PyObject *STR_empty, *STR_squote, *STR_dquote, *STR_literal, *STR_folded, *STR_colls;
static Py_ssize_t max_nodes, max_nesting;

/* slot offsets */
static Py_ssize_t o_line, o_col, o_end_line, o_end_col, o_start, o_end, o_links, o_pidx, o_key;
static Py_ssize_t o_value, o_style, o_is_key, o_raw;
static Py_ssize_t o_kv, o_index, o_mflow, o_mlinks_root, o_idx;
static Py_ssize_t o_items, o_sflow, o_slinks_root;
static int ready;

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

static int
slot_offset(PyObject *cls, const char *name, Py_ssize_t *out)
{
    PyObject *d = PyObject_GetAttrString(cls, name);
    if (d == NULL)
        return -1;
    if (!Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        Py_DECREF(d);
        PyErr_Format(PyExc_TypeError, "%s is not a slot", name);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    if (m->type != T_OBJECT_EX) {
        Py_DECREF(d);
        PyErr_Format(PyExc_TypeError, "%s is not an object slot", name);
        return -1;
    }
    *out = m->offset;
    Py_DECREF(d);
    return 0;
}

/* set a slot that holds NULL (fresh object) or a value: steals ``v`` */
static inline void
set_slot(PyObject *obj, Py_ssize_t off, PyObject *v)
{
    PyObject *old = SLOT(obj, off);
    SLOT(obj, off) = v;
    Py_XDECREF(old);
}

static inline void
set_slot_ref(PyObject *obj, Py_ssize_t off, PyObject *v)
{
    Py_INCREF(v);
    set_slot(obj, off, v);
}

static PyObject *
ycompose_setup(PyObject *self, PyObject *args)
{
    const char *lib;
    PyObject *scalar, *map, *seq, *links, *resolve, *special, *invisible;
    if (!PyArg_ParseTuple(args, "sOOOOOOOnn", &lib, &scalar, &map, &seq, &links, &resolve, &special,
                          &invisible, &max_nodes, &max_nesting))
        return NULL;
    if (!PyType_Check(scalar) || !PyType_Check(map) || !PyType_Check(seq)) {
        PyErr_SetString(PyExc_TypeError, "node classes expected");
        return NULL;
    }
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        PyErr_Format(PyExc_ImportError, "cannot open %s", lib);
        return NULL;
    }
    p_init = (init_fn)dlsym(h, "yaml_parser_initialize");
    p_delete = (delete_fn)dlsym(h, "yaml_parser_delete");
    p_input = (input_fn)dlsym(h, "yaml_parser_set_input_string");
    p_parse = (parse_fn)dlsym(h, "yaml_parser_parse");
    p_event_delete = (event_delete_fn)dlsym(h, "yaml_event_delete");
    if (!p_init || !p_delete || !p_input || !p_parse || !p_event_delete) {
        PyErr_Format(PyExc_ImportError, "%s does not export libyaml's parser", lib);
        return NULL;
    }
    if (slot_offset(scalar, "line", &o_line) || slot_offset(scalar, "col", &o_col)
        || slot_offset(scalar, "end_line", &o_end_line) || slot_offset(scalar, "end_col", &o_end_col)
        || slot_offset(scalar, "start", &o_start) || slot_offset(scalar, "end", &o_end)
        || slot_offset(scalar, "_links", &o_links) || slot_offset(scalar, "_pidx", &o_pidx)
        || slot_offset(scalar, "key", &o_key) || slot_offset(scalar, "value", &o_value)
        || slot_offset(scalar, "style", &o_style) || slot_offset(scalar, "is_key", &o_is_key)
        || slot_offset(scalar, "raw", &o_raw) || slot_offset(map, "kv", &o_kv)
        || slot_offset(map, "index", &o_index) || slot_offset(map, "flow", &o_mflow)
        || slot_offset(map, "_links_root", &o_mlinks_root) || slot_offset(map, "_idx", &o_idx)
        || slot_offset(seq, "items", &o_items) || slot_offset(seq, "flow", &o_sflow)
        || slot_offset(seq, "_links_root", &o_slinks_root))
        return NULL;
    /* the base slots sit at the same offsets in the three classes */
    Py_ssize_t a, b;
    if (slot_offset(map, "line", &a) || slot_offset(seq, "end", &b))
        return NULL;
    if (a != o_line || b != o_end) {
        PyErr_SetString(PyExc_TypeError, "node classes disagree on their base slots");
        return NULL;
    }
    Py_XSETREF(T_scalar, (PyTypeObject *)Py_NewRef(scalar));
    Py_XSETREF(T_map, (PyTypeObject *)Py_NewRef(map));
    Py_XSETREF(T_seq, (PyTypeObject *)Py_NewRef(seq));
    Py_XSETREF(C_links, Py_NewRef(links));
    Py_XSETREF(F_resolve, Py_NewRef(resolve));
    Py_XSETREF(S_special, Py_NewRef(special));
    Py_XSETREF(S_invisible, Py_NewRef(invisible));
    ready = 1;
    Py_RETURN_NONE;
}

/* a new instance of a node class without running its __init__ (every slot
 * is set by the caller) */
static inline PyObject *
new_node(PyTypeObject *t)
{
    return t->tp_alloc(t, 0);
}

/* the six position slots of a node, from new references (all stolen;
 * -1 when one is NULL, the others released) */
static inline int
set_positions(PyObject *n, PyObject *line, PyObject *col, PyObject *start, PyObject *end_line, PyObject *end_col,
              PyObject *end)
{
    if (!line || !col || !start || !end_line || !end_col || !end) {
        Py_XDECREF(line); Py_XDECREF(col); Py_XDECREF(start);
        Py_XDECREF(end_line); Py_XDECREF(end_col); Py_XDECREF(end);
        return -1;
    }
    set_slot(n, o_line, line);
    set_slot(n, o_col, col);
    set_slot(n, o_start, start);
    set_slot(n, o_end_line, end_line);
    set_slot(n, o_end_col, end_col);
    set_slot(n, o_end, end);
    return 0;
}

/* the base slots of a node */
static inline int
init_base(PyObject *n, long line, long col, long start, long end_line, long end_col, long end)
{
    return set_positions(n, PyLong_FromLong(line), PyLong_FromLong(col), PyLong_FromLong(start),
                         PyLong_FromLong(end_line), PyLong_FromLong(end_col), PyLong_FromLong(end));
}

/* a key starting with NUL: the Python composer's stand-in for a complex
 * key is such a text, so these keys are left to it (a duplicate, below) */
static inline int
nul_key(PyObject *k)
{
    return PyUnicode_GET_LENGTH(k) > 0 && PyUnicode_READ_CHAR(k, 0) == 0;
}

/* events parsed per release of the GIL */
#define EVENT_BATCH 256

typedef struct {
    PyObject *node;  /* borrowed: owned by the tree */
    long pidx;
} frame_t;

/* compose(text, end_line, end_col) -> root node, or None to fall back to the
 * Python composer.  ``end_line``/``end_col`` are the editor position of the
 * end of the text (marks at the end of input). */
static PyObject *
ycompose_compose(PyObject *self, PyObject *args)
{
    PyObject *text;
    long end_line_at_eof, end_col_at_eof;
    if (!PyArg_ParseTuple(args, "Ull", &text, &end_line_at_eof, &end_col_at_eof))
        return NULL;
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "setup() first");
        return NULL;
    }
    Py_ssize_t n_text = PyUnicode_GET_LENGTH(text);
    PyObject *utf8 = PyUnicode_AsUTF8String(text);
    if (utf8 == NULL)
        return NULL;
    /* room beyond the header's size, should the library's parser be larger */
    yaml_parser_t *parser = PyMem_Calloc(1, sizeof(yaml_parser_t) + 4096);
    if (parser == NULL) {
        Py_DECREF(utf8);
        return PyErr_NoMemory();
    }
    if (!p_init(parser)) {
        PyMem_Free(parser);
        Py_DECREF(utf8);
        return PyErr_NoMemory();
    }
    p_input(parser, (const unsigned char *)PyBytes_AS_STRING(utf8), (size_t)PyBytes_GET_SIZE(utf8));

    frame_t *stack = PyMem_Malloc(sizeof(frame_t) * (size_t)(max_nesting + 2));
    PyObject *root = NULL, *links = NULL, *lref = NULL, *pending = NULL;
    PyObject *parent = NULL, *colls = NULL, *p_items = NULL, *p_index = NULL;
    long pidx = 0, depth = 0, count = 0, documents = 0;
    int in_map = 0, fallback = 0, failed = 0, done = 0;
    yaml_event_t ev;
    /* events are parsed in batches with the GIL released (libyaml needs no
     * Python), so another thread (the language server's message loop) runs
     * while a large document is read, as it would between the Python
     * composer's bytecodes; the nodes are built with the GIL held */
    yaml_event_t *evs = PyMem_Malloc(sizeof(yaml_event_t) * EVENT_BATCH);
    int nev = 0, iev = 0, parse_failed = 0;
    if (stack == NULL || evs == NULL) {
        failed = 1;
        PyErr_NoMemory();
        done = 1;
    }
    while (!done) {
        if (iev == nev) {
            if (parse_failed) {
                fallback = 1;
                break;
            }
            nev = iev = 0;
            Py_BEGIN_ALLOW_THREADS
            while (nev < EVENT_BATCH) {
                if (!p_parse(parser, &evs[nev])) {
                    parse_failed = 1;
                    break;
                }
                yaml_event_type_t t = evs[nev++].type;
                if (t == YAML_STREAM_END_EVENT || t == YAML_NO_EVENT)
                    break;
            }
            Py_END_ALLOW_THREADS
            if (nev == 0) {
                fallback = 1;
                break;
            }
        }
        ev = evs[iev++];
        switch (ev.type) {
        case YAML_SCALAR_EVENT: {
            if (++count > max_nodes || ev.data.scalar.anchor != NULL || ev.data.scalar.tag != NULL) {
                fallback = 1;
                break;
            }
            PyObject *raw = PyUnicode_DecodeUTF8((const char *)ev.data.scalar.value,
                                                 (Py_ssize_t)ev.data.scalar.length, "strict");
            if (raw == NULL) {
                PyErr_Clear();
                fallback = 1;
                break;
            }
            PyObject *style, *value;
            switch (ev.data.scalar.style) {
            case YAML_SINGLE_QUOTED_SCALAR_STYLE: style = STR_squote; break;
            case YAML_DOUBLE_QUOTED_SCALAR_STYLE: style = STR_dquote; break;
            case YAML_LITERAL_SCALAR_STYLE: style = STR_literal; break;
            case YAML_FOLDED_SCALAR_STYLE: style = STR_folded; break;
            default: style = STR_empty; break;
            }
            if (style == STR_empty) {
                Py_ssize_t len = PyUnicode_GET_LENGTH(raw);
                Py_UCS4 c0 = len ? PyUnicode_READ_CHAR(raw, 0) : 0;
                if (len) {
                    /* an invisible character at the start of a plain scalar
                     * (maybe in the indentation): the Python composer decides */
                    PyObject *ch = PyUnicode_Substring(raw, 0, 1);
                    int inv = ch ? PySet_Contains(S_invisible, ch) : -1;
                    Py_XDECREF(ch);
                    if (inv != 0) {
                        Py_DECREF(raw);
                        if (inv < 0)
                            failed = 1;
                        else
                            fallback = 1;
                        break;
                    }
                }
                int special = 0;
                if (len && !(c0 == '-' || c0 == '+' || c0 == '.' || (c0 >= '0' && c0 <= '9'))) {
                    special = PySet_Contains(S_special, raw);
                    if (special < 0) {
                        Py_DECREF(raw);
                        failed = 1;
                        break;
                    }
                } else {
                    special = 1;
                }
                if (special) {
                    value = PyObject_CallOneArg(F_resolve, raw);
                    if (value == NULL) {
                        Py_DECREF(raw);
                        failed = 1;
                        break;
                    }
                } else {
                    value = Py_NewRef(raw);
                }
            } else {
                value = Py_NewRef(raw);
            }
            long sl = (long)ev.start_mark.line, sc = (long)ev.start_mark.column;
            long si = (long)ev.start_mark.index, ei = (long)ev.end_mark.index;
            long el, ec;
            if (ei >= n_text) {
                el = end_line_at_eof;
                ec = end_col_at_eof;
            } else {
                el = (long)ev.end_mark.line;
                ec = (long)ev.end_mark.column;
            }
            if (in_map && pending == NULL) {
                /* a key: a KeyRecord (yamlnodes) */
                pending = Py_BuildValue("(NNOllllll)", raw, value, style, sl, sc, si, el, ec, ei);
                if (pending == NULL)
                    failed = 1;
                else
                    PyObject_GC_UnTrack(pending); /* atomic items: what the collector would do */
                break;
            }
            PyObject *node = new_node(T_scalar);
            if (node == NULL || init_base(node, sl, sc, si, el, ec, ei) < 0) {
                Py_XDECREF(node);
                Py_DECREF(raw);
                Py_DECREF(value);
                failed = 1;
                break;
            }
            set_slot(node, o_value, value);
            set_slot_ref(node, o_style, style);
            set_slot(node, o_raw, raw);
            set_slot_ref(node, o_is_key, Py_False);
            /* a scalar holds only atomic values and the weak reference to the
             * links table: it can be on no reference cycle, so the cycle
             * collector need not track it (freed by reference counting) */
            PyObject_GC_UnTrack(node);
            if (parent == NULL) {
                set_slot_ref(node, o_links, Py_None);
                set_slot(node, o_pidx, PyLong_FromLong(0));
                set_slot_ref(node, o_key, Py_None);
                root = node;
                break;
            }
            set_slot_ref(node, o_links, lref);
            set_slot(node, o_pidx, PyLong_FromLong(pidx));
            if (in_map) {
                PyObject *ktext = PyTuple_GET_ITEM(pending, 0);
                set_slot_ref(node, o_key, ktext);
                int dup = nul_key(ktext) ? 1 : PyDict_Contains(p_index, ktext);
                if (dup != 0) {
                    Py_DECREF(node);
                    if (dup < 0)
                        failed = 1;
                    else
                        fallback = 1;
                    break;
                }
                PyObject *pos = PyLong_FromSsize_t(PyList_GET_SIZE(p_items) >> 1);
                if (pos == NULL || PyDict_SetItem(p_index, ktext, pos) < 0
                    || PyList_Append(p_items, pending) < 0 || PyList_Append(p_items, node) < 0) {
                    Py_XDECREF(pos);
                    Py_DECREF(node);
                    failed = 1;
                    break;
                }
                Py_DECREF(pos);
                Py_CLEAR(pending);
            } else {
                set_slot(node, o_key, PyLong_FromSsize_t(PyList_GET_SIZE(p_items)));
                if (PyList_Append(p_items, node) < 0) {
                    Py_DECREF(node);
                    failed = 1;
                    break;
                }
            }
            Py_DECREF(node);
            break;
        }
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT: {
            int is_map = ev.type == YAML_MAPPING_START_EVENT;
            const yaml_char_t *anchor = is_map ? ev.data.mapping_start.anchor : ev.data.sequence_start.anchor;
            const yaml_char_t *tag = is_map ? ev.data.mapping_start.tag : ev.data.sequence_start.tag;
            if (++count > max_nodes || anchor != NULL || tag != NULL || depth >= max_nesting
                || (in_map && pending == NULL)) {
                fallback = 1;
                break;
            }
            int flow = is_map ? ev.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE
                              : ev.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
            long sl = (long)ev.start_mark.line, sc = (long)ev.start_mark.column;
            long si = (long)ev.start_mark.index;
            PyObject *node = new_node(is_map ? T_map : T_seq);
            if (node == NULL || init_base(node, sl, sc, si, sl, sc, si) < 0) {
                Py_XDECREF(node);
                failed = 1;
                break;
            }
            PyObject *lst = PyList_New(0);
            if (lst == NULL) {
                Py_DECREF(node);
                failed = 1;
                break;
            }
            if (is_map) {
                PyObject *idx = PyDict_New();
                if (idx == NULL) {
                    Py_DECREF(lst);
                    Py_DECREF(node);
                    failed = 1;
                    break;
                }
                set_slot(node, o_kv, lst);
                set_slot(node, o_index, idx);
                set_slot_ref(node, o_mflow, flow ? Py_True : Py_False);
                set_slot_ref(node, o_mlinks_root, Py_None);
            } else {
                set_slot(node, o_items, lst);
                set_slot_ref(node, o_sflow, flow ? Py_True : Py_False);
                set_slot_ref(node, o_slinks_root, Py_None);
            }
            if (parent == NULL) {
                /* the root: it holds the links table */
                set_slot_ref(node, o_links, Py_None);
                set_slot(node, o_pidx, PyLong_FromLong(0));
                set_slot_ref(node, o_key, Py_None);
                root = node;
                links = PyObject_CallOneArg(C_links, node);
                if (links == NULL) {
                    failed = 1;
                    break;
                }
                set_slot_ref(node, is_map ? o_mlinks_root : o_slinks_root, links);
                lref = PyWeakref_NewRef(links, NULL);
                colls = PyObject_GetAttr(links, STR_colls);
                if (lref == NULL || colls == NULL || !PyList_Check(colls)) {
                    failed = 1;
                    break;
                }
            } else {
                set_slot_ref(node, o_links, lref);
                set_slot(node, o_pidx, PyLong_FromLong(pidx));
                if (in_map) {
                    PyObject *ktext = PyTuple_GET_ITEM(pending, 0);
                    set_slot_ref(node, o_key, ktext);
                    int dup = nul_key(ktext) ? 1 : PyDict_Contains(p_index, ktext);
                    if (dup != 0) {
                        Py_DECREF(node);
                        if (dup < 0)
                            failed = 1;
                        else
                            fallback = 1;
                        break;
                    }
                    PyObject *pos = PyLong_FromSsize_t(PyList_GET_SIZE(p_items) >> 1);
                    if (pos == NULL || PyDict_SetItem(p_index, ktext, pos) < 0
                        || PyList_Append(p_items, pending) < 0 || PyList_Append(p_items, node) < 0) {
                        Py_XDECREF(pos);
                        Py_DECREF(node);
                        failed = 1;
                        break;
                    }
                    Py_DECREF(pos);
                    Py_CLEAR(pending);
                } else {
                    set_slot(node, o_key, PyLong_FromSsize_t(PyList_GET_SIZE(p_items)));
                    if (PyList_Append(p_items, node) < 0) {
                        Py_DECREF(node);
                        failed = 1;
                        break;
                    }
                }
                Py_DECREF(node); /* owned by its parent now */
            }
            stack[depth].node = parent;
            stack[depth].pidx = pidx;
            depth++;
            parent = node;
            if (node != root) {
                pidx = (long)PyList_GET_SIZE(colls);
                if (PyList_Append(colls, node) < 0) {
                    failed = 1;
                    break;
                }
            }
            if (is_map) {
                set_slot(node, o_idx, PyLong_FromLong(pidx));
                in_map = 1;
                p_items = SLOT(node, o_kv);
                p_index = SLOT(node, o_index);
            } else {
                in_map = 0;
                p_items = SLOT(node, o_items);
            }
            break;
        }
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT: {
            long ei = (long)ev.end_mark.index, el, ec;
            if (ei >= n_text) {
                el = end_line_at_eof;
                ec = end_col_at_eof;
            } else {
                el = (long)ev.end_mark.line;
                ec = (long)ev.end_mark.column;
            }
            PyObject *a = PyLong_FromLong(el), *b = PyLong_FromLong(ec), *c = PyLong_FromLong(ei);
            if (!a || !b || !c) {
                Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(c);
                failed = 1;
                break;
            }
            set_slot(parent, o_end_line, a);
            set_slot(parent, o_end_col, b);
            set_slot(parent, o_end, c);
            depth--;
            parent = stack[depth].node;
            pidx = stack[depth].pidx;
            Py_CLEAR(pending);
            if (parent == NULL) {
                in_map = 0;
            } else if (Py_IS_TYPE(parent, T_map)) {
                in_map = 1;
                p_items = SLOT(parent, o_kv);
                p_index = SLOT(parent, o_index);
            } else {
                in_map = 0;
                p_items = SLOT(parent, o_items);
            }
            break;
        }
        case YAML_DOCUMENT_START_EVENT:
            if (++documents > 1)
                fallback = 1;
            break;
        case YAML_ALIAS_EVENT:
            fallback = 1;
            break;
        case YAML_STREAM_END_EVENT:
        case YAML_NO_EVENT:
            done = 1;
            break;
        default:
            break;
        }
        p_event_delete(&ev);
        if (fallback || failed)
            break;
    }
    p_delete(parser);
    PyMem_Free(parser);
    PyMem_Free(stack);
    if (evs != NULL) {
        while (iev < nev)
            p_event_delete(&evs[iev++]);
        PyMem_Free(evs);
    }
    Py_DECREF(utf8);
    Py_XDECREF(pending);
    Py_XDECREF(lref);
    Py_XDECREF(colls);
    Py_XDECREF(links);
    if (failed) {
        Py_XDECREF(root);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "composition failed");
        return NULL;
    }
    if (fallback || root == NULL) {
        Py_XDECREF(root);
        Py_RETURN_NONE;
    }
    return root;
}

/* ``v + add`` for a position slot (a new reference; ``v`` itself when
 * ``add`` is 0) */
static inline PyObject *
moved(PyObject *v, long add)
{
    if (add == 0)
        return Py_NewRef(v);
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred())
        return NULL;
    return PyLong_FromLong(x + add);
}

/* the base slots of ``dst``: ``src``'s moved by ``dl`` lines and ``delta``
 * offsets (columns stay), the parent link (``lref``, ``pidx``) and the key */
static int
copy_base(PyObject *dst, PyObject *src, PyObject *pidx, PyObject *lref, long dl, long delta)
{
    PyObject *line = SLOT(src, o_line), *start = SLOT(src, o_start), *end_line = SLOT(src, o_end_line);
    PyObject *end = SLOT(src, o_end), *col = SLOT(src, o_col), *end_col = SLOT(src, o_end_col);
    PyObject *key = SLOT(src, o_key);
    if (!line || !start || !end_line || !end || !col || !end_col || !key) {
        PyErr_SetString(PyExc_TypeError, "a node without its positions");
        return -1;
    }
    if (set_positions(dst, moved(line, dl), Py_NewRef(col), moved(start, delta), moved(end_line, dl),
                      Py_NewRef(end_col), moved(end, delta)) < 0)
        return -1;
    set_slot_ref(dst, o_links, lref);
    set_slot_ref(dst, o_pidx, pidx);
    set_slot_ref(dst, o_key, key);
    return 0;
}

/* a key record (yamlnodes) moved by ``dl`` lines and ``delta`` offsets; a
 * key made a node (a YScalar) becomes a record again, as a fresh load
 * leaves it */
static PyObject *
copy_key(PyObject *k, long dl, long delta)
{
    PyObject *raw, *value, *style, *line, *col, *start, *end_line, *end_col, *end;
    if (PyTuple_CheckExact(k) && PyTuple_GET_SIZE(k) == 9) {
        if (dl == 0 && delta == 0)
            return Py_NewRef(k);
        raw = PyTuple_GET_ITEM(k, 0); value = PyTuple_GET_ITEM(k, 1); style = PyTuple_GET_ITEM(k, 2);
        line = PyTuple_GET_ITEM(k, 3); col = PyTuple_GET_ITEM(k, 4); start = PyTuple_GET_ITEM(k, 5);
        end_line = PyTuple_GET_ITEM(k, 6); end_col = PyTuple_GET_ITEM(k, 7); end = PyTuple_GET_ITEM(k, 8);
    } else if (Py_IS_TYPE(k, T_scalar)) {
        raw = SLOT(k, o_raw); value = SLOT(k, o_value); style = SLOT(k, o_style);
        line = SLOT(k, o_line); col = SLOT(k, o_col); start = SLOT(k, o_start);
        end_line = SLOT(k, o_end_line); end_col = SLOT(k, o_end_col); end = SLOT(k, o_end);
        if (!raw || !value || !style || !line || !col || !start || !end_line || !end_col || !end) {
            PyErr_SetString(PyExc_TypeError, "a key node without its slots");
            return NULL;
        }
    } else {
        PyErr_SetString(PyExc_TypeError, "a mapping key that is neither a key record nor a scalar");
        return NULL;
    }
    PyObject *t = PyTuple_New(9);
    if (t == NULL)
        return NULL;
    PyObject *items[9] = {Py_NewRef(raw), Py_NewRef(value), Py_NewRef(style), moved(line, dl), Py_NewRef(col),
                          moved(start, delta), moved(end_line, dl), Py_NewRef(end_col), moved(end, delta)};
    int failed = 0;
    for (int i = 0; i < 9; i++) {
        PyTuple_SET_ITEM(t, i, items[i]);
        failed |= items[i] == NULL;
    }
    if (failed) {
        Py_DECREF(t); /* releases the items that were made */
        return NULL;
    }
    PyObject_GC_UnTrack(t); /* atomic items, as compose() leaves them */
    return t;
}

static PyObject *copy_tree(PyObject *src, PyObject *pidx, PyObject *lref, PyObject *colls, long dl, long delta);

static PyObject *
copy_scalar(PyObject *src, PyObject *pidx, PyObject *lref, long dl, long delta)
{
    PyObject *value = SLOT(src, o_value), *style = SLOT(src, o_style), *raw = SLOT(src, o_raw);
    PyObject *is_key = SLOT(src, o_is_key);
    if (!value || !style || !raw || !is_key) {
        PyErr_SetString(PyExc_TypeError, "a scalar without its slots");
        return NULL;
    }
    PyObject *node = new_node(T_scalar);
    if (node == NULL)
        return NULL;
    if (copy_base(node, src, pidx, lref, dl, delta) < 0) {
        Py_DECREF(node);
        return NULL;
    }
    set_slot_ref(node, o_value, value);
    set_slot_ref(node, o_style, style);
    set_slot_ref(node, o_raw, raw);
    set_slot_ref(node, o_is_key, is_key);
    PyObject_GC_UnTrack(node); /* atomic slots and a weak reference: as compose() leaves it */
    return node;
}

static PyObject *
copy_tree(PyObject *src, PyObject *pidx, PyObject *lref, PyObject *colls, long dl, long delta)
{
    if (Py_IS_TYPE(src, T_scalar))
        return copy_scalar(src, pidx, lref, dl, delta);
    int is_map = Py_IS_TYPE(src, T_map);
    if (!is_map && !Py_IS_TYPE(src, T_seq)) {
        PyErr_SetString(PyExc_TypeError, "not a node of the YAML tree");
        return NULL;
    }
    PyObject *flow = SLOT(src, is_map ? o_mflow : o_sflow);
    PyObject *children = SLOT(src, is_map ? o_kv : o_items);
    PyObject *index = is_map ? SLOT(src, o_index) : Py_None;
    if (!flow || !children || !PyList_Check(children) || !index) {
        PyErr_SetString(PyExc_TypeError, "a collection without its slots");
        return NULL;
    }
    PyObject *node = new_node(is_map ? T_map : T_seq);
    if (node == NULL)
        return NULL;
    PyObject *idx = PyLong_FromSsize_t(PyList_GET_SIZE(colls));
    PyObject *out = idx ? PyList_New(0) : NULL;
    if (out == NULL || copy_base(node, src, pidx, lref, dl, delta) < 0) {
        Py_XDECREF(idx);
        Py_XDECREF(out);
        Py_DECREF(node);
        return NULL;
    }
    set_slot(node, is_map ? o_kv : o_items, out); /* owned by the node: ``out`` stays valid */
    set_slot_ref(node, is_map ? o_mflow : o_sflow, flow);
    set_slot_ref(node, is_map ? o_mlinks_root : o_slinks_root, Py_None);
    if (is_map) {
        set_slot_ref(node, o_idx, idx);
        set_slot_ref(node, o_index, index); /* read-only once loaded: shared */
    }
    if (PyList_Append(colls, node) < 0)
        goto fail;
    Py_ssize_t n = PyList_GET_SIZE(children);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *child = PyList_GET_ITEM(children, i);
        PyObject *c = (is_map && (i & 1) == 0) ? copy_key(child, dl, delta)
                                               : copy_tree(child, idx, lref, colls, dl, delta);
        if (c == NULL)
            goto fail;
        int r = PyList_Append(out, c);
        Py_DECREF(c);
        if (r < 0)
            goto fail;
        n = PyList_GET_SIZE(children); /* the source is not ours: never read past its end */
    }
    Py_DECREF(idx);
    return node;
fail:
    Py_DECREF(idx);
    Py_DECREF(node);
    return NULL;
}

/* copy(node, pidx, lref, colls, dl, delta) -> a copy of the subtree
 * ``node`` under the collection at ``pidx`` of a new tree's links table
 * (its weak reference ``lref``, collection list ``colls``), every position
 * moved by ``dl`` lines and ``delta`` offsets: what
 * loopc.pipeline.incremental's Python copy builds, slot for slot */
static PyObject *
ycompose_copy(PyObject *self, PyObject *args)
{
    PyObject *src, *pidx, *lref, *colls;
    long dl, delta;
    if (!PyArg_ParseTuple(args, "OO!OO!ll", &src, &PyLong_Type, &pidx, &lref, &PyList_Type, &colls, &dl, &delta))
        return NULL;
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "setup() first");
        return NULL;
    }
    return copy_tree(src, pidx, lref, colls, dl, delta);
}

/* bound() -> (YScalar, YMap, YSeq, YLinks) this module builds, or None */
static PyObject *
ycompose_bound(PyObject *self, PyObject *noargs)
{
    if (!ready)
        Py_RETURN_NONE;
    return PyTuple_Pack(4, (PyObject *)T_scalar, (PyObject *)T_map, (PyObject *)T_seq, C_links);
}

static PyMethodDef methods[] = {
    {"bound", ycompose_bound, METH_NOARGS,
     "bound() -> (YScalar, YMap, YSeq, YLinks) the composer builds, or None before setup()."},
    {"setup", ycompose_setup, METH_VARARGS,
     "setup(libyaml_path, YScalar, YMap, YSeq, YLinks, resolve_plain, plain_special, invisible, "
     "max_nodes, max_nesting): bind libyaml and the node classes."},
    {"compose", ycompose_compose, METH_VARARGS,
     "compose(text, end_line, end_col) -> root node, or None when the Python composer must run."},
    {"copy", ycompose_copy, METH_VARARGS,
     "copy(node, pidx, lref, colls, dl, delta) -> the subtree copied into a new tree, positions moved."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "loopc.compiler._ycompose",
    "Optional compiled composer of the strict YAML layer (see yamlload).", -1, methods,
};

PyMODINIT_FUNC
PyInit__ycompose(void)
{
    STR_empty = PyUnicode_InternFromString("");
    STR_squote = PyUnicode_InternFromString("'");
    STR_dquote = PyUnicode_InternFromString("\"");
    STR_literal = PyUnicode_InternFromString("|");
    STR_folded = PyUnicode_InternFromString(">");
    STR_colls = PyUnicode_InternFromString("colls");
    if (!STR_empty || !STR_squote || !STR_dquote || !STR_literal || !STR_folded || !STR_colls)
        return NULL;
    return PyModule_Create(&module);
}
