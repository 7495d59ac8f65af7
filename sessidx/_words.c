/* What a content index does to every message it reads, in C (docs/search.md, rounds three and six):
 * - counted: tokens.counted for ASCII text, how many tokens FTS5's unicode61 makes of a message
 *   and the parts of its camelCase words;
 * - marked: tool_output's marked lines, the lines of a long tool output that hold an error word
 *   or a file's place, in one pass over the text as it is (no lower-case copy);
 * - found and long_runs: secret masking's key words and long runs (redact.scan_in_c);
 * - read_output and holds_raw: tool_output.raw_gist's reading of a long record's output strings
 *   from the line's bytes, in one pass each, unescaping only the lines kept;
 * - leaf_terms: the terms of one FTS5 leaf page (content/leaves.py: a first index's typo tier).
 * Built when a compiler is there (setup.py: optional; sessidx/compiled.py loads it); Python does
 * the same otherwise, held to the same answers by tests/words_test.py,
 * tests/tool_output_apps_test.py, tests/raw_gist_test.py and tests/redact_test.py. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define BLOCKS 1  /* read_output reads sixteen bytes at a time where the CPU has SSSE3 and POPCNT */
static int in_blocks;
#endif

/* tokens.py's _CASES: an upper-case letter 'A', a lower-case letter or a digit 'a', else ' '
 * (a table, not branches: the letters of real text are not predictable) */
static char CASES[256];

static unsigned char LOWER[256];

/* A byte of a JSON string that is not a character as it is: the quote that ends it, a
 * backslash, a control character, DEL and UTF-8's bytes (read_output) */
static char SPECIAL[256];

/* LOWER of the bytes that are a character as they are, 0 for the others (no mark holds 0) */
static unsigned char PLAIN_LOWER[256];

