/* tokens.counted in C, for ASCII text: how many tokens FTS5's unicode61 makes of a message and
 * the parts of its camelCase words. It runs over every message a content index reads, and was a
 * fifth of a cold index's CPU in Python (docs/search.md). Built when a compiler is there
 * (setup.py: optional); tokens.py falls back to Python otherwise, and tests/words_test.py holds
 * the two to the same answers. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* tokens.py's _CASES: an upper-case letter 'A', a lower-case letter or a digit 'a', else ' '
 * (a table, not branches: the letters of real text are not predictable) */
static char CASES[256];

static void fill_cases(void) {
    for (int c = 0; c < 256; c++)
        CASES[c] = (c >= 'A' && c <= 'Z') ? 'A' : ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) ? 'a' : ' ';
}

static int is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
static int is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* `prefix` + the ASCII bytes, as a str */
static PyObject *prefixed(PyObject *prefix, const unsigned char *bytes, Py_ssize_t length) {
    Py_ssize_t before = PyUnicode_GET_LENGTH(prefix);
    Py_UCS4 most = PyUnicode_MAX_CHAR_VALUE(prefix);
    PyObject *out = PyUnicode_New(before + length, most > 127 ? most : 127);
    if (out == NULL)
        return NULL;
    int kind = PyUnicode_KIND(out), prefix_kind = PyUnicode_KIND(prefix);
    void *data = PyUnicode_DATA(out), *prefix_data = PyUnicode_DATA(prefix);
    for (Py_ssize_t i = 0; i < before; i++)
        PyUnicode_WRITE(kind, data, i, PyUnicode_READ(prefix_kind, prefix_data, i));
    for (Py_ssize_t i = 0; i < length; i++)
        PyUnicode_WRITE(kind, data, before + i, bytes[i]);
    return out;
}

static int add(PyObject *out, PyObject *prefix, const unsigned char *bytes, Py_ssize_t length) {
    PyObject *part = prefixed(prefix, bytes, length);
    if (part == NULL)
        return -1;
    int failed = PyDict_SetItem(out, part, Py_None);
    Py_DECREF(part);
    return failed;
}

/* The parts of one word (letters and digits only) as the pattern
 * [A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+ finds them, and the joins of its last parts
 * (tokens.counted), into `out`, when there are two parts or more. */
static int word_parts(PyObject *out, PyObject *prefix, const unsigned char *word, Py_ssize_t length) {
    Py_ssize_t stack_starts[64], *starts = stack_starts, count = 0, at = 0;
    if (length + 1 > 64 && (starts = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(length + 1))) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    while (at < length) {
        Py_ssize_t end = at;
        if (is_upper(word[at])) {
            while (end < length && is_upper(word[end]))
                end++;
            if (end < length && is_lower(word[end])) {  /* the last capital starts the next word */
                if (end - at >= 2)
                    end--;
                else
                    while (end < length && is_lower(word[end]))
                        end++;
            }
        } else if (is_lower(word[at])) {
            while (end < length && is_lower(word[end]))
                end++;
        } else {
            while (end < length && is_digit(word[end]))
                end++;
        }
        if (end == at)  /* not a letter or a digit: the pattern skips it */
            end = at + 1;
        else
            starts[count++] = at;
        at = end;
    }
    starts[count] = length;
    int failed = 0;
    if (count >= 2) {
        for (Py_ssize_t i = 0; i < count && !failed; i++)
            failed = add(out, prefix, word + starts[i], starts[i + 1] - starts[i]);
        for (Py_ssize_t i = 1; i < count - 1 && !failed; i++)
            failed = add(out, prefix, word + starts[i], length - starts[i]);
    }
    if (starts != stack_starts)
        PyMem_Free(starts);
    return failed;
}

