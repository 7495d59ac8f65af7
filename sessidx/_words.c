/* What a content index does to every message it reads, in C (docs/search.md, round three):
 * - counted: tokens.counted for ASCII text, how many tokens FTS5's unicode61 makes of a message
 *   and the parts of its camelCase words;
 * - marked: tool_output's marked lines, the lines of a long tool output that hold an error word
 *   or a file's place, in one pass over the text as it is (no lower-case copy);
 * - found and long_runs: secret masking's key words and long runs (redact.scan_in_c).
 * Built when a compiler is there (setup.py: optional; sessidx/compiled.py loads it); Python does
 * the same otherwise, held to the same answers by tests/words_test.py,
 * tests/tool_output_apps_test.py and tests/redact_test.py. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* tokens.py's _CASES: an upper-case letter 'A', a lower-case letter or a digit 'a', else ' '
 * (a table, not branches: the letters of real text are not predictable) */
static char CASES[256];

static unsigned char LOWER[256];

static void fill_tables(void) {
    for (int c = 0; c < 256; c++) {
        CASES[c] = (c >= 'A' && c <= 'Z') ? 'A' : ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) ? 'a' : ' ';
        LOWER[c] = c >= 128 ? 0 : (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : (unsigned char)c;
    }
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

/* A character as str.lower() makes it, where that is ASCII (the marks are; LOWER: 0 beyond
 * ASCII): the Kelvin sign is the one character beyond ASCII whose lower case is ASCII ('k'). */
static unsigned char lowered(Py_UCS4 c) { return c < 256 ? LOWER[c] : c == 0x212A ? 'k' : 0; }

#define MOST_MARKS 64

/* The marks, as tables made once for the tuple tool_output passes on every call */
typedef struct {
    PyObject *tuple;  /* the marks' tuple these tables are of (a reference kept) */
    const char *text[MOST_MARKS];
    Py_ssize_t length[MOST_MARKS];
    unsigned long long by_pair[128 * 128];  /* the marks starting with each two letters, lower case */
    unsigned char by_bytes[256 * 256 / 8];  /* whether some mark starts with two bytes, any case: a bit each */
} Marks;

#define MADE 4
static Marks *made_marks[MADE];  /* the tables of the last tuples asked for (marks, key words) */

static void set_bit(unsigned char *bits, unsigned at) { bits[at / 8] |= (unsigned char)(1u << (at % 8)); }
static int bit(const unsigned char *bits, unsigned at) { return bits[at / 8] >> (at % 8) & 1; }

/* The tables of `tuple` (ASCII marks, lower case, two letters or more), made on the first call */
static Marks *marks_of(PyObject *tuple) {
    for (int made = 0; made < MADE; made++)
        if (made_marks[made] != NULL && made_marks[made]->tuple == tuple)
            return made_marks[made];
    Py_ssize_t count = PyTuple_GET_SIZE(tuple);
    if (count > MOST_MARKS) {
        PyErr_SetString(PyExc_ValueError, "too many marks");
        return NULL;
    }
    Marks *marks = PyMem_Calloc(1, sizeof(Marks));
    if (marks == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t j = 0; j < count; j++) {
        PyObject *one = PyTuple_GET_ITEM(tuple, j);
        if (!PyUnicode_Check(one) || !PyUnicode_IS_ASCII(one) || PyUnicode_GET_LENGTH(one) < 2 ||
            LOWER[PyUnicode_1BYTE_DATA(one)[0]] != PyUnicode_1BYTE_DATA(one)[0] ||
            LOWER[PyUnicode_1BYTE_DATA(one)[1]] != PyUnicode_1BYTE_DATA(one)[1]) {
            PyErr_SetString(PyExc_ValueError, "marks: ASCII, lower case, two letters or more");
            PyMem_Free(marks);
            return NULL;
        }
        const unsigned char *letters = PyUnicode_1BYTE_DATA(one);
        marks->text[j] = (const char *)letters;
        marks->length[j] = PyUnicode_GET_LENGTH(one);
        marks->by_pair[letters[0] * 128u + letters[1]] |= 1ULL << j;
        for (unsigned first = 0; first < 256; first++)
            for (unsigned second = 0; second < 256; second++)
                if (LOWER[first] == letters[0] && LOWER[second] == letters[1])
                    set_bit(marks->by_bytes, first << 8 | second);
    }
    Py_INCREF(tuple);
    marks->tuple = tuple;
    if (made_marks[MADE - 1] != NULL) {  /* the oldest goes */
        Py_DECREF(made_marks[MADE - 1]->tuple);
        PyMem_Free(made_marks[MADE - 1]);
    }
    memmove(made_marks + 1, made_marks, sizeof(made_marks[0]) * (MADE - 1));
    made_marks[0] = marks;
    return marks;
}

/* Whether mark j stands whole at chars[i] (its first two letters are known to be there) */
#define STANDS(TYPE)                                                                               \
    static int stands_##TYPE(const Marks *marks, int j, const TYPE *chars, Py_ssize_t i, Py_ssize_t length) { \
        Py_ssize_t k = 2;                                                                          \
        while (k < marks->length[j] && i + k < length && lowered(chars[i + k]) == (unsigned char)marks->text[j][k]) \
            k++;                                                                                   \
        return k == marks->length[j];                                                              \
    }