static void fill_tables(void) {
    for (int c = 0; c < 256; c++) {
        CASES[c] = (c >= 'A' && c <= 'Z') ? 'A' : ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) ? 'a' : ' ';
        LOWER[c] = c >= 128 ? 0 : (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : (unsigned char)c;
        SPECIAL[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x7f;
        PLAIN_LOWER[c] = SPECIAL[c] ? 0 : LOWER[c];
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
#define MOST_PLACED 1024  /* the marks' characters, all told, that read_output finds by character */

/* The marks, as tables made once for the tuple tool_output passes on every call */
typedef struct {
    PyObject *tuple;  /* the marks' tuple these tables are of (a reference kept) */
    const char *text[MOST_MARKS];
    Py_ssize_t length[MOST_MARKS];
    unsigned long long by_pair[128 * 128];  /* the marks starting with each two letters, lower case */
    unsigned char by_bytes[256 * 256 / 8];  /* whether some mark starts with two bytes, any case: a bit each */
    /* read_output's: whether some mark starts with three bytes, each by its low five bits (a
     * letter's in either case): one table read a byte, and few false hits to compare */
    unsigned char by_three[32 * 32 * 32 / 8];
    /* each mark's characters by character (where each stands in which mark), for a character
     * that an escape writes; placed[c] to placed[c + 1] in place_mark and place_at */
    short placed[129];
    unsigned char place_mark[MOST_PLACED];
    short place_at[MOST_PLACED];
    int all_placed;  /* 0: too many characters to place */
    /* read_output's sixteen bytes at a time: each mark's first four bytes (a letter in either
     * case) in one of eight buckets, by their low and their high four bits (Teddy, as Rust's
     * aho-corasick has it): [place][low, high][half] -> the buckets taking that half there.
     * Four places, not three: a third fewer bytes looked at one by one ("not", "fil", "non",
     * "tim" start many words), 15% less time; a fifth place: 2% */
    unsigned char teddy[4][2][16];
    /* of the byte before an escaped quote (\"): 1 where it may write a character that some mark
     * holds just before a quote (or a mark holds one first), 2 where it may only as the end of an
     * escape (b of \b, a hex digit), 0 where no mark ends at that quote: not looked at */
    unsigned char before_quote[256];
} Marks;

#define MADE 4
static Marks *made_marks[MADE];  /* the tables of the last tuples asked for (marks, key words) */

static void set_bit(unsigned char *bits, unsigned at) { bits[at / 8] |= (unsigned char)(1u << (at % 8)); }
static int bit(const unsigned char *bits, unsigned at) { return bits[at / 8] >> (at % 8) & 1; }

/* How many bytes a bucket's halves take, all told: the fewer, the fewer false hits */
static int volume(const unsigned short halves[4][2]) {
    int taken = 1;
    for (int k = 0; k < 4; k++)
        taken *= __builtin_popcount(halves[k][0]) * __builtin_popcount(halves[k][1]);
    return taken;
}

/* The marks in Teddy's eight buckets: each where it adds the fewest bytes taken */
static void fill_teddy(Marks *marks, Py_ssize_t count) {
    unsigned short buckets[8][4][2] = {{{0}}};
    for (Py_ssize_t j = 0; j < count; j++) {
        unsigned short halves[4][2];
        for (int k = 0; k < 4; k++) {
            unsigned c = k < marks->length[j] ? (unsigned char)marks->text[j][k] : 0;
            if (k >= marks->length[j])  /* a shorter mark: any byte there */
                halves[k][0] = halves[k][1] = 0xffff;
            else
                halves[k][0] = (unsigned short)(1u << (c & 15)),
                halves[k][1] = (unsigned short)(1u << (c >> 4) | (c >= 'a' && c <= 'z' ? 1u << ((c - 32) >> 4) : 0));
        }
        int best = 0, least = 0;
        for (int b = 0; b < 8; b++) {
            unsigned short joined[4][2];
            for (int k = 0; k < 4; k++)
                for (int h = 0; h < 2; h++)
                    joined[k][h] = buckets[b][k][h] | halves[k][h];
            int added = volume(joined) - (buckets[b][0][0] ? volume((const unsigned short(*)[2])buckets[b]) : 0);
            if (b == 0 || added < least)
                best = b, least = added;
        }
        for (int k = 0; k < 4; k++)
            for (int h = 0; h < 2; h++)
                buckets[best][k][h] |= halves[k][h];
    }
    for (int b = 0; b < 8; b++)
        for (int k = 0; k < 4; k++)
            for (int h = 0; h < 2; h++)
                for (int half = 0; half < 16; half++)
                    if (buckets[b][k][h] >> half & 1)
                        marks->teddy[k][h][half] |= (unsigned char)(1u << b);
}

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
    for (Py_ssize_t j = 0; j < count; j++) {
        const char *text = marks->text[j];
        for (unsigned third = 0; third < 32; third++)  /* a mark of two: any third */
            if (marks->length[j] == 2 || (text[2] & 31) == third)
                set_bit(marks->by_three, (text[0] & 31u) << 10 | (text[1] & 31u) << 5 | third);
    }
    fill_teddy(marks, count);
    for (Py_ssize_t j = 0; j < count; j++)
        for (Py_ssize_t k = 0; k < marks->length[j]; k++)
            if (marks->text[j][k] == '"')
                for (unsigned c = 0; c < 256; c++) {
                    int escape_end = c == '\\' || c == '"' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                                     c == 'r' || c == 't' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'f');
                    if (k == 0 || LOWER[c] == (unsigned char)marks->text[j][k - 1] || c >= 0x80)
                        marks->before_quote[c] = 1;
                    else if (escape_end && !marks->before_quote[c])
                        marks->before_quote[c] = 2;
                }
    Py_ssize_t characters = 0;
    for (Py_ssize_t j = 0; j < count; j++)
        characters += PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(tuple, j));
    if ((marks->all_placed = characters <= MOST_PLACED)) {  /* a counting sort by character */
        short counts[129] = {0};
        for (Py_ssize_t j = 0; j < count; j++)
            for (Py_ssize_t k = 0; k < marks->length[j]; k++)
                counts[(unsigned char)marks->text[j][k] + 1]++;
        for (int c = 0; c < 128; c++)
            marks->placed[c + 1] = (short)(marks->placed[c] + counts[c + 1]);
        short next[128];
        memcpy(next, marks->placed, sizeof(next));
        for (Py_ssize_t j = 0; j < count; j++)
            for (Py_ssize_t k = 0; k < marks->length[j]; k++) {
                short at = next[(unsigned char)marks->text[j][k]]++;
                marks->place_mark[at] = (unsigned char)j;
                marks->place_at[at] = (short)k;
            }
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

/* read_output: one output string of a long record, read from the line's bytes in one pass (no
 * unescaped copy of it, no Python string of it): where it ends, how many characters it holds,
 * how it writes them, and the lines holding each mark, as `marked` finds them in its text; then
 * of a long one only what tool_output.gist keeps is unescaped: its first and last lines, and
 * its marked lines, each cut at LINE characters and told apart by what they say. */

/* How a string writes its characters (its shape), for holds_raw: where two strings' shapes
 * agree, each character is written the same way in both, so one's text stands in the other's
 * exactly where its bytes stand at a character's start */
enum {
    WIDE_RAW = 1,  /* a character beyond ASCII, or DEL, as it is (UTF-8) */
    WIDE_ESCAPED = 2,  /* one as \uXXXX */
    HEX_LOWER = 4,  /* a \uXXXX with a letter a-f */
    HEX_UPPER = 8,  /* with A-F */
    ODD = 16,  /* written as JSON's writers do not: \/, a surrogate, a \uXXXX where a shorter form
                * is, a control character as it is */
};

static int agree(int shape) {
    return !(shape & ODD) && (shape & (WIDE_RAW | WIDE_ESCAPED)) != (WIDE_RAW | WIDE_ESCAPED) &&
           (shape & (HEX_LOWER | HEX_UPPER)) != (HEX_LOWER | HEX_UPPER);
}

/* The four hex digits at `digits` as a number, -1 when one is not; their letters' case into *shape */
static long hex4(const unsigned char *digits, int *shape) {
    long value = 0;
    for (int k = 0; k < 4; k++) {
        unsigned c = digits[k], low = c | 32;
        if (c - '0' < 10)
            value = value << 4 | (c - '0');
        else if (low - 'a' < 6) {
            value = value << 4 | (low - 'a' + 10);
            *shape |= c == low ? HEX_LOWER : HEX_UPPER;
        } else
            return -1;
    }
    return value;
}

static int is_high(long c) { return c >= 0xD800 && c < 0xDC00; }
static int is_low(long c) { return c >= 0xDC00 && c < 0xE000; }

/* The escape at raw[at] (a backslash) as json's scanstring reads it: its character into *ch,
 * where it ends (2, 6 or 12 bytes on: a high surrogate's \u and a low one's make one
 * character), or -1 for a bad one or one cut short */
static Py_ssize_t escaped(const unsigned char *raw, Py_ssize_t at, Py_ssize_t length, Py_UCS4 *ch, int *shape) {
    if (at + 1 >= length)
        return -1;
    switch (raw[at + 1]) {
    case '"': *ch = '"'; return at + 2;
    case '\\': *ch = '\\'; return at + 2;
    case '/': *ch = '/'; *shape |= ODD; return at + 2;
    case 'b': *ch = '\b'; return at + 2;
    case 'f': *ch = '\f'; return at + 2;
    case 'n': *ch = '\n'; return at + 2;
    case 'r': *ch = '\r'; return at + 2;
    case 't': *ch = '\t'; return at + 2;
    case 'u': break;
    default: return -1;
    }
    int cases = 0;
    long value = at + 5 < length ? hex4(raw + at + 2, &cases) : -1;
    Py_ssize_t end = at + 6;
    if (value < 0)
        return -1;
    if (is_high(value) && end + 1 < length && raw[end] == '\\' && raw[end + 1] == 'u') {
        /* scanstring reads the \u after a high surrogate: bad digits there are a bad escape */
        long low = end + 5 < length ? hex4(raw + end + 2, &cases) : -1;
        if (low < 0)
            return -1;
        if (is_low(low)) {
            value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00);
            end += 6;
        }
    }
    if (value >= 0xD800 && value < 0xE000)
        *shape |= ODD;
    else if (value > 0xFFFF)
        *shape |= ODD | cases;
    else if (value < 0x20)
        *shape |= (value == '\b' || value == '\f' || value == '\n' || value == '\r' || value == '\t') ? ODD : cases;
    else if (value < 0x7f)
        *shape |= ODD;
    else
        *shape |= WIDE_ESCAPED | cases;
    *ch = (Py_UCS4)value;
    return end;
}

/* The UTF-8 character at raw[at] (a byte over 127) into *ch, and where it ends; -1 where the
 * bytes are not UTF-8 (Python's decoding would put U+FFFD for them: tool_output reads such a
 * string in Python) */
static Py_ssize_t utf8_char(const unsigned char *raw, Py_ssize_t at, Py_ssize_t length, Py_UCS4 *ch) {
    unsigned c = raw[at];
    int more;
    Py_UCS4 value, least;
    if (c >= 0xC2 && c <= 0xDF)
        more = 1, value = c & 0x1F, least = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        more = 2, value = c & 0x0F, least = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        more = 3, value = c & 0x07, least = 0x10000;
    else
        return -1;
    if (at + more >= length)
        return -1;
    for (int k = 1; k <= more; k++) {
        if ((raw[at + k] & 0xC0) != 0x80)
            return -1;
        value = value << 6 | (raw[at + k] & 0x3F);
    }
    if (value < least || value > 0x10FFFF || (value >= 0xD800 && value < 0xE000))
        return -1;
    *ch = value;
    return at + more + 1;
}

/* The character at raw[at] of a string being read, and where it ends; -1 at its end (its
 * closing quote or the line's), at a bad escape and at bytes that are not UTF-8 */
static Py_ssize_t char_at(const unsigned char *raw, Py_ssize_t at, Py_ssize_t length, Py_UCS4 *ch) {
    int shape = 0;
    if (at >= length || raw[at] == '"')
        return -1;
    if (raw[at] == '\\')
        return escaped(raw, at, length, ch, &shape);
    if (raw[at] >= 0x80)
        return utf8_char(raw, at, length, ch);
    *ch = raw[at];
    return at + 1;
}

/* Whether the backslash at raw[at] starts an escape: an odd run of backslashes ends there (a
 * run starts where a character ends, as the string's start does) */
static int starts_escape(const unsigned char *raw, Py_ssize_t floor, Py_ssize_t at) {
    Py_ssize_t run = 0;
    while (at - run >= floor && raw[at - run] == '\\')
        run++;
    return run & 1;
}

/* The character ending at raw[at - 1] of a string read and found good, both `floor` and `at`
 * at a character's start (floor < at), and where it starts: read backwards */
static Py_UCS4 char_before(const unsigned char *raw, Py_ssize_t floor, Py_ssize_t at, Py_ssize_t *start) {
    unsigned c = raw[at - 1];
    Py_UCS4 ch = 0;
    int shape = 0;
    if (c >= 0x80) {
        Py_ssize_t lead = at - 1;
        while ((raw[lead] & 0xC0) == 0x80)
            lead--;
        *start = lead;
        utf8_char(raw, lead, at, &ch);
        return ch;
    }
    if (c == '\\') {  /* only an escaped backslash ends with one */
        *start = at - 2;
        return '\\';
    }
    if (at - 2 >= floor && raw[at - 2] == '\\' && starts_escape(raw, floor, at - 2)) {
        *start = at - 2;
        escaped(raw, at - 2, at, &ch, &shape);
        return ch;
    }
    if (at - 6 >= floor && raw[at - 5] == 'u' && raw[at - 6] == '\\' && starts_escape(raw, floor, at - 6)) {
        long value = hex4(raw + at - 4, &shape);
        *start = at - 6;
        if (is_low(value) && at - 12 >= floor && raw[at - 11] == 'u' && raw[at - 12] == '\\' &&
            starts_escape(raw, floor, at - 12)) {
            long high = hex4(raw + at - 10, &shape);
            if (is_high(high)) {  /* scanstring joined them */
                *start = at - 12;
                return (Py_UCS4)(0x10000 + ((high - 0xD800) << 10) + (value - 0xDC00));
            }
        }
        return (Py_UCS4)value;
    }
    *start = at - 1;
    return c;
}

/* Where the `count` characters before raw[at] start (or floor, where fewer are): the bytes after
 * the last special one (and after the eleven following it, which its escape may hold) are
 * characters as they are, counted at once; the others read back one by one */
static Py_ssize_t chars_back(const unsigned char *raw, Py_ssize_t floor, Py_ssize_t at, Py_ssize_t count) {
    Py_ssize_t special = at;  /* no special byte in raw[special + 1:at] */
    while (count > 0 && at > floor) {
        if (special >= at)
            for (special = at - 1; special >= floor && !SPECIAL[raw[special]];)
                special--;
        Py_ssize_t plain = at - (special < floor ? floor : special + 12);
        if (plain > 0) {
            plain = plain < count ? plain : count;
            at -= plain;
            count -= plain;
        } else {
            char_before(raw, floor, at, &at);
            count--;
        }
    }
    return at;
}

/* `items` (of `size` bytes each, room for *room) with room for `wanted` (one at least, so that
 * it is never NULL): itself, or grown (to twice what is wanted, 64 at least, *room told), or
 * NULL when out of memory (`items` kept) */
static void *with_room(void *items, Py_ssize_t *room, Py_ssize_t wanted, size_t size) {
    if (wanted < 1)
        wanted = 1;
    if (wanted <= *room)
        return items;
    Py_ssize_t more = wanted < 32 ? 64 : wanted * 2;
    void *grown = PyMem_Realloc(items, size * (size_t)more);
    if (grown != NULL)
        *room = more;
    return grown;
}

typedef struct {
    Py_ssize_t *at, count, room;
} Starts;

static int push(Starts *starts, Py_ssize_t at) {
    Py_ssize_t *grown = with_room(starts->at, &starts->room, starts->count + 1, sizeof(Py_ssize_t));
    if (grown == NULL)
        return -1;
    starts->at = grown;
    starts->at[starts->count++] = at;
    return 0;
}

/* One string being read: raw is its bytes from after its opening quote to the line's end */
typedef struct {
    const unsigned char *raw;
    Py_ssize_t length;
    const Marks *marks;
    Py_ssize_t errors, most, looks[MOST_MARKS];
    unsigned long long active;  /* the marks with looks left */
    Py_ssize_t shrink;  /* bytes read beyond one a character: where a byte is, less where its character is */
    int shape, utf8, failed;
    Py_ssize_t line_start;  /* the line being read: where it starts, its marks (as in marked's Line) */
    unsigned long long line_marks;
    int line_error, line_place;
    Starts error_starts, place_starts;
} Reading;

/* A line starts at `start`, after a line break: the line being read from there on */
static inline void line_from(Reading *r, Py_ssize_t start) {
    if (start > r->line_start) {
        r->line_start = start;
        r->line_marks = 0;
        r->line_error = r->line_place = 0;
    }
}

/* Mark j stands on the line being read: that line kept as marked keeps it */
static void mark_found(Reading *r, int j) {
    if (r->line_marks >> j & 1)
        return;
    r->line_marks |= 1ULL << j;
    if (r->looks[j] >= r->most)
        return;
    if (++r->looks[j] == r->most)  /* no more looks: a mark said ten thousand times is not read further */
        r->active &= ~(1ULL << j);
    int error = j < r->errors;
    if (error ? r->line_error : r->line_place)
        return;
    *(error ? &r->line_error : &r->line_place) = 1;
    if (push(error ? &r->error_starts : &r->place_starts, r->line_start) < 0)
        r->failed = 1;
}

/* The marks standing at raw[i], a byte that is its character, compared as they are */
static void marks_at(Reading *r, Py_ssize_t i) {
    const unsigned char *raw = r->raw;
    const Marks *marks = r->marks;
    if (i + 1 >= r->length)
        return;
    unsigned long long candidates = marks->by_pair[LOWER[raw[i]] * 128u + LOWER[raw[i + 1]]] & r->active;
    while (candidates) {
        int j = __builtin_ctzll(candidates);
        candidates &= candidates - 1;
        Py_ssize_t k = 2;
        while (k < marks->length[j] && i + k < r->length && PLAIN_LOWER[raw[i + k]] == (unsigned char)marks->text[j][k])
            k++;
        if (k == marks->length[j])
            mark_found(r, j);
    }
}

/* The marks holding the character `c` (lower case) that the bytes raw[start:end] write (an
 * escape, the Kelvin sign): each place of c in a mark is compared with the characters read
 * back from `start` and on from `end`, on this line. A mark holding two such is found twice,
 * which mark_found takes as once. */
static void marks_around(Reading *r, Py_ssize_t start, Py_ssize_t end, unsigned char c) {
    const Marks *marks = r->marks;
    for (int p = marks->placed[c]; p < marks->placed[c + 1]; p++) {
        int j = marks->place_mark[p], k = marks->place_at[p];
        if (!(r->active >> j & 1) || r->line_marks >> j & 1)
            continue;
        const unsigned char *text = (const unsigned char *)marks->text[j];
        Py_ssize_t at = start;
        int stands = 1;
        for (int m = k - 1; m >= 0 && stands; m--)
            stands = at > r->line_start && lowered(char_before(r->raw, r->line_start, at, &at)) == text[m];
        at = end;
        for (Py_ssize_t m = k + 1; m < marks->length[j] && stands; m++) {
            Py_UCS4 ch = 0;
            stands = (at = char_at(r->raw, at, r->length, &ch)) >= 0 && lowered(ch) == text[m];
        }
        if (stands)
            mark_found(r, j);
    }
}

/* The byte raw[i], special or where some mark may start: the marks there, or the character it
 * starts (an escape, UTF-8); where what was read ends, less one; -1 at a bad escape; at the
 * closing quote, *close and the length */
static Py_ssize_t read_at(Reading *r, Py_ssize_t i, Py_ssize_t *close) {
    const unsigned char *raw = r->raw;
    unsigned c = raw[i];
    if (!SPECIAL[c]) {
        marks_at(r, i);
        return i;
    }
    if (c == '"') {
        *close = i;
        return r->length;
    }
    if (c == '\\' && i + 1 < r->length && raw[i + 1] == 'n') {  /* most escapes: a line ends */
        r->shrink++;
        line_from(r, i + 2);
        return i + 1;
    }
    Py_UCS4 ch;
    Py_ssize_t end;
    if (c == '\\') {
        if ((end = escaped(raw, i, r->length, &ch, &r->shape)) < 0)
            return -1;
    } else if (c >= 0x80) {
        if ((end = utf8_char(raw, i, r->length, &ch)) < 0) {  /* read in Python: only its end is looked for */
            r->utf8 = 0;
            r->active = 0;
            r->shape |= ODD;
            return i;
        }
        r->shape |= WIDE_RAW;
    } else {
        ch = c;
        end = i + 1;
        r->shape |= c == 0x7f ? WIDE_RAW : ODD;
    }
    r->shrink += end - i - 1;
    if (ch == '\n')
        line_from(r, end);
    else if (r->active && lowered(ch) && r->marks->placed[lowered(ch)] < r->marks->placed[lowered(ch) + 1])
        marks_around(r, i, end, lowered(ch));
    return end - 1;
}

#ifdef BLOCKS
/* Teddy's test of sixteen bytes at one place of a mark: the buckets taking each (as bits) */
__attribute__((target("ssse3,popcnt"))) static inline __m128i taken(__m128i bytes, const unsigned char halves[2][16]) {
    const __m128i low_four = _mm_set1_epi8(0x0f);
    return _mm_and_si128(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)halves[0]), _mm_and_si128(bytes, low_four)),
                         _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)halves[1]),
                                          _mm_and_si128(_mm_srli_epi16(bytes, 4), low_four)));
}