/* Each place a change of case inside a word begins ("aA", then "AAa": tokens.counted's order) */
static int word_of(PyObject *seen, PyObject *out, PyObject *prefix, const unsigned char *text, const char *cases,
                   Py_ssize_t length, Py_ssize_t at) {
    Py_ssize_t start = at, end = at;
    while (start > 0 && cases[start - 1] != ' ')
        start--;
    while (end < length && cases[end] != ' ')
        end++;
    PyObject *word = PyBytes_FromStringAndSize((const char *)text + start, end - start);
    if (word == NULL)
        return -1;
    int known = PySet_Contains(seen, word);
    int failed = known < 0 || (!known && (PySet_Add(seen, word) < 0 ||
                                          word_parts(out, prefix, text + start, end - start) < 0));
    Py_DECREF(word);
    return failed ? -1 : 0;
}

static PyObject *counted(PyObject *module, PyObject *args) {
    PyObject *text_object, *prefix;
    if (!PyArg_ParseTuple(args, "OU", &text_object, &prefix))
        return NULL;
    const unsigned char *text;
    Py_ssize_t length;
    if (PyUnicode_Check(text_object)) {
        if (!PyUnicode_IS_ASCII(text_object)) {
            PyErr_SetString(PyExc_ValueError, "not ASCII");
            return NULL;
        }
        text = PyUnicode_1BYTE_DATA(text_object);
        length = PyUnicode_GET_LENGTH(text_object);
    } else if (PyBytes_Check(text_object)) {
        text = (const unsigned char *)PyBytes_AS_STRING(text_object);
        length = PyBytes_GET_SIZE(text_object);
    } else {
        PyErr_SetString(PyExc_TypeError, "str or bytes");
        return NULL;
    }
    char *cases = PyMem_Malloc((size_t)length + 1);
    Py_ssize_t *uppers = NULL, upper_count = 0, upper_room = 0;  /* capitals inside a word: rare */
    if (cases == NULL)
        return PyErr_NoMemory();
    Py_ssize_t tokens = 0;
    char before = ' ';
    for (Py_ssize_t i = 0; i < length; i++) {
        char now = CASES[text[i]];
        cases[i] = now;
        tokens += (now != ' ') & (before == ' ');
        if (now == 'A' && before != ' ') {
            if (upper_count == upper_room) {
                upper_room = upper_room ? upper_room * 2 : 64;
                Py_ssize_t *grown = PyMem_Realloc(uppers, sizeof(Py_ssize_t) * (size_t)upper_room);
                if (grown == NULL) {
                    PyMem_Free(uppers);
                    PyMem_Free(cases);
                    return PyErr_NoMemory();
                }
                uppers = grown;
            }
            uppers[upper_count++] = i;
        }
        before = now;
    }
    cases[length] = ' ';
    PyObject *out = PyDict_New(), *seen = PySet_New(NULL), *result = NULL;
    if (out == NULL || seen == NULL)
        goto done;
    /* tokens.counted's changes: each "aA" (at its capital), then each "AAa" (at its second
     * capital), in order; both are a capital inside a word */
    for (Py_ssize_t u = 0; u < upper_count; u++) {
        Py_ssize_t at = uppers[u];
        if (cases[at - 1] == 'a' && word_of(seen, out, prefix, text, cases, length, at) < 0)
            goto done;
    }
    for (Py_ssize_t u = 0; u < upper_count; u++) {
        Py_ssize_t at = uppers[u];
        if (cases[at - 1] == 'A' && cases[at + 1] == 'a' && word_of(seen, out, prefix, text, cases, length, at) < 0)
            goto done;
    }
    PyObject *parts = PyDict_Keys(out);
    if (parts != NULL) {
        result = Py_BuildValue("(nN)", tokens, parts);
    }
done:
    PyMem_Free(cases);
    PyMem_Free(uppers);
    Py_XDECREF(out);
    Py_XDECREF(seen);
    return result;
}

static PyMethodDef methods[] = {
    {"counted", counted, METH_VARARGS,
     "counted(text, prefix) -> (tokens, parts): tokens.counted of an ASCII str, or of bytes"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_words", NULL, -1, methods};

PyMODINIT_FUNC PyInit__words(void) {
    fill_cases();
    return PyModule_Create(&module);
}