STANDS(Py_UCS1)
STANDS(Py_UCS2)
STANDS(Py_UCS4)

/* The two letters at chars[i] as an index of by_pair, when some mark starts with them; else -1.
 * In one-byte text one table read, in any case (most pairs start no mark) */
#define PAIR(TYPE)                                                                                 \
    static inline int pair_##TYPE(const Marks *marks, const TYPE *chars, Py_ssize_t i) {         \
        if (sizeof(TYPE) == 1)                                                                     \
            return bit(marks->by_bytes, (unsigned)chars[i] << 8 | chars[i + 1])                    \
                       ? (int)(LOWER[chars[i]] * 128u + LOWER[chars[i + 1]]) : -1;                 \
        unsigned first = lowered(chars[i]), second = lowered(chars[i + 1]);                        \
        return first && second && marks->by_pair[first * 128 + second] ? (int)(first * 128 + second) : -1; \
    }
PAIR(Py_UCS1)
PAIR(Py_UCS2)
PAIR(Py_UCS4)

/* The loop over the text in each of str's kinds: `EACH(TYPE)` for every i where a mark may start */
#define EVERY_KIND(EACH)                                                                           \
    if (kind == PyUnicode_1BYTE_KIND)                                                              \
        EACH(Py_UCS1)                                                                              \
    else if (kind == PyUnicode_2BYTE_KIND)                                                         \
        EACH(Py_UCS2)                                                                              \
    else                                                                                           \
        EACH(Py_UCS4)

/* Where the lines of the text start, as far as the marks found so far needed them: found on
 * a match alone (most characters start none), by a look back as far as the last look reached. */
typedef struct {
    Py_ssize_t start, looked;  /* the line of the last match; no line ends between it and `looked` */
    unsigned long long marks;  /* the marks found on that line */
    int error, place;  /* that line is kept as one */
} Line;

/* Each mark that starts at `i` with the two letters `pair` (some mark's): its line kept as an
 * error or a place line while the mark has looks left. */