/* The bytes of a block escaped by a backslash before them (the second of an escape: the `n` of
 * \n, the second backslash of \\), from the bits of its backslashes; *carry: the byte before the
 * block starts an escape, and then whether its last one does (simdjson's way, branch-free: a run
 * of backslashes escapes the byte after it when its length is odd) */
static inline unsigned escaped_bits(unsigned backslashes, unsigned *carry) {
    const unsigned odd = 0xAAAA;
    unsigned starting = backslashes & ~*carry;
    unsigned code = ((starting << 1 | odd) - starting) ^ odd;
    unsigned escaped = (code ^ (backslashes | *carry)) & 0xffff;
    *carry = (code & backslashes) >> 15 & 1;
    return escaped;
}

/* read_through sixteen bytes at a time. Of each block, which bytes are escaped (their
 * backslashes' parity), where the string ends, which may start a mark's first four bytes (in
 * one of Teddy's buckets at each of the four places), which are control characters or UTF-8's:
 * the escapes \n, \\ and \" are counted at once and their line breaks kept as bits; the others,
 * the candidates and the special bytes are looked at one by one. Where it stopped (the first
 * byte not read), r->length at the closing quote (*close set), -1 at a bad escape. */
__attribute__((target("ssse3,popcnt"))) static Py_ssize_t read_blocks(Reading *r, Py_ssize_t *close) {
    const unsigned char *raw = r->raw;
    const Marks *marks = r->marks;
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20),
                  del = _mm_set1_epi8(0x7f), letter_n = _mm_set1_epi8('n'), none = _mm_setzero_si128();
    int quote_ends_marks = marks->placed['"'] < marks->placed['"' + 1];  /* `file "` */
    unsigned carry = 0;
    Py_ssize_t i = 0, next = 0;  /* next: the first byte not read */
    Py_ssize_t line_seen = 0;  /* where the last line counted at once starts (line_from when needed) */
    for (; i + 19 <= r->length; i += 16) {
        __m128i first = _mm_loadu_si128((const __m128i *)(raw + i));
        __m128i buckets = _mm_and_si128(
            _mm_and_si128(taken(first, marks->teddy[0]), taken(_mm_loadu_si128((const __m128i *)(raw + i + 1)), marks->teddy[1])),
            _mm_and_si128(taken(_mm_loadu_si128((const __m128i *)(raw + i + 2)), marks->teddy[2]),
                          taken(_mm_loadu_si128((const __m128i *)(raw + i + 3)), marks->teddy[3])));
        unsigned escaped = escaped_bits((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(first, backslash)), &carry);
        unsigned quotes = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(first, quote)), ending = quotes & ~escaped;
        unsigned before = ending ? (ending & -ending) - 1 : 0xffff;  /* the bytes before the closing quote */
        unsigned line_ends = escaped & (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(first, letter_n)) & before;
        unsigned counted = escaped & before &
                           (line_ends | quotes | (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(first, backslash)));
        /* below the space as signed bytes: the control characters and UTF-8's bytes */
        unsigned special = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmplt_epi8(first, space),
                                                                    _mm_cmpeq_epi8(first, del)));
        unsigned candidates = ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(buckets, none)) & ~escaped;
        /* looked at one by one, as bits from the byte before the block (bit k: raw[i - 1 + k]):
         * the other escapes and, where a mark ends with a quote, the escaped quotes, by their
         * backslash; the candidates and the special bytes; the closing quote */
        unsigned looked = (escaped & before & ~counted) | (quote_ends_marks ? escaped & before & quotes : 0) |
                          (((candidates | special) & before) | (ending & -ending)) << 1;
        r->shrink += __builtin_popcount(counted);
        while (looked) {
            int bit = __builtin_ctz(looked);
            looked &= looked - 1;
            Py_ssize_t at = i - 1 + bit, last;
            if (at < next)  /* inside an escape or a character read */
                continue;
            unsigned lines_before = bit > 1 ? line_ends & ((1u << (bit - 1)) - 1) : 0;
            line_from(r, lines_before ? i + 32 - __builtin_clz(lines_before) : line_seen);
            if (raw[at] == '\\' && raw[at + 1] == '"') {  /* counted: only a mark ending there is looked for */
                int may_end = marks->before_quote[raw[at - 1]];  /* 2: only where raw[at - 1] ends an escape */
                if (r->active && (may_end == 1 || (may_end == 2 && ((at >= 2 && raw[at - 2] == '\\') ||
                                                                     (at >= 6 && raw[at - 6] == '\\')))))
                    marks_around(r, at, at + 2, '"');
                next = at + 2;
                continue;
            }
            if ((last = read_at(r, at, close)) < 0)
                return -1;
            if (*close >= 0)
                return r->length;
            next = last + 1;
        }
        Py_ssize_t ends = -(Py_ssize_t)(line_ends != 0);  /* all ones where a line ended: no branch */
        line_seen = ((i + 32 - __builtin_clz(line_ends | 1)) & ends) | (line_seen & ~ends);
    }
    line_from(r, line_seen);
    if (carry && next < i)  /* the last block's last byte starts an escape not read: read it again */
        return i - 1;
    return next > i ? next : i;
}
#endif

