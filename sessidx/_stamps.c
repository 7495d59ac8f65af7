/* readers.stamped_files in C: the listing every key press makes of every transcript (one stat
 * each) costs half as much as Python's scandir loop, which is most of the first press's CPU
 * before its first row (docs/speed.md). And readers.type_marks, the `"type":"..."` marks a
 * transcript's tail is searched by: in Python that is a regex, and importing `re` costs the
 * first press ever 4-8 ms before its first row. Built when a compiler is there (setup.py:
 * optional); readers.py falls back to Python otherwise, and holds both to the same answers. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __APPLE__
#define MTIME(st) (st).st_mtimespec
#define CTIME(st) (st).st_ctimespec
#else
#define MTIME(st) (st).st_mtim
#define CTIME(st) (st).st_ctim
#endif

static PyObject *nanoseconds(struct timespec t) {
    return PyLong_FromLongLong((long long)t.tv_sec * 1000000000LL + t.tv_nsec);
}

/* (name, (size, mtime_ns, ctime_ns, inode)): the stamp readers.stamp makes */
static int add_file(PyObject *found, const char *name, size_t length, const struct stat *st) {
    PyObject *stamp = PyTuple_New(4), *item = PyTuple_New(2);
    if (stamp == NULL || item == NULL) {
        Py_XDECREF(stamp);
        Py_XDECREF(item);
        return -1;
    }
    PyTuple_SET_ITEM(stamp, 0, PyLong_FromLongLong((long long)st->st_size));
    PyTuple_SET_ITEM(stamp, 1, nanoseconds(MTIME(*st)));
    PyTuple_SET_ITEM(stamp, 2, nanoseconds(CTIME(*st)));
    PyTuple_SET_ITEM(stamp, 3, PyLong_FromUnsignedLongLong((unsigned long long)st->st_ino));
    PyTuple_SET_ITEM(item, 0, PyUnicode_DecodeFSDefaultAndSize(name, (Py_ssize_t)length));
    PyTuple_SET_ITEM(item, 1, stamp);
    int failed = PyErr_Occurred() != NULL || PyList_Append(found, item) < 0;
    Py_DECREF(item);
    return failed ? -1 : 0;
}

static int add_folder(PyObject *folders, const char *name) {
    PyObject *text = PyUnicode_DecodeFSDefault(name);
    if (text == NULL)
        return -1;
    int failed = PySet_Add(folders, text);
    Py_DECREF(text);
    return failed;
}

static int ends_with(const char *name, size_t length, const char *suffix, size_t suffix_length) {
    return length >= suffix_length && memcmp(name + length - suffix_length, suffix, suffix_length) == 0;
}

/* Entries of the open folder `fd` into `found` and `folders`; -1 on a Python error. A folder
 * that cannot be read, or an entry that cannot be stat'ed, is skipped, as os.scandir's loop does. */
static int scan(int fd, const char *suffix, size_t suffix_length, const char *skip, size_t skip_length,
                PyObject *found, PyObject *folders) {
    DIR *dir = fdopendir(fd);
    if (dir == NULL) {
        close(fd);
        return 0;
    }
    int failed = 0;
    struct dirent *entry;
    while (!failed && (entry = readdir(dir)) != NULL) {
        const char *name = entry->d_name;
        size_t length = strlen(name);
        struct stat st;
        if (ends_with(name, length, suffix, suffix_length)) {
            if (skip_length && strncmp(name, skip, skip_length) == 0)
                continue;
            if (fstatat(fd, name, &st, 0) == 0 && S_ISREG(st.st_mode))
                failed = add_file(found, name, length, &st);
            continue;
        }
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        int is_dir = entry->d_type == DT_DIR;
        if (entry->d_type == DT_UNKNOWN)  /* file systems that do not fill d_type: ask, not following links */
            is_dir = fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        if (is_dir)
            failed = add_folder(folders, name);
    }
    closedir(dir);
    return failed ? -1 : 0;
}

static PyObject *stamped_files(PyObject *self, PyObject *args) {
    PyObject *folder = NULL, *suffix = NULL, *skip = NULL, *found = NULL, *folders = NULL, *result = NULL;
    if (!PyArg_ParseTuple(args, "O&O&O&", PyUnicode_FSConverter, &folder, PyUnicode_FSConverter, &suffix,
                          PyUnicode_FSConverter, &skip))
        goto done;
    found = PyList_New(0);
    folders = PySet_New(NULL);
    if (found == NULL || folders == NULL)
        goto done;
    int fd = open(PyBytes_AS_STRING(folder), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 && scan(fd, PyBytes_AS_STRING(suffix), (size_t)PyBytes_GET_SIZE(suffix), PyBytes_AS_STRING(skip),
                        (size_t)PyBytes_GET_SIZE(skip), found, folders) < 0)
        goto done;
    result = PyTuple_Pack(2, found, folders);
done:
    Py_XDECREF(folder);
    Py_XDECREF(suffix);
    Py_XDECREF(skip);
    Py_XDECREF(found);
    Py_XDECREF(folders);
    return result;
}

/* A character of a mark's name: [A-Za-z0-9_.-] */
static int name_char(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
}

/* [(start, name)] of each `"type": ?"NAME"` in data[start:end], left to right, none overlapping:
 * what re.finditer(rb'"type": ?"([A-Za-z0-9_.-]+)"', data, start, end) finds. */
static PyObject *type_marks(PyObject *self, PyObject *args) {
    static const char key[] = "\"type\":";
    const Py_ssize_t key_length = (Py_ssize_t)sizeof key - 1;
    Py_buffer data;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "y*nn", &data, &start, &end))
        return NULL;
    const unsigned char *bytes = data.buf;
    Py_ssize_t length = data.len;
    if (end > length)
        end = length;
    if (start < 0)
        start = 0;
    PyObject *found = PyList_New(0);
    Py_ssize_t at = start;
    while (found != NULL && at + key_length < end) {
        const unsigned char *hit = memmem(bytes + at, (size_t)(end - at), key, (size_t)key_length);
        if (hit == NULL)
            break;
        Py_ssize_t mark = hit - bytes, i = mark + key_length;
        if (i < end && bytes[i] == ' ')
            i++;
        if (i >= end || bytes[i] != '"') {
            at = mark + 1;
            continue;
        }
        Py_ssize_t name = ++i;
        while (i < end && name_char(bytes[i]))
            i++;
        if (i == name || i >= end || bytes[i] != '"') {
            at = mark + 1;
            continue;
        }
        PyObject *item = Py_BuildValue("(ny#)", mark, (const char *)bytes + name, i - name);
        if (item == NULL || PyList_Append(found, item) < 0)
            Py_CLEAR(found);
        Py_XDECREF(item);
        at = i + 1;
    }
    PyBuffer_Release(&data);
    return found;
}

static PyMethodDef methods[] = {
    {"stamped_files", stamped_files, METH_VARARGS,
     "stamped_files(folder, suffix, skip_prefix) -> ([(name, (size, mtime_ns, ctime_ns, inode))], {folder names})"},
    {"type_marks", type_marks, METH_VARARGS,
     "type_marks(data, start, end) -> [(position, name)] of each `\"type\": ?\"NAME\"` in data[start:end]"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "sessidx._stamps", NULL, -1, methods};

PyMODINIT_FUNC PyInit__stamps(void) { return PyModule_Create(&module); }