#define MARKS_AT(TYPE, pair)                                                                       \
    {                                                                                              \
        unsigned long long candidates = marks->by_pair[pair];                                       \
        while (candidates) {                                                                       \
            int j = __builtin_ctzll(candidates);                                                   \
            candidates &= candidates - 1;                                                          \
            if (!stands_##TYPE(marks, j, chars, i, length))                                        \
                continue;                                                                          \
            Py_ssize_t back = i;                                                                   \
            while (back > line.looked && chars[back - 1] != '\n')                                  \
                back--;                                                                            \
            if (back > line.looked) { /* a line ended since the last match: another */             \
                line.start = back;                                                                 \
                line.marks = 0;                                                                    \
                line.error = line.place = 0;                                                       \
            }                                                                                      \
            line.looked = i;                                                                       \
            if (line.marks >> j & 1)                                                               \
                continue;                                                                          \
            line.marks |= 1ULL << j;                                                               \
            if (looks[j] >= most)                                                                  \
                continue;                                                                          \
            looks[j]++;                                                                            \
            int error = j < errors;                                                                \
            if (error ? line.error : line.place)                                                   \
                continue;                                                                          \
            *(error ? &line.error : &line.place) = 1;                                              \
            PyObject *at = PyLong_FromSsize_t(line.start);                                         \
            if (at == NULL || PyList_Append(error ? error_starts : place_starts, at) < 0) {        \
                Py_XDECREF(at);                                                                    \
                return -1;                                                                         \
            }                                                                                      \
            Py_DECREF(at);                                                                         \
        }                                                                                          \
    }

#define MARKED_LOOP(TYPE)                                                                          \
    {                                                                                              \
        const TYPE *chars = data;                                                                  \
        for (Py_ssize_t i = 0, pair; i + 1 < length; i++)                                          \
            if ((pair = pair_##TYPE(marks, chars, i)) >= 0)                                        \
                MARKS_AT(TYPE, pair)                                                               \
    }

static int marked_lines(const Marks *marks, Py_ssize_t errors, Py_ssize_t most, int kind, const void *data,
                        Py_ssize_t length, PyObject *error_starts, PyObject *place_starts) {
    Line line = {0, 0, 0, 0, 0};
    Py_ssize_t looks[MOST_MARKS] = {0};
    EVERY_KIND(MARKED_LOOP)
    return 0;
}

/* marked(text, marks, errors, most) -> (error line starts, place line starts): where each
 * line of `text` starts that holds one of `marks` (ASCII, lower case, two letters or more; the
 * first `errors` are error marks, the rest place marks) in lower case; of each mark the first
 * `most` lines holding it: tool_output._marked's lines. */
static PyObject *marked(PyObject *module, PyObject *args) {
    PyObject *text, *tuple;
    Py_ssize_t errors, most;
    if (!PyArg_ParseTuple(args, "UO!nn", &text, &PyTuple_Type, &tuple, &errors, &most))
        return NULL;
    const Marks *marks = marks_of(tuple);
    if (marks == NULL)
        return NULL;
    PyObject *error_starts = PyList_New(0), *place_starts = PyList_New(0);
    if (error_starts == NULL || place_starts == NULL ||
        marked_lines(marks, errors, most, PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text),
                     error_starts, place_starts) < 0) {
        Py_XDECREF(error_starts);
        Py_XDECREF(place_starts);
        return NULL;
    }
    return Py_BuildValue("(NN)", error_starts, place_starts);
}

/* Each place in `chars` where one of the words starts (in lower case), as (word, place) */
#define FOUND_LOOP(TYPE)                                                                           \
    {                                                                                              \
        const TYPE *chars = data;                                                                  \
        for (Py_ssize_t i = 0, pair; i + 1 < length; i++) {                                        \
            if ((pair = pair_##TYPE(marks, chars, i)) < 0)                                         \
                continue;                                                                          \
            for (unsigned long long candidates = marks->by_pair[pair]; candidates;                 \
                 candidates &= candidates - 1) {                                                   \
                int j = __builtin_ctzll(candidates);                                               \
                if (!stands_##TYPE(marks, j, chars, i, length))                                    \
                    continue;                                                                      \
                PyObject *hit = Py_BuildValue("(in)", j, i);                                       \
                if (hit == NULL || PyList_Append(out, hit) < 0) {                                  \
                    Py_XDECREF(hit);                                                               \
                    Py_DECREF(out);                                                                \
                    return NULL;                                                                   \
                }                                                                                  \
                Py_DECREF(hit);                                                                    \
            }                                                                                      \
        }                                                                                          \
    }

/* found(text, words) -> [(word's index, place)]: where each of `words` (ASCII, lower case, two
 * letters or more) is in the lower case of `text`, every place, in the text's order: the places
 * a str.find per word over text.lower() finds (for words that cannot overlap themselves), in
 * one pass (redact's key words) */
static PyObject *found(PyObject *module, PyObject *args) {
    PyObject *text, *tuple;
    if (!PyArg_ParseTuple(args, "UO!", &text, &PyTuple_Type, &tuple))
        return NULL;
    const Marks *marks = marks_of(tuple);
    PyObject *out = marks == NULL ? NULL : PyList_New(0);
    if (out == NULL)
        return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    EVERY_KIND(FOUND_LOOP)
    return out;
}

/* long_runs(text, mask, least, prefixes) -> [(start, end)]: of the runs of an ASCII text's
 * token characters (`mask`: 'k' for those, by byte) at least `least` long, those that redact
 * must judge or may: holding a digit, or 40 long, or after '$' or '}', or starting with one of
 * `prefixes`; a superset of the runs redact._ascii_runs acts on (most runs are words and paths) */
static PyObject *long_runs(PyObject *module, PyObject *args) {
    PyObject *text, *prefixes;
    Py_buffer mask;
    Py_ssize_t least;
    if (!PyArg_ParseTuple(args, "Uy*nO!", &text, &mask, &least, &PyTuple_Type, &prefixes))
        return NULL;
    PyObject *out = NULL;
    if (!PyUnicode_IS_ASCII(text) || mask.len != 256) {
        PyErr_SetString(PyExc_ValueError, "an ASCII text and a table of 256");
        goto done;
    }
    const char *chars = (const char *)PyUnicode_1BYTE_DATA(text), *table = mask.buf;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), count = PyTuple_GET_SIZE(prefixes);
    if ((out = PyList_New(0)) == NULL)
        goto done;
    for (Py_ssize_t at = 0; at < length;) {
        if (table[(unsigned char)chars[at]] != 'k') {
            at++;
            continue;
        }
        Py_ssize_t end = at;
        int digit = 0;
        while (end < length && table[(unsigned char)chars[end]] == 'k') {
            digit |= chars[end] >= '0' && chars[end] <= '9';
            end++;
        }
        int wanted = end - at >= least && (digit || end - at >= 40 || (at && (chars[at - 1] == '$' || chars[at - 1] == '}')));
        for (Py_ssize_t p = 0; end - at >= least && !wanted && p < count; p++) {
            PyObject *prefix = PyTuple_GET_ITEM(prefixes, p);
            Py_ssize_t size = PyUnicode_Check(prefix) ? PyUnicode_GET_LENGTH(prefix) : -1;
            wanted = size >= 0 && size <= end - at && PyUnicode_IS_ASCII(prefix) &&
                     memcmp(chars + at, PyUnicode_1BYTE_DATA(prefix), (size_t)size) == 0;
        }
        if (wanted) {
            PyObject *run = Py_BuildValue("(nn)", at, end);
            if (run == NULL || PyList_Append(out, run) < 0) {
                Py_XDECREF(run);
                Py_CLEAR(out);
                goto done;
            }
            Py_DECREF(run);
        }
        at = end;
    }
done:
    PyBuffer_Release(&mask);
    return out;
}

static PyMethodDef methods[] = {
    {"counted", counted, METH_VARARGS,
     "counted(text, prefix) -> (tokens, parts): tokens.counted of an ASCII str, or of bytes"},
    {"long_runs", long_runs, METH_VARARGS, "long_runs(text, mask, least, prefixes) -> [(start, end)]: redact's runs"},
    {"found", found, METH_VARARGS, "found(text, words) -> [(word's index, place)] in the text's lower case"},
    {"marked", marked, METH_VARARGS,
     "marked(text, marks, errors, most) -> (error line starts, place line starts): tool_output._marked's lines"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_words", NULL, -1, methods};

PyMODINIT_FUNC PyInit__words(void) {
    fill_tables();
    return PyModule_Create(&module);
}