/* The pass: where the closing quote is (-1: none, or a bad escape before it), the shape, the
 * lines holding each mark. Sixteen bytes at a time where the CPU can (read_blocks); else, and
 * for the last few, most bytes take one table read each (neither special nor where a mark's
 * first three letters may be); the last two, with no third byte to read, are looked at. */
static Py_ssize_t read_through(Reading *r) {
    const unsigned char *raw = r->raw, *by_three = r->marks->by_three;
    Py_ssize_t length = r->length, close = -1, i = 0;
#ifdef BLOCKS
    if (in_blocks && (i = read_blocks(r, &close)) < 0)
        return -1;
#endif
    for (; i + 2 < length; i++) {
        unsigned c = raw[i];
        if ((SPECIAL[c] | bit(by_three, (c & 31) << 10 | (raw[i + 1] & 31u) << 5 | (raw[i + 2] & 31u))) &&
            (i = read_at(r, i, &close)) < 0)
            return -1;
    }
    for (; i < length; i++)
        if ((i = read_at(r, i, &close)) < 0)
            return -1;
    return close;
}

/* The characters of the good string raw[at:close] from `at` on into `out`: at most `most`,
 * stopping before the `lines`-th newline where lines > 0; how many */
static Py_ssize_t unescaped(const unsigned char *raw, Py_ssize_t at, Py_ssize_t close, Py_ssize_t most,
                            Py_ssize_t lines, Py_UCS4 *out) {
    Py_ssize_t count = 0;
    while (count < most && at < close) {
        unsigned c = raw[at];
        if (!SPECIAL[c]) {
            out[count++] = c;
            at++;
            continue;
        }
        Py_UCS4 ch = 0;
        at = char_at(raw, at, close, &ch);
        if (at < 0 || (ch == '\n' && --lines == 0))
            break;
        out[count++] = ch;
    }
    return count;
}

/* Where the last `count` lines of the good string's raw[floor:close] start: after its count-th
 * newline from the end (as it is, \n or \u000a), or at floor where it holds fewer (floor at a
 * character's start); read back a byte at a time, as far as that newline */
static Py_ssize_t last_lines(const unsigned char *raw, Py_ssize_t floor, Py_ssize_t close, Py_ssize_t count) {
    for (Py_ssize_t at = close; at > floor; at--) {
        unsigned c = raw[at - 1];
        int newline = c == '\n' ||
                      (c == 'n' && at - 2 >= floor && raw[at - 2] == '\\' && starts_escape(raw, floor, at - 2)) ||
                      ((c | 32) == 'a' && at - 6 >= floor && memcmp(raw + at - 6, "\\u000", 5) == 0 &&
                       starts_escape(raw, floor, at - 6));
        if (newline && --count == 0)
            return at;
    }
    return floor;
}

/* The lines a long output's gist is made of, each once in `chars`, told apart by a table of
 * their hashes (open addressing): the edges, the marked lines */
enum { EDGE = 1, ERROR_KEPT = 2, PLACE_KEPT = 4 };

typedef struct {
    Py_ssize_t at, length;
    Py_hash_t hash;
    int kept;
} Cut;

typedef struct {
    Py_UCS4 *chars;
    Py_ssize_t used, room;
    Cut *cuts;
    Py_ssize_t count, cut_room;
    Py_ssize_t *table, size;  /* a cut's index + 1, 0 where none */
} Lines;

static Py_hash_t hash_of(const Py_UCS4 *chars, Py_ssize_t length) {
    Py_uhash_t hash = 14695981039346656037ULL;
    for (Py_ssize_t i = 0; i < length; i++)
        hash = (hash ^ chars[i]) * 1099511628211ULL;
    return (Py_hash_t)hash;
}

static int grown_table(Lines *lines) {
    Py_ssize_t size = lines->size ? lines->size * 2 : 256;
    Py_ssize_t *table = PyMem_Calloc((size_t)size, sizeof(Py_ssize_t));
    if (table == NULL)
        return -1;
    for (Py_ssize_t n = 0; n < lines->count; n++) {
        Py_ssize_t slot = (Py_ssize_t)((Py_uhash_t)lines->cuts[n].hash & (Py_uhash_t)(size - 1));
        while (table[slot])
            slot = (slot + 1) & (size - 1);
        table[slot] = n + 1;
    }
    PyMem_Free(lines->table);
    lines->table = table;
    lines->size = size;
    return 0;
}

/* The index of the line `chars` says among those added, added now when new (*added set);
 * -1 when out of memory */
static Py_ssize_t line_index(Lines *lines, const Py_UCS4 *chars, Py_ssize_t length, int *added) {
    Py_hash_t hash = hash_of(chars, length);
    if ((lines->count + 1) * 2 > lines->size && grown_table(lines) < 0)
        return -1;
    Py_ssize_t slot = (Py_ssize_t)((Py_uhash_t)hash & (Py_uhash_t)(lines->size - 1));
    for (; lines->table[slot]; slot = (slot + 1) & (lines->size - 1)) {
        Cut *cut = &lines->cuts[lines->table[slot] - 1];
        if (cut->hash == hash && cut->length == length &&
            (length == 0 || memcmp(lines->chars + cut->at, chars, sizeof(Py_UCS4) * (size_t)length) == 0)) {
            *added = 0;
            return lines->table[slot] - 1;
        }
    }
    Py_UCS4 *chars_room = with_room(lines->chars, &lines->room, lines->used + length, sizeof(Py_UCS4));
    if (chars_room == NULL)
        return -1;
    lines->chars = chars_room;
    Cut *cuts_room = with_room(lines->cuts, &lines->cut_room, lines->count + 1, sizeof(Cut));
    if (cuts_room == NULL)
        return -1;
    lines->cuts = cuts_room;
    if (length)  /* an empty line: no characters kept yet, and memcpy wants a buffer even for none */
        memcpy(lines->chars + lines->used, chars, sizeof(Py_UCS4) * (size_t)length);
    lines->cuts[lines->count] = (Cut){lines->used, length, hash, 0};
    lines->used += length;
    lines->table[slot] = ++lines->count;
    *added = 1;
    return lines->count - 1;
}

/* What read_output is told of tool_output's bounds (its _NUMBERS) */
typedef struct {
    Py_ssize_t whole, head, tail, line, edge_lines, most_lines, most_places, most_looks;
} Bounds;

/* The segments of chars[0:length] split at newlines into `pieces` (cut at line), as edges:
 * the first `most` of them, or with `last` the last */
static int edges_of(Lines *lines, const Py_UCS4 *chars, Py_ssize_t length, Py_ssize_t most, int last,
                    Py_ssize_t line, Starts *pieces) {
    Py_ssize_t count = 1, skipped = 0;
    for (Py_ssize_t i = 0; i < length; i++)
        count += chars[i] == '\n';
    if (last && count > most)
        skipped = count - most;
    for (Py_ssize_t start = 0, n = 0; n < count && n < skipped + most; n++) {
        Py_ssize_t end = start;
        while (end < length && chars[end] != '\n')
            end++;
        if (n >= skipped) {
            int added;
            Py_ssize_t index = line_index(lines, chars + start, end - start < line ? end - start : line, &added);
            if (index < 0 || push(pieces, index) < 0)
                return -1;
            lines->cuts[index].kept |= EDGE;
        }
        start = end + 1;
    }
    return 0;
}

/* tool_output.gist of the long string read by `r` (close: its closing quote): its first and
 * last lines, its distinct error lines (the first and the last half of most_lines when more),
 * its first distinct place lines, each cut at `line` */
static PyObject *long_gist(Reading *r, Py_ssize_t close, const Bounds *b) {
    Lines lines = {0};
    Starts pieces = {0}, errors = {0};
    PyObject *gist = NULL;
    Py_ssize_t room = b->head > b->tail ? b->head : b->tail;
    Py_UCS4 *scratch = PyMem_Malloc(sizeof(Py_UCS4) * (size_t)(room > b->line ? room : b->line));
    if (scratch == NULL)
        goto done;
    /* text[:head].split("\n")[:edge_lines], and text[-tail:].split("\n")[-edge_lines:]: only those lines unescaped */
    Py_ssize_t head = unescaped(r->raw, 0, close, b->head, b->edge_lines, scratch);
    if (edges_of(&lines, scratch, head, b->edge_lines, 0, b->line, &pieces) < 0)
        goto done;
    Py_ssize_t tail_start = last_lines(r->raw, chars_back(r->raw, 0, close, b->tail), close, b->edge_lines);
    Starts tail_pieces = {0};
    Py_ssize_t tail = unescaped(r->raw, tail_start, close, b->tail, 0, scratch);
    if (edges_of(&lines, scratch, tail, b->edge_lines, 1, b->line, &tail_pieces) < 0) {
        PyMem_Free(tail_pieces.at);
        goto done;
    }
    /* the error lines: each distinct one that is no edge, in order */
    for (Py_ssize_t n = 0; n < r->error_starts.count; n++) {
        Py_ssize_t length = unescaped(r->raw, r->error_starts.at[n], close, b->line, 1, scratch);
        int added;
        Py_ssize_t index = length ? line_index(&lines, scratch, length, &added) : -2;
        if (index == -1 || (index >= 0 && added && push(&errors, index) < 0)) {
            PyMem_Free(tail_pieces.at);
            goto done;
        }
    }
    Py_ssize_t first = b->most_lines / 2, last = b->most_lines - first;
    for (Py_ssize_t n = 0; n < errors.count; n++) {
        if (errors.count > b->most_lines && n >= first && n < errors.count - last)
            continue;
        lines.cuts[errors.at[n]].kept |= ERROR_KEPT;
        if (push(&pieces, errors.at[n]) < 0) {
            PyMem_Free(tail_pieces.at);
            goto done;
        }
    }
    /* the place lines: the first distinct ones that are no edge and no error line kept */
    for (Py_ssize_t n = 0, places = 0; n < r->place_starts.count && places < b->most_places; n++) {
        Py_ssize_t length = unescaped(r->raw, r->place_starts.at[n], close, b->line, 1, scratch);
        int added;
        Py_ssize_t index = length ? line_index(&lines, scratch, length, &added) : -2;
        if (index == -1) {
            PyMem_Free(tail_pieces.at);
            goto done;
        }
        if (index >= 0 && !lines.cuts[index].kept) {
            lines.cuts[index].kept |= PLACE_KEPT;
            places++;
            if (push(&pieces, index) < 0) {
                PyMem_Free(tail_pieces.at);
                goto done;
            }
        }
    }
    for (Py_ssize_t n = 0; n < tail_pieces.count; n++)
        if (push(&pieces, tail_pieces.at[n]) < 0) {
            PyMem_Free(tail_pieces.at);
            goto done;
        }
    PyMem_Free(tail_pieces.at);
    /* "\n".join(pieces) */
    Py_ssize_t total = pieces.count ? pieces.count - 1 : 0;
    Py_UCS4 most = 127;
    for (Py_ssize_t n = 0; n < pieces.count; n++) {
        const Cut *cut = &lines.cuts[pieces.at[n]];
        total += cut->length;
        for (Py_ssize_t i = 0; i < cut->length; i++)
            if (lines.chars[cut->at + i] > most)
                most = lines.chars[cut->at + i];
    }
    if ((gist = PyUnicode_New(total, most)) == NULL)
        goto done;
    int kind = PyUnicode_KIND(gist);
    void *data = PyUnicode_DATA(gist);
    for (Py_ssize_t n = 0, at = 0; n < pieces.count; n++) {
        const Cut *cut = &lines.cuts[pieces.at[n]];
        if (n)
            PyUnicode_WRITE(kind, data, at++, '\n');
        for (Py_ssize_t i = 0; i < cut->length; i++)
            PyUnicode_WRITE(kind, data, at++, lines.chars[cut->at + i]);
    }
done:
    if (gist == NULL && !PyErr_Occurred())
        PyErr_NoMemory();
    PyMem_Free(scratch);
    PyMem_Free(lines.chars);
    PyMem_Free(lines.cuts);
    PyMem_Free(lines.table);
    PyMem_Free(pieces.at);
    PyMem_Free(errors.at);
    return gist;
}

/* read_output(line, opening, end, marks, errors, numbers) -> (after, chars, shape, text or gist)
 * or None: the JSON string of bytes line[opening:end] starting at `opening` (after its quote),
 * as tool_output.raw_gist reads it with json's scanstring(strict=False) and gist: where it
 * ends (after its closing quote), its length once unescaped, its shape (for holds_raw), and
 * its text when it is at most `whole` characters long, else its gist; None when cut short or
 * badly escaped. Bytes that are not UTF-8: chars -1 and no text (read it in Python). `marks`
 * and `errors` as marked's; `numbers`: tool_output._NUMBERS. */
static PyObject *read_output(PyObject *module, PyObject *args) {
    Py_buffer line;
    Py_ssize_t opening, end, errors;
    PyObject *tuple;
    Bounds b;
    if (!PyArg_ParseTuple(args, "y*nnO!n(nnnnnnnn)", &line, &opening, &end, &PyTuple_Type, &tuple, &errors, &b.whole,
                          &b.head, &b.tail, &b.line, &b.edge_lines, &b.most_lines, &b.most_places, &b.most_looks))
        return NULL;
    PyObject *result = NULL;
    const Marks *marks = marks_of(tuple);
    if (marks == NULL)
        goto release;
    if (!marks->all_placed || opening < 0 || opening > end || end > line.len || b.head < 0 || b.tail < 0 ||
        b.line < 0 || b.edge_lines < 1 || b.most_lines < 1 || b.most_places < 0 || b.whole < b.tail) {
        PyErr_SetString(PyExc_ValueError, "read_output: marks to place, a string in the line, bounds");
        goto release;
    }
    Reading r = {.raw = (const unsigned char *)line.buf + opening, .length = end - opening, .marks = marks,
                 .errors = errors, .most = b.most_looks, .utf8 = 1};
    Py_ssize_t count = PyTuple_GET_SIZE(tuple);
    r.active = b.most_looks > 0 ? (count == 64 ? ~0ULL : (1ULL << count) - 1) : 0;
    Py_ssize_t close = read_through(&r);
    if (r.failed) {
        PyErr_NoMemory();
        goto done;
    }
    if (close < 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t after = opening + close + 1, chars = close - r.shrink;
    if (!r.utf8) {
        result = Py_BuildValue("(nniO)", after, (Py_ssize_t)-1, r.shape, Py_None);
        goto done;
    }
    PyObject *said;
    if (chars <= b.whole) {
        Py_UCS4 *text = PyMem_Malloc(sizeof(Py_UCS4) * (size_t)(chars ? chars : 1));
        if (text == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        said = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, text, unescaped(r.raw, 0, close, chars, 0, text));
        PyMem_Free(text);
    } else
        said = long_gist(&r, close, &b);
    if (said != NULL)
        result = Py_BuildValue("(nniN)", after, chars, r.shape, said);
done:
    PyMem_Free(r.error_starts.at);
    PyMem_Free(r.place_starts.at);
release:
    PyBuffer_Release(&line);
    return result;
}

/* Whether the raw bytes raw[at:] start a character: not inside an escape (\n, \uXXXX) */
static int at_char_start(const unsigned char *raw, Py_ssize_t at) {
    if (at > 0 && raw[at - 1] == '\\' && starts_escape(raw, 0, at - 1))
        return 0;
    for (Py_ssize_t k = 2; k <= 5 && at - k >= 0; k++)
        if (raw[at - k] == '\\' && raw[at - k + 1] == 'u' && starts_escape(raw, 0, at - k))
            return 0;
    return 1;
}

/* holds_raw(line, outer_opening, outer_close, outer_shape, inner_opening, inner_close,
 * inner_shape) -> bool or None: whether the text of the good string line[inner_opening:inner_close]
 * (its bytes between its quotes) is in that of line[outer_opening:outer_close], told from their
 * bytes: where their shapes agree, it is exactly where its bytes are in the other's at a
 * character's start; None where they do not (compare their texts) */
static PyObject *holds_raw(PyObject *module, PyObject *args) {
    Py_buffer line;
    Py_ssize_t outer, outer_close, inner, inner_close;
    int outer_shape, inner_shape;
    if (!PyArg_ParseTuple(args, "y*nninni", &line, &outer, &outer_close, &outer_shape, &inner, &inner_close,
                          &inner_shape))
        return NULL;
    PyObject *result = NULL;
    if (outer < 0 || outer > outer_close || outer_close > line.len || inner < 0 || inner > inner_close ||
        inner_close > line.len) {
        PyErr_SetString(PyExc_ValueError, "holds_raw: strings in the line");
    } else if (!agree(outer_shape | inner_shape)) {
        result = Py_NewRef(Py_None);
    } else {
        const unsigned char *hay = (const unsigned char *)line.buf + outer, *needle = (const unsigned char *)line.buf + inner;
        Py_ssize_t hay_length = outer_close - outer, needle_length = inner_close - inner;
        int found = needle_length == 0;
        const unsigned char *last = hay + (hay_length - needle_length);  /* where it may start, at the latest */
        for (const unsigned char *at = hay; !found && needle_length <= hay_length && at <= last; at++) {
            if ((at = memchr(at, needle[0], (size_t)(last - at + 1))) == NULL)
                break;
            found = memcmp(at, needle, (size_t)needle_length) == 0 && at_char_start(hay, at - hay);
        }
        result = Py_NewRef(found ? Py_True : Py_False);
    }
    PyBuffer_Release(&line);
    return result;
}

/* read_in_blocks(on) -> whether read_output read sixteen bytes at a time before: set where the
 * CPU can (tests hold both ways to the same answers) */
static PyObject *read_in_blocks(PyObject *module, PyObject *arg) {
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
#ifdef BLOCKS
    int was = in_blocks;
    in_blocks = on && __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("popcnt");
    return PyBool_FromLong(was);
#else
    return Py_NewRef(Py_False);
#endif
}

/* An SQLite varint at `at` (below `end`): big-endian groups of seven bits, the ninth byte whole.
 * -1 where it runs past `end` or is past what a size holds. */
static long long leaf_varint(const unsigned char *page, Py_ssize_t *at, Py_ssize_t end) {
    unsigned long long value = 0;
    for (int i = 0; i < 9; i++) {
        if (*at >= end)
            return -1;
        unsigned char c = page[(*at)++];
        value = i == 8 ? (value << 8) | c : (value << 7) | (c & 0x7f);
        if (i == 8 || c < 0x80)
            return value > PY_SSIZE_T_MAX ? -1 : (long long)value;
    }
    return -1;
}

/* leaf_terms(page, terms) -> whether the page is as FTS5's leaf format (version 4) has it: each
 * of its terms, past the main index's '0', added to the set `terms` as a str. The page's footer
 * holds where each term starts (deltas, from its header's second field on); the first term is
 * written whole, each other as the bytes it shares with the one before and its own. False for
 * anything else (a footer or a term past the page, a term of another index, bytes not UTF-8):
 * the caller then asks fts5vocab. */
static PyObject *leaf_terms(PyObject *module, PyObject *args) {
    Py_buffer block;
    PyObject *terms;
    if (!PyArg_ParseTuple(args, "y*O!", &block, &PySet_Type, &terms))
        return NULL;
    const unsigned char *page = block.buf;
    Py_ssize_t size = block.len, footer = size >= 4 ? (page[2] << 8) | page[3] : 0;
    unsigned char *term = footer >= 4 && footer <= size ? PyMem_Malloc((size_t)footer) : NULL;
    int ok = term != NULL;
    Py_ssize_t at = footer, place = 0, length = 0;
    for (int first = 1; ok && at < size; first = 0) {
        long long delta = leaf_varint(page, &at, size);
        if (delta <= 0 || delta >= footer - place) {  /* the next term's place, before the footer */
            ok = 0;
            break;
        }
        place += (Py_ssize_t)delta;
        Py_ssize_t read = place;
        long long shared = first ? 0 : leaf_varint(page, &read, footer);
        long long fresh = leaf_varint(page, &read, footer);
        if (shared < 0 || shared > length || fresh < 0 || fresh > footer - read || shared + fresh > footer) {
            ok = 0;
            break;
        }
        memcpy(term + shared, page + read, (size_t)fresh);
        length = (Py_ssize_t)(shared + fresh);
        if (length < 1 || term[0] != '0') {  /* '0': the main index (no prefix index is made) */
            ok = 0;
            break;
        }
        PyObject *text = PyUnicode_DecodeUTF8((const char *)term + 1, length - 1, NULL);
        if (text == NULL) {
            PyErr_Clear();
            ok = 0;
            break;
        }
        int added = PySet_Add(terms, text);
        Py_DECREF(text);
        if (added < 0) {
            PyMem_Free(term);
            PyBuffer_Release(&block);
            return NULL;
        }
    }
    PyMem_Free(term);
    PyBuffer_Release(&block);
    return PyBool_FromLong(ok);
}

static PyMethodDef methods[] = {
    {"counted", counted, METH_VARARGS,
     "counted(text, prefix) -> (tokens, parts): tokens.counted of an ASCII str, or of bytes"},
    {"long_runs", long_runs, METH_VARARGS, "long_runs(text, mask, least, prefixes) -> [(start, end)]: redact's runs"},
    {"found", found, METH_VARARGS, "found(text, words) -> [(word's index, place)] in the text's lower case"},
    {"marked", marked, METH_VARARGS,
     "marked(text, marks, errors, most) -> (error line starts, place line starts): tool_output._marked's lines"},
    {"read_output", read_output, METH_VARARGS,
     "read_output(line, opening, end, marks, errors, numbers) -> (after, chars, shape, text or gist) or None"},
    {"read_in_blocks", read_in_blocks, METH_O, "read_in_blocks(on) -> whether read_output read sixteen bytes at a time"},
    {"leaf_terms", leaf_terms, METH_VARARGS, "leaf_terms(page, terms) -> whether FTS5's leaf page was read into the set"},
    {"holds_raw", holds_raw, METH_VARARGS,
     "holds_raw(line, outer_opening, outer_close, outer_shape, inner_opening, inner_close, inner_shape) -> bool or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_words", NULL, -1, methods};

PyMODINIT_FUNC PyInit__words(void) {
    fill_tables();
#ifdef BLOCKS
    __builtin_cpu_init();
    in_blocks = __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("popcnt");
#endif
    return PyModule_Create(&module);
}
