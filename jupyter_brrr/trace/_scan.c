/* A columnar reader for the events of a Chrome-trace (Kineto) JSON file.

   scan(buffer, start, end) reads the JSON array buffer[start:end] of trace events and returns
   their fields as columns, without making a Python object per event:

       (count, codes, numbers, uniques)

   - codes: int32, FIELD_COUNT columns of `count` rows (column-major), for the fields that repeat
     (phase, category, name, pid, tid, and some args): the index of the field's raw JSON text in
     uniques[field], or -1 where the event lacks the field;
   - numbers: float64, NUMBER_COUNT columns of `count` rows: ts, dur and two ids, NaN where absent
     or null;
   - uniques: one list per coded field of the distinct raw JSON texts (bytes), in order of first
     appearance; the caller decodes each distinct value once.

   The reader is strict: on anything outside the plain layout it knows (invalid JSON, malformed
   UTF-8 or a lone UTF-16 surrogate escape in any string, a string key with escapes, a non-string
   phase, an array or object where an id belongs, a non-numeric time, nesting deeper than
   MAX_DEPTH) it returns None, and the caller decodes that chunk with its general JSON decoder
   instead, which then gives the result or the error message. So this file decides speed, never
   meaning: every text it reads, the general decoder reads to the same values.

   split(buffer, start, stop, state, first) finds where the values of a JSON container end,
   without parsing them: the caller cuts a file of any layout into chunks of whole events with
   it, and finds the top-level members of the file (see split's comment below).

   The scan itself runs without the GIL (it makes no Python object), so that several chunks of a
   file can be read at once by threads; the distinct texts are made into bytes afterwards.

   Numbers are converted exactly as a correctly rounded strtod would: a fast path where the
   decimal is exact in a double (Clinger's), or for the "16 integer digits and a few decimals"
   microsecond timestamps, and PyOS_string_to_double, after the scan, otherwise.

   It uses CPython's limited API of 3.10 only, so one build (a wheel tagged abi3) imports on
   CPython 3.10 and every later version: hence malloc rather than PyMem_RawMalloc (limited only
   from 3.13) and bytes or a bytearray rather than any buffer (Py_buffer: from 3.11). A free-
   threaded CPython has no limited API: there hatch_build.py defines SCAN_FULL_C_API, and the same
   code builds for that one version.

   Built by hatch_build.py at install; after a change here, `pip install -e .` again (a test
   fails while the built module is older than this file). */

#define PY_SSIZE_T_CLEAN
#if !defined(Py_LIMITED_API) && !defined(SCAN_FULL_C_API)
#define Py_LIMITED_API 0x030A0000
#endif
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { PH, CAT, NAME, PID, TID, STREAM, DEVICE, BYTES, DIMS, TYPES, CONCRETE, TOTAL, DEVICE_ID,
       GRID, COLLECTIVE, IN_NELEMS, OUT_NELEMS, GROUP_SIZE, COMM_DTYPE, BLOCK, REGISTERS,
       SHARED_MEMORY, STRIDES, FIELD_COUNT };
enum { TS, DUR, EXTERNAL_ID, CORRELATION, NUMBER_COUNT };
enum { MAX_DEPTH = 256, MAX_NUMBER_TEXT = 20 };

/* --- growable columns -------------------------------------------------------------------- */

/* Everything the scan allocates comes from malloc, which needs no GIL. */

/* `*items` grown to hold at least `needed` items of `size` bytes; -1 when out of memory. */
static int grow(void **items, size_t *capacity, size_t needed, size_t size) {
    if (needed <= *capacity) return 0;
    size_t grown = *capacity ? *capacity : 1024;
    while (grown < needed) grown *= 2;
    void *moved = realloc(*items, grown * size);
    if (!moved) return -1;
    *items = moved;
    *capacity = grown;
    return 0;
}

typedef struct {
    size_t offset, length;
} Span;

typedef struct {
    Span text;
    Py_ssize_t row;
    int field;
} Deferred; /* a number left to PyOS_string_to_double once the GIL is back */

typedef struct {
    int32_t *codes[FIELD_COUNT];
    double *numbers[NUMBER_COUNT];
    size_t count, capacity;
    Deferred *deferred;
    size_t deferred_count, deferred_capacity;
} Columns;

/* Room for twice as many rows in every column; -1 when out of memory. */
static int columns_grow(Columns *c) {
    size_t capacity = c->capacity ? c->capacity * 2 : 4096;
    for (int f = 0; f < FIELD_COUNT; f++) {
        int32_t *moved = realloc(c->codes[f], capacity * sizeof(int32_t));
        if (!moved) return -1;
        c->codes[f] = moved;
    }
    for (int f = 0; f < NUMBER_COUNT; f++) {
        double *moved = realloc(c->numbers[f], capacity * sizeof(double));
        if (!moved) return -1;
        c->numbers[f] = moved;
    }
    c->capacity = capacity;
    return 0;
}

static void columns_free(Columns *c) {
    for (int f = 0; f < FIELD_COUNT; f++) free(c->codes[f]);
    for (int f = 0; f < NUMBER_COUNT; f++) free(c->numbers[f]);
    free(c->deferred);
}

/* --- interning raw values ---------------------------------------------------------------- */

typedef struct {
    uint64_t hash;
    int32_t code; /* -1: an empty slot */
} Slot;

typedef struct {
    const char *text; /* the buffer the spans point into */
    Slot *slots;
    size_t mask;  /* slot count - 1, a power of two */
    Span *spans;  /* the distinct values, by code */
    size_t count, capacity;
    int32_t last; /* the code interned last (-1: none): a field often repeats its last value */
} Interner;

/* The n < 8 bytes at p as one word, built in registers from at most three loads: a memcpy of a
   variable length into a word on the stack is a byte loop whose word load then waits for the
   bytes' stores (a store-forwarding stall), which was a fifth of the scan's time. Overlapping
   loads put the same byte in the same place, so the OR is exact. */
static inline uint64_t tail_word(const char *p, size_t n) {
    const unsigned char *u = (const unsigned char *)p;
    if (n >= 4) {
        uint32_t low, high;
        memcpy(&low, u, 4);
        memcpy(&high, u + n - 4, 4);
        return (uint64_t)low | ((uint64_t)high << (8 * (n - 4)));
    }
    if (!n) return 0;
    return (uint64_t)u[0] | ((uint64_t)u[n >> 1] << (8 * (n >> 1))) |
           ((uint64_t)u[n - 1] << (8 * (n - 1)));
}

static uint64_t hash_bytes(const char *p, size_t n) {
    /* Word-at-a-time multiply-xorshift: spans are short, and collisions only cost a memcmp. */
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xff51afd7ed558ccdull);
    uint64_t w;
    while (n >= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
        p += 8;
        n -= 8;
    }
    h = (h ^ tail_word(p, n)) * 0x94d049bb133111ebull;
    return h ^ (h >> 29);
}

static Slot *empty_slots(size_t count) {
    Slot *slots = malloc(count * sizeof(Slot));
    if (slots)
        for (size_t i = 0; i < count; i++) slots[i].code = -1;
    return slots;
}

static int interner_init(Interner *t, const char *text) {
    t->text = text;
    t->last = -1;
    t->mask = 255;
    t->slots = empty_slots(t->mask + 1);
    return t->slots ? 0 : -1;
}

static void interner_free(Interner *t) {
    free(t->slots);
    free(t->spans);
}

static int interner_grow(Interner *t) {
    size_t mask = t->mask * 2 + 1;
    Slot *slots = empty_slots(mask + 1);
    if (!slots) return -1;
    for (size_t i = 0; i <= t->mask; i++) {
        Slot s = t->slots[i];
        if (s.code < 0) continue;
        size_t j = s.hash & mask;
        while (slots[j].code >= 0) j = (j + 1) & mask;
        slots[j] = s;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = mask;
    return 0;
}

/* The code of the span p[0:n] of the buffer, a new one if the text is new; -1 when out of
   memory. */
static int32_t intern(Interner *t, const char *p, size_t n) {
    if (t->last >= 0) { /* the same text as the last one (a phase, a category, a thread) */
        Span last = t->spans[t->last];
        if (last.length == n && memcmp(t->text + last.offset, p, n) == 0) return t->last;
    }
    uint64_t h = hash_bytes(p, n);
    size_t i = h & t->mask;
    for (;; i = (i + 1) & t->mask) {
        Slot *s = &t->slots[i];
        if (s->code < 0) break;
        Span known = t->spans[s->code];
        if (s->hash == h && known.length == n && memcmp(t->text + known.offset, p, n) == 0)
            return t->last = s->code;
    }
    if (t->count >= INT32_MAX ||
        grow((void **)&t->spans, &t->capacity, t->count + 1, sizeof(Span)) < 0)
        return -1;
    int32_t code = (int32_t)t->count++;
    t->spans[code] = (Span){(size_t)(p - t->text), n};
    t->slots[i] = (Slot){h, code};
    if (t->count * 2 > t->mask && interner_grow(t) < 0) return -1;
    return t->last = code;
}

/* The distinct values as a list of bytes; needs the GIL. */
static PyObject *interner_values(Interner *t) {
    PyObject *values = PyList_New((Py_ssize_t)t->count);
    for (size_t i = 0; values && i < t->count; i++) {
        PyObject *value =
            PyBytes_FromStringAndSize(t->text + t->spans[i].offset, (Py_ssize_t)t->spans[i].length);
        if (!value) Py_CLEAR(values);
        else if (PyList_SetItem(values, (Py_ssize_t)i, value) < 0) Py_CLEAR(values);
    }
    return values;
}

/* --- JSON ---------------------------------------------------------------------------------- */

/* Every parsing function takes the current position and returns the position after what it
   read, or NULL where the text is not what this reader accepts. */

/* Words of eight bytes tested at once (SWAR), where the byte order is known. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    (defined(__GNUC__) || defined(__clang__))
#define LITTLE_ENDIAN_WORDS 1
#else
#define LITTLE_ENDIAN_WORDS 0
#endif
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
static inline uint64_t has_zero_byte(uint64_t v) { return (v - ONES) & ~v & HIGHS; }

static inline int is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

static inline const char *skip_space(const char *p, const char *end) {
    if (p < end && (unsigned char)*p > ' ') return p; /* no whitespace: compact JSON */
    while (p < end && is_space(*p)) {
        p++;
#if LITTLE_ENDIAN_WORDS
        /* An indent (Kineto's layout: a newline and 4 to 8 spaces before each key): the run of
           spaces eight bytes a step, ended at its first other byte. */
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            uint64_t other = w ^ (ONES * ' '); /* a zero byte where a space is */
            if (other) {
                p += __builtin_ctzll(other) >> 3;
                break;
            }
            p += 8;
        }
#endif
    }
    return p;
}

/* Whether any byte of w is a quote, a backslash, a control character or not ASCII (SWAR: eight
   bytes a step, as most of a trace's bytes are in long ASCII kernel names). */
static inline int has_string_end(uint64_t w) {
    return (has_zero_byte(w ^ (ONES * '"')) | has_zero_byte(w ^ (ONES * '\\')) |
            ((w - ONES * 0x20) & ~w & HIGHS)) != 0;
}
static inline int has_special_byte(uint64_t w) { return has_string_end(w) || (w & HIGHS); }

/* The offset in w of its first quote, backslash or control character (and with `high`, byte
   of 0x80 or more), 8 if none. On little-endian words the lowest flagged byte of the tests
   above is exact (only bytes above it can be flagged falsely); elsewhere 0 stands for "some". */
static inline int first_special(uint64_t w, int high) {
#if LITTLE_ENDIAN_WORDS
    uint64_t flags = has_zero_byte(w ^ (ONES * '"')) | has_zero_byte(w ^ (ONES * '\\')) |
                     ((w - ONES * 0x20) & ~w & HIGHS) | (high ? w & HIGHS : 0);
    return flags ? __builtin_ctzll(flags) >> 3 : 8;
#else
    return (high ? has_special_byte(w) : has_string_end(w)) ? 0 : 8;
#endif
}

static inline int hex_value(char h) {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return -1;
}

/* The four hex digits at p as a number; -1 if they are not four hex digits. */
static int read_hex4(const char *p, const char *end) {
    if (end - p < 4) return -1;
    int value = 0;
    for (int k = 0; k < 4; k++) {
        int digit = hex_value(p[k]);
        if (digit < 0) return -1;
        value = value * 16 + digit;
    }
    return value;
}

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong forms, no encoded
   surrogates, nothing past U+10FFFF, as Python's strict decoder), or 0. */
static size_t utf8_length(const unsigned char *p, const unsigned char *end) {
    unsigned char c = p[0];
    size_t n;
    unsigned char low = 0x80, high = 0xBF; /* the range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) low = 0xA0;
        if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) low = 0x90;
        if (c == 0xF4) high = 0x8F;
    } else return 0;
    if ((size_t)(end - p) < n || p[1] < low || p[1] > high) return 0;
    for (size_t k = 2; k < n; k++)
        if (p[k] < 0x80 || p[k] > 0xBF) return 0;
    return n;
}

/* p at the opening quote; *escaped set if the string holds an escape. Declines what msgspec or
   a strict UTF-8 decoder refuses: control characters, unknown escapes, a UTF-16 surrogate
   escape without its pair, malformed UTF-8. */
static const char *skip_string(const char *p, const char *end, int *escaped) {
    *escaped = 0;
    for (p++;; p++) {
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            int at = first_special(w, 1);
            p += at;
            if (at < 8) break;
        }
        if (p >= end) return NULL;
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p + 1;
        if (c < 0x20) return NULL;
        if (c >= 0x80) {
            size_t n = utf8_length((const unsigned char *)p, (const unsigned char *)end);
            if (!n) return NULL;
            p += n - 1;
            continue;
        }
        if (c == '\\') {
            *escaped = 1;
            if (++p >= end) return NULL;
            switch (*p) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                break;
            case 'u': {
                int unit = read_hex4(p + 1, end);
                if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return NULL;
                p += 4;
                if (unit >= 0xD800 && unit <= 0xDBFF) { /* a high surrogate: its low one next */
                    if (end - p < 3 || p[1] != '\\' || p[2] != 'u') return NULL;
                    int pair = read_hex4(p + 3, end);
                    if (pair < 0xDC00 || pair > 0xDFFF) return NULL;
                    p += 6;
                }
                break;
            }
            default:
                return NULL;
            }
        }
    }
}

static inline int is_digit(char c) { return c >= '0' && c <= '9'; }

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                               1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A JSON number; its value in *value when value is not NULL, or *deferred set where only
   PyOS_string_to_double can convert it exactly. */
static const char *read_number(const char *p, const char *end, double *value, int *deferred) {
    int negative = 0, exponent = 0;
    uint64_t integer = 0, fraction = 0;
    int integer_digits = 0, fraction_digits = 0;
    if (p < end && *p == '-') {
        negative = 1;
        p++;
    }
    if (p >= end || !is_digit(*p)) return NULL;
    if (*p == '0') {
        p++;
    } else {
        for (; p < end && is_digit(*p); p++, integer_digits++)
            if (integer_digits < 19) integer = integer * 10 + (uint64_t)(*p - '0');
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !is_digit(*p)) return NULL;
        for (; p < end && is_digit(*p); p++, fraction_digits++)
            if (fraction_digits < 19) fraction = fraction * 10 + (uint64_t)(*p - '0');
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        exponent = 1;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || !is_digit(*p)) return NULL;
        while (p < end && is_digit(*p)) p++;
    }
    if (!value) return p;

    const uint64_t exact = 1ull << 53;
    if (!exponent && integer_digits + fraction_digits <= 19 && fraction_digits <= 22 &&
        integer_digits <= 19) {
        uint64_t mantissa = integer;
        int ok = 1;
        for (int k = 0; k < fraction_digits && ok; k++) {
            if (mantissa > (UINT64_MAX - 9) / 10) ok = 0;
            else mantissa *= 10;
        }
        if (ok) mantissa += fraction;
        if (ok && mantissa < exact) {
            /* Both operands exact: one correctly rounded division (Clinger's fast path). */
            double v = (double)mantissa / POW10[fraction_digits];
            *value = negative ? -v : v;
            return p;
        }
        if (integer < exact && integer_digits + fraction_digits > 15 && fraction_digits <= 7) {
            /* A large integer part and a few decimals (Kineto's microsecond timestamps): the
               integer part is exact, the decimals' rounding error (< 2^-53 of them) is far
               below the distance of the exact sum to any rounding boundary of the result. */
            double v = (double)integer + (double)fraction / POW10[fraction_digits];
            *value = negative ? -v : v;
            return p;
        }
    }
    *deferred = 1;
    return p;
}

/* The numbers the scan deferred, converted; needs the GIL. -1 with an exception on failure,
   1 for a number out of range. */
static int convert_deferred(Columns *c, const char *text) {
    for (size_t i = 0; i < c->deferred_count; i++) {
        Deferred d = c->deferred[i];
        char *number = PyMem_Malloc(d.text.length + 1);
        if (!number) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(number, text + d.text.offset, d.text.length);
        number[d.text.length] = '\0';
        double v = PyOS_string_to_double(number, NULL, NULL); /* overflow gives inf */
        PyMem_Free(number);
        if (v == -1.0 && PyErr_Occurred()) return -1;
        if (!isfinite(v)) return 1; /* out of a double's range: left to the general decoder */
        c->numbers[d.field][d.row] = v;
    }
    return 0;
}

static const char *skip_value(const char *p, const char *end, int depth);

static const char *skip_container(const char *p, const char *end, int depth, char close) {
    int escaped;
    if (depth > MAX_DEPTH) return NULL;
    p = skip_space(p + 1, end);
    if (p < end && *p == close) return p + 1;
    for (;;) {
        if (close == '}') {
            if (p >= end || *p != '"') return NULL;
            if (!(p = skip_string(p, end, &escaped))) return NULL;
            p = skip_space(p, end);
            if (p >= end || *p != ':') return NULL;
            p = skip_space(p + 1, end);
        }
        if (!(p = skip_value(p, end, depth + 1))) return NULL;
        p = skip_space(p, end);
        if (p >= end) return NULL;
        if (*p == close) return p + 1;
        if (*p != ',') return NULL;
        p = skip_space(p + 1, end);
    }
}

static const char *skip_literal(const char *p, const char *end, const char *word, size_t n) {
    return (size_t)(end - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
}

static const char *skip_value(const char *p, const char *end, int depth) {
    int escaped;
    if (p >= end) return NULL;
    switch (*p) {
    case '"': return skip_string(p, end, &escaped);
    case '{': return skip_container(p, end, depth, '}');
    case '[': return skip_container(p, end, depth, ']');
    case 't': return skip_literal(p, end, "true", 4);
    case 'f': return skip_literal(p, end, "false", 5);
    case 'n': return skip_literal(p, end, "null", 4);
    default: return read_number(p, end, NULL, NULL);
    }
}

/* --- events -------------------------------------------------------------------------------- */

/* What the general decoder accepts in a coded field; anything else is not ours to judge. */
enum { ANY_VALUE, STRING_ONLY, SCALAR_ONLY };

typedef struct {
    const char *key;
    size_t length; /* of key: compared first, as most keys differ in length */
    int coded;     /* a coded field (index into codes) or a number (index into numbers) */
    int index;
    int accepts;   /* for a coded field: ANY_VALUE, STRING_ONLY or SCALAR_ONLY */
} Field;

#define FIELD(key, coded, index, accepts) {key, sizeof(key) - 1, coded, index, accepts}
static const Field EVENT_FIELDS[] = {
    FIELD("ph", 1, PH, STRING_ONLY),   FIELD("cat", 1, CAT, STRING_ONLY),
    FIELD("name", 1, NAME, STRING_ONLY), FIELD("pid", 1, PID, SCALAR_ONLY),
    FIELD("tid", 1, TID, SCALAR_ONLY), FIELD("ts", 0, TS, 0),
    FIELD("dur", 0, DUR, 0),           {NULL, 0, 0, 0, 0},
};
static const Field ARGS_FIELDS[] = {
    FIELD("External id", 0, EXTERNAL_ID, 0),         FIELD("correlation", 0, CORRELATION, 0),
    FIELD("stream", 1, STREAM, SCALAR_ONLY),         FIELD("device", 1, DEVICE, SCALAR_ONLY),
    FIELD("bytes", 1, BYTES, SCALAR_ONLY),           FIELD("Input Dims", 1, DIMS, ANY_VALUE),
    FIELD("Input type", 1, TYPES, ANY_VALUE),        FIELD("Concrete Inputs", 1, CONCRETE, ANY_VALUE),
    FIELD("Total Allocated", 1, TOTAL, SCALAR_ONLY), FIELD("Device Id", 1, DEVICE_ID, SCALAR_ONLY),
    FIELD("grid", 1, GRID, ANY_VALUE),               FIELD("Collective name", 1, COLLECTIVE, SCALAR_ONLY),
    FIELD("In msg nelems", 1, IN_NELEMS, SCALAR_ONLY), FIELD("Out msg nelems", 1, OUT_NELEMS, SCALAR_ONLY),
    FIELD("Group size", 1, GROUP_SIZE, SCALAR_ONLY), FIELD("dtype", 1, COMM_DTYPE, SCALAR_ONLY),
    FIELD("block", 1, BLOCK, ANY_VALUE),             FIELD("registers per thread", 1, REGISTERS, SCALAR_ONLY),
    FIELD("shared memory", 1, SHARED_MEMORY, SCALAR_ONLY), FIELD("Input Strides", 1, STRIDES, ANY_VALUE),
    {NULL, 0, 0, 0, 0},
};

/* The fields of a table by the length of their key (a key of another length is none of
   them: most of an event's keys are not kept), each with its key's first (up to) eight bytes as
   a word (tail_word), compared before the rest: a key of eight bytes or fewer is matched
   without a call to memcmp. Set by module_exec. */
enum { MAX_KEY = 32, SAME_LENGTH = 4 };
typedef struct {
    int count;
    const Field *fields[SAME_LENGTH];
    uint64_t prefixes[SAME_LENGTH];
} KeysOfLength;
static KeysOfLength EVENT_KEYS[MAX_KEY], ARGS_KEYS[MAX_KEY];

#if LITTLE_ENDIAN_WORDS
enum { PREFIX_EXACT = 8 }; /* a prefix word holds its bytes as they are: equal words, equal bytes */
#else
enum { PREFIX_EXACT = 0 }; /* only a necessary condition: the whole key is compared */
#endif

/* -1 where a table outgrows KeysOfLength (a change to the tables above). */
static int init_keys(const Field *fields, KeysOfLength *keys) {
    memset(keys, 0, MAX_KEY * sizeof(KeysOfLength));
    for (const Field *f = fields; f->key; f++) {
        if (f->length >= MAX_KEY || keys[f->length].count == SAME_LENGTH) return -1;
        KeysOfLength *k = &keys[f->length];
        k->fields[k->count] = f;
        k->prefixes[k->count++] = tail_word(f->key, f->length < 8 ? f->length : 8);
    }
    return 0;
}

static inline const Field *find_field(const Field *fields, const char *key, size_t n) {
    if (n >= MAX_KEY) return NULL;
    const KeysOfLength *k = &(fields == EVENT_FIELDS ? EVENT_KEYS : ARGS_KEYS)[n];
    if (!k->count) return NULL;
    uint64_t prefix = tail_word(key, n < 8 ? n : 8);
    for (int i = 0; i < k->count; i++)
        if (k->prefixes[i] == prefix &&
            (n <= PREFIX_EXACT ||
             memcmp(k->fields[i]->key + PREFIX_EXACT, key + PREFIX_EXACT, n - PREFIX_EXACT) == 0))
            return k->fields[i];
    return NULL;
}

typedef struct {
    const char *text; /* the buffer */
    Columns columns;
    Interner interners[FIELD_COUNT];
    int memory_error;
} Reader;

/* The value at p, stored in row `row` of the field's column when the field is one we keep. */
static const char *read_field(Reader *r, const Field *f, const char *p, const char *end,
                              Py_ssize_t row, int depth) {
    if (!f) return skip_value(p, end, depth);
    if (!f->coded) {
        double *slot = &r->columns.numbers[f->index][row];
        if (p < end && *p == 'n') {
            *slot = NAN;
            return skip_literal(p, end, "null", 4);
        }
        if (p >= end || !(*p == '-' || is_digit(*p))) return NULL;
        int deferred = 0;
        const char *after = read_number(p, end, slot, &deferred);
        /* A long integer literal is a Python int to the general decoder, which refuses one of
           thousands of digits: not ours to judge (Kineto's ids have at most 19 digits). */
        if (after && after - p > MAX_NUMBER_TEXT && !memchr(p, '.', (size_t)(after - p)) &&
            !memchr(p, 'e', (size_t)(after - p)) && !memchr(p, 'E', (size_t)(after - p)))
            return NULL;
        if (after && deferred) {
            Columns *c = &r->columns;
            if (grow((void **)&c->deferred, &c->deferred_capacity, c->deferred_count + 1,
                     sizeof(Deferred)) < 0) {
                r->memory_error = 1;
                return NULL;
            }
            Span text = {(size_t)(p - r->text), (size_t)(after - p)};
            c->deferred[c->deferred_count++] = (Deferred){text, row, f->index};
        }
        return after;
    }
    if (p >= end) return NULL;
    if (f->accepts == STRING_ONLY && *p != '"') return NULL;
    if (f->accepts == SCALAR_ONLY && (*p == '{' || *p == '[')) return NULL;
    const char *after = skip_value(p, end, depth);
    if (!after) return NULL;
    /* A coded number is decoded later, where one the general decoder refuses (beyond a double,
       thousands of digits) would be an error outside any chunk: long or exponent numbers are
       left to it here. */
    if (f->accepts == SCALAR_ONLY && (*p == '-' || is_digit(*p)) &&
        (after - p > MAX_NUMBER_TEXT || memchr(p, 'e', (size_t)(after - p)) ||
         memchr(p, 'E', (size_t)(after - p))))
        return NULL;
    int32_t code = intern(&r->interners[f->index], p, (size_t)(after - p));
    if (code < 0) {
        r->memory_error = 1;
        return NULL;
    }
    r->columns.codes[f->index][row] = code;
    return after;
}

/* An object whose known keys are read into row `row`; p at its opening brace. A known key
   written twice is declined: the general decoder's "last one wins" is not worth copying. */
static const char *read_object(Reader *r, const Field *fields, const char *p, const char *end,
                               Py_ssize_t row, int is_event) {
    const uint32_t ARGS_SEEN = 1u << 31;
    uint32_t seen = 0; /* bit i: fields[i] read */
    int escaped;
    p = skip_space(p + 1, end);
    if (p < end && *p == '}') return p + 1;
    for (;;) {
        if (p >= end || *p != '"') return NULL;
        const char *key = p + 1;
        if (!(p = skip_string(p, end, &escaped)) || escaped) return NULL;
        size_t key_length = (size_t)(p - 1 - key);
        const Field *f = find_field(fields, key, key_length);
        uint32_t bit = f ? 1u << (f - fields) : 0;
        if (is_event && key_length == 4 && memcmp(key, "args", 4) == 0) bit = ARGS_SEEN;
        if (seen & bit) return NULL;
        seen |= bit;
        p = skip_space(p, end);
        if (p >= end || *p != ':') return NULL;
        p = skip_space(p + 1, end);
        if (bit == ARGS_SEEN) {
            if (p < end && *p == '{') p = read_object(r, ARGS_FIELDS, p, end, row, 0);
            else if (p < end && *p == 'n') p = skip_literal(p, end, "null", 4);
            else return NULL;
        } else {
            p = read_field(r, f, p, end, row, 2);
        }
        if (!p) return NULL;
        p = skip_space(p, end);
        if (p >= end) return NULL;
        if (*p == '}') return p + 1;
        if (*p != ',') return NULL;
        p = skip_space(p + 1, end);
    }
}

static const char *read_events(Reader *r, const char *p, const char *end) {
    Columns *c = &r->columns;
    p = skip_space(p, end);
    if (p >= end || *p != '[') return NULL;
    p = skip_space(p + 1, end);
    if (p < end && *p == ']') return p + 1;
    for (;;) {
        if (p >= end || *p != '{') return NULL;
        if (c->count == c->capacity && columns_grow(c) < 0) {
            r->memory_error = 1;
            return NULL;
        }
        Py_ssize_t row = (Py_ssize_t)c->count++;
        for (int f = 0; f < FIELD_COUNT; f++) c->codes[f][row] = -1;
        for (int f = 0; f < NUMBER_COUNT; f++) c->numbers[f][row] = NAN;
        if (!(p = read_object(r, EVENT_FIELDS, p, end, row, 1))) return NULL;
        p = skip_space(p, end);
        if (p >= end) return NULL;
        if (*p == ']') return p + 1;
        if (*p != ',') return NULL;
        p = skip_space(p + 1, end);
    }
}

/* --- the text a call reads --------------------------------------------------------------- */

/* The bytes of a bytes or bytearray object, held still while the GIL is released: a bytearray
   cannot be resized (its bytes moved) while a memoryview of it exists, so `pin` is one; for
   bytes, which never change, a reference. */
typedef struct {
    const char *bytes;
    Py_ssize_t length;
    PyObject *pin;
} Text;

static int text_open(PyObject *object, Text *text, const char *caller) {
    if (PyBytes_Check(object)) {
        text->pin = Py_NewRef(object);
        text->bytes = PyBytes_AsString(object);
        text->length = PyBytes_Size(object);
        return 0;
    }
    if (PyByteArray_Check(object)) {
        text->pin = PyMemoryView_FromObject(object);
        if (!text->pin) return -1;
        text->bytes = PyByteArray_AsString(object);
        text->length = PyByteArray_Size(object);
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s: the buffer must be bytes or a bytearray", caller);
    return -1;
}

static void text_close(Text *text) {
    Py_CLEAR(text->pin); /* the last reference to its memoryview: the bytearray is free again */
}

/* The text of a call's buffer argument with its start and stop checked; -1 with an exception. */
static int text_of(PyObject *buffer, Py_ssize_t start, Py_ssize_t stop, Text *text,
                   const char *caller) {
    if (text_open(buffer, text, caller) < 0) return -1;
    if (start < 0 || stop > text->length || start > stop) {
        text_close(text);
        PyErr_Format(PyExc_ValueError, "%s: start and stop out of the buffer", caller);
        return -1;
    }
    return 0;
}

static PyObject *scan(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *buffer;
    Py_ssize_t start, stop;
    Text view;
    if (!PyArg_ParseTuple(args, "Onn", &buffer, &start, &stop)) return NULL;
    if (text_of(buffer, start, stop, &view, "scan") < 0) return NULL;
    Reader r;
    memset(&r, 0, sizeof r);
    PyObject *result = NULL, *codes = NULL, *numbers = NULL, *uniques = NULL;
    const char *text = view.bytes, *end = text + stop, *p = NULL;
    int ready = 1;
    r.text = text;
    for (int f = 0; f < FIELD_COUNT; f++) ready &= interner_init(&r.interners[f], text) == 0;
    if (!ready) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    p = read_events(&r, text + start, end);
    if (p) p = skip_space(p, end);
    Py_END_ALLOW_THREADS
    if (r.memory_error) {
        PyErr_NoMemory();
        goto done;
    }
    if (!p || p != end) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    int converted = convert_deferred(&r.columns, text);
    if (converted != 0) {
        if (converted > 0) result = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t n = (Py_ssize_t)r.columns.count;
    codes = PyBytes_FromStringAndSize(NULL, FIELD_COUNT * n * (Py_ssize_t)sizeof(int32_t));
    numbers = PyBytes_FromStringAndSize(NULL, NUMBER_COUNT * n * (Py_ssize_t)sizeof(double));
    uniques = PyTuple_New(FIELD_COUNT);
    if (!codes || !numbers || !uniques) goto done;
    for (int f = 0; f < FIELD_COUNT; f++) {
        if (n) memcpy(PyBytes_AsString(codes) + f * n * sizeof(int32_t), r.columns.codes[f],
                      n * sizeof(int32_t));
        PyObject *values = interner_values(&r.interners[f]);
        if (!values || PyTuple_SetItem(uniques, f, values) < 0) goto done;
    }
    for (int f = 0; f < NUMBER_COUNT; f++)
        if (n) memcpy(PyBytes_AsString(numbers) + f * n * sizeof(double), r.columns.numbers[f],
                      n * sizeof(double));
    result = Py_BuildValue("(nOOO)", n, codes, numbers, uniques);

done:
    Py_XDECREF(codes);
    Py_XDECREF(numbers);
    Py_XDECREF(uniques);
    for (int f = 0; f < FIELD_COUNT; f++) interner_free(&r.interners[f]);
    columns_free(&r.columns);
    text_close(&view);
    return result;
}


/* --- finding where values end ------------------------------------------------------------- */

/* What a byte outside strings can be in JSON: whitespace, a digit, a letter of a literal or a
   number's sign, point or exponent (PLAIN), or one of the structural characters. */
enum { BAD, PLAIN, QUOTE, OPEN, CLOSE, COMMA };
static unsigned char BYTE_CLASS[256];

static void init_byte_class(void) {
    const char *plain = " \t\n\r:0123456789-+.eEtrufalsn";
    for (const char *c = plain; *c; c++) BYTE_CLASS[(unsigned char)*c] = PLAIN;
    BYTE_CLASS['"'] = QUOTE;
    BYTE_CLASS['['] = BYTE_CLASS['{'] = OPEN;
    BYTE_CLASS[']'] = BYTE_CLASS['}'] = CLOSE;
    BYTE_CLASS[','] = COMMA;
}

/* split(buffer, start, stop, state, first) -> (cut, close, state, bad)

   Reads buffer[start:stop] as (part of) the inside of a JSON array or object whose opening
   bracket lies before `start`, from `state` (0 at a value boundary; else what the previous call
   returned), tracking only strings and nesting: it finds where values end without parsing them,
   so that the caller can cut the text into pieces of whole values for the real readers.
   - cut: the offset just past the last comma between the container's own values (the first one
     when `first` is true, and the scan stops there), -1 if there is none;
   - close: the offset of the bracket that closes the container (the scan stops there), or -1;
   - state: the state where the scan stopped, for the next call on the following text;
   - bad: the offset of the first byte that cannot be JSON where it stands (a control character
     in a string; outside strings, a byte no JSON token has), where the scan stops; else -1.
   It does not check the grammar: the readers of the pieces do. */
static PyObject *split(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *buffer;
    Py_ssize_t start, stop;
    unsigned long long state;
    int first;
    Text view;
    if (!PyArg_ParseTuple(args, "OnnKp", &buffer, &start, &stop, &state, &first)) return NULL;
    if (text_of(buffer, start, stop, &view, "split") < 0) return NULL;
    const unsigned char *text = (const unsigned char *)view.bytes;
    unsigned long long depth = state >> 2;
    int in_string = (int)((state >> 1) & 1), escaped = (int)(state & 1);
    Py_ssize_t i = start, cut = -1, close = -1, bad = -1;
    Py_BEGIN_ALLOW_THREADS
    while (i < stop) {
        if (in_string) {
            if (escaped) {
                escaped = 0;
                i++;
                continue;
            }
            while (stop - i >= 8) {
                uint64_t w;
                memcpy(&w, text + i, 8);
                int at = first_special(w, 0);
                i += at;
                if (at < 8) break;
            }
            while (i < stop && text[i] >= 0x20 && text[i] != '"' && text[i] != '\\') i++;
            if (i >= stop) break;
            unsigned char c = text[i];
            if (c == '"') in_string = 0;
            else if (c == '\\') escaped = 1;
            else if (c < 0x20) {
                bad = i;
                break;
            }
            i++;
            continue;
        }
        unsigned char kind = BYTE_CLASS[text[i]];
        if (kind == PLAIN) {
            i++;
            continue;
        }
        if (kind == QUOTE) in_string = 1;
        else if (kind == OPEN) depth++;
        else if (kind == CLOSE) {
            if (depth == 0) {
                close = i;
                break;
            }
            depth--;
        } else if (kind == COMMA) {
            if (depth == 0) {
                cut = i + 1;
                if (first) {
                    i++;
                    break;
                }
            }
        } else {
            bad = i;
            break;
        }
        i++;
    }
    Py_END_ALLOW_THREADS
    text_close(&view);
    state = (depth << 2) | ((unsigned long long)in_string << 1) | (unsigned long long)escaped;
    return Py_BuildValue("(nnKn)", cut, close, state, bad);
}


/* --- merging the chunks' columns ----------------------------------------------------------- */

/* merger(kinds) -> a merger; merge(merger, chunk, kind_of_pair); take(merger); texts(merger)

   The chunks of one file are read by separate scans, each numbering its own distinct texts. A
   merger takes the chunks in file order and sorts their events into kinds as it goes: each
   event's kind comes from a table over the chunk's own (phase, category) codes, which the caller
   makes from the few distinct phases and categories (what a kind is stays in Python); the event's
   fields that its kind keeps (`kinds[k]`: field numbers, a coded field's index, or FIELD_COUNT +
   a number's index) are appended to the kind's columns, its codes renumbered into one numbering
   per field over the whole file. Events of no kind are dropped as they come, so that the merged
   columns hold only what the tables need, not every field of every event.

   In the table, a kind's number (0 to len(kinds) - 1) keeps the event, -1 counts it as a timed
   event of another category (a count and the least time, for an otherwise empty trace), and any
   other value skips it. The renumbering of the distinct texts needs the GIL (a few hundred per
   chunk); the pass over the events runs without it. */

enum { MAX_KINDS = 8, MAX_KIND_FIELDS = FIELD_COUNT + NUMBER_COUNT, OTHER_TIMED = -1 };

typedef struct {
    const char *bytes; /* inside a bytes object that `Distinct.texts` holds */
    size_t length;
} Known;

typedef struct {
    PyObject *texts; /* list of bytes: the field's distinct texts, by merged code */
    Known *known;
    size_t count, capacity;
    Slot *slots;
    size_t mask;
} Distinct;

typedef struct {
    int field_count;
    int fields[MAX_KIND_FIELDS];
    /* Each field's column is a bytearray, grown (with the GIL) before a chunk is sorted into it
       and handed to Python by take as it is: no copy of a big file's columns. `columns` points
       into each, `capacity` rows of int32 codes or float64 numbers, `count` of them used. */
    PyObject *arrays[MAX_KIND_FIELDS];
    void *columns[MAX_KIND_FIELDS];
    size_t count, capacity;
} Kind;

typedef struct {
    int kind_count;
    Kind kinds[MAX_KINDS];
    int used[FIELD_COUNT]; /* the coded fields some kind keeps */
    Distinct distinct[FIELD_COUNT];
    size_t timed; /* events counted OTHER_TIMED with a time, and their least time */
    double first_ts;
    int busy; /* inside a call that released the GIL */
} Merger;

static const char MERGER_NAME[] = "jupyter_brrr.trace._scan.merger";

static void merger_free(Merger *m) {
    for (int k = 0; k < m->kind_count; k++)
        for (int j = 0; j < m->kinds[k].field_count; j++) Py_XDECREF(m->kinds[k].arrays[j]);
    for (int f = 0; f < FIELD_COUNT; f++) {
        Py_XDECREF(m->distinct[f].texts);
        free(m->distinct[f].known);
        free(m->distinct[f].slots);
    }
    free(m);
}

static void merger_destroy(PyObject *capsule) {
    Merger *m = PyCapsule_GetPointer(capsule, MERGER_NAME);
    if (m) merger_free(m);
}

static size_t field_size(int field) { return field < FIELD_COUNT ? sizeof(int32_t) : sizeof(double); }

static PyObject *merger_new(PyObject *Py_UNUSED(module), PyObject *kinds) {
    if (!PyTuple_Check(kinds) || PyTuple_Size(kinds) > MAX_KINDS) {
        PyErr_Format(PyExc_ValueError, "merger: kinds must be a tuple of at most %d tuples",
                     (int)MAX_KINDS);
        return NULL;
    }
    Merger *m = calloc(1, sizeof(Merger));
    if (!m) return PyErr_NoMemory();
    m->first_ts = INFINITY;
    m->kind_count = (int)PyTuple_Size(kinds);
    for (int k = 0; k < m->kind_count; k++) {
        PyObject *fields = PyTuple_GetItem(kinds, k);
        if (!fields || !PyTuple_Check(fields) || PyTuple_Size(fields) > MAX_KIND_FIELDS) {
            PyErr_SetString(PyExc_ValueError, "merger: each kind is a tuple of field numbers");
            goto fail;
        }
        m->kinds[k].field_count = (int)PyTuple_Size(fields);
        for (int j = 0; j < m->kinds[k].field_count; j++) {
            long field = PyLong_AsLong(PyTuple_GetItem(fields, j));
            if (field == -1 && PyErr_Occurred()) goto fail;
            if (field < 0 || field >= MAX_KIND_FIELDS) {
                PyErr_Format(PyExc_ValueError, "merger: no field %ld", field);
                goto fail;
            }
            m->kinds[k].fields[j] = (int)field;
            if (field < FIELD_COUNT) m->used[field] = 1;
        }
    }
    for (int f = 0; f < FIELD_COUNT; f++) {
        Distinct *d = &m->distinct[f];
        d->mask = 255;
        d->texts = PyList_New(0);
        d->slots = empty_slots(d->mask + 1);
        if (!d->texts) goto fail;
        if (!d->slots) {
            PyErr_NoMemory();
            goto fail;
        }
    }
    PyObject *capsule = PyCapsule_New(m, MERGER_NAME, merger_destroy);
    if (capsule) return capsule;
fail:
    merger_free(m);
    return NULL;
}

static Merger *merger_of(PyObject *capsule) {
    Merger *m = PyCapsule_GetPointer(capsule, MERGER_NAME); /* sets TypeError/ValueError */
    if (m && m->busy) {
        PyErr_SetString(PyExc_RuntimeError, "merger: in use by another thread");
        return NULL;
    }
    return m;
}

static int distinct_grow(Distinct *d) {
    size_t mask = d->mask * 2 + 1;
    Slot *slots = empty_slots(mask + 1);
    if (!slots) return -1;
    for (size_t i = 0; i <= d->mask; i++) {
        Slot s = d->slots[i];
        if (s.code < 0) continue;
        size_t j = s.hash & mask;
        while (slots[j].code >= 0) j = (j + 1) & mask;
        slots[j] = s;
    }
    free(d->slots);
    d->slots = slots;
    d->mask = mask;
    return 0;
}

/* The merged code of `text` (a bytes object), appended to the field's texts if new; -1 with an
   exception. Needs the GIL. */
static int32_t distinct_code(Distinct *d, PyObject *text) {
    char *bytes;
    Py_ssize_t length;
    if (!PyBytes_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "merge: a distinct text is not bytes");
        return -1;
    }
    if (PyBytes_AsStringAndSize(text, &bytes, &length) < 0) return -1;
    uint64_t h = hash_bytes(bytes, (size_t)length);
    size_t i = h & d->mask;
    for (;; i = (i + 1) & d->mask) {
        Slot *s = &d->slots[i];
        if (s->code < 0) break;
        Known known = d->known[s->code];
        if (s->hash == h && known.length == (size_t)length &&
            memcmp(known.bytes, bytes, (size_t)length) == 0)
            return s->code;
    }
    if (d->count >= INT32_MAX ||
        grow((void **)&d->known, &d->capacity, d->count + 1, sizeof(Known)) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    if (PyList_Append(d->texts, text) < 0) return -1; /* the list keeps `bytes` alive */
    int32_t code = (int32_t)d->count++;
    d->known[code] = (Known){bytes, (size_t)length};
    d->slots[i] = (Slot){h, code};
    if (d->count * 2 > d->mask && distinct_grow(d) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    return code;
}

/* The rows of one chunk, sorted into kinds without the GIL. Returns 0, -1 out of memory, or -2
   for a code outside the chunk's distinct texts (or a kind table too small): the caller then
   undoes the rows appended. */
typedef struct {
    Py_ssize_t n;
    const int32_t *codes;
    const double *numbers;
    int32_t *remap[FIELD_COUNT]; /* chunk code + 1 -> merged code (slot 0: -1, missing) */
    Py_ssize_t texts[FIELD_COUNT]; /* the chunk's distinct texts per field */
    const signed char *table;
    Py_ssize_t phases, categories; /* the table's rows and columns, missing last */
} Chunk;

static int sort_rows(Merger *m, const Chunk *c) {
    Py_ssize_t n = c->n;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t ph = c->codes[PH * n + i], cat = c->codes[CAT * n + i];
        if (ph < -1 || ph >= c->texts[PH] || cat < -1 || cat >= c->texts[CAT]) return -2;
        Py_ssize_t row = ph < 0 ? c->phases - 1 : ph, column = cat < 0 ? c->categories - 1 : cat;
        int kind = c->table[row * c->categories + column];
        if (kind == OTHER_TIMED) {
            double ts = c->numbers[TS * n + i];
            if (isfinite(ts)) {
                m->timed++;
                if (ts < m->first_ts) m->first_ts = ts;
            }
            continue;
        }
        if (kind < 0 || kind >= m->kind_count) continue;
        Kind *k = &m->kinds[kind];
        if (k->count == k->capacity) return -2; /* kinds_grow made room for every row */
        size_t at = k->count;
        for (int j = 0; j < k->field_count; j++) {
            int field = k->fields[j];
            if (field < FIELD_COUNT) {
                int32_t code = c->codes[field * n + i];
                if (code < -1 || code >= c->texts[field]) return -2;
                ((int32_t *)k->columns[j])[at] = c->remap[field][code + 1];
            } else {
                ((double *)k->columns[j])[at] = c->numbers[(field - FIELD_COUNT) * n + i];
            }
        }
        k->count++;
    }
    return 0;
}

/* Room in every kind's columns for `n` more rows (the most a chunk of n events adds to one kind),
   capacities doubling; with the GIL. -1 with MemoryError set when out of memory. */
static int kinds_grow(Merger *m, size_t n) {
    for (int k = 0; k < m->kind_count; k++) {
        Kind *kind = &m->kinds[k];
        if (kind->count + n <= kind->capacity) continue;
        size_t capacity = kind->capacity ? kind->capacity : 4096;
        while (capacity < kind->count + n) capacity *= 2;
        for (int j = 0; j < kind->field_count; j++) {
            Py_ssize_t size = (Py_ssize_t)(capacity * field_size(kind->fields[j]));
            if (!kind->arrays[j]) {
                kind->arrays[j] = PyByteArray_FromStringAndSize(NULL, size);
                if (!kind->arrays[j]) return -1;
            } else if (PyByteArray_Resize(kind->arrays[j], size) < 0) {
                return -1;
            }
            kind->columns[j] = PyByteArray_AsString(kind->arrays[j]);
        }
        kind->capacity = capacity;
    }
    return 0;
}

static PyObject *merge(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *capsule, *scanned, *table;
    if (!PyArg_ParseTuple(args, "OOO", &capsule, &scanned, &table)) return NULL;
    Merger *m = merger_of(capsule);
    if (!m) return NULL;
    PyObject *count, *codes, *numbers, *uniques;
    if (!PyTuple_Check(scanned) || PyTuple_Size(scanned) != 4 || !PyBytes_Check(table)) {
        PyErr_SetString(PyExc_TypeError, "merge: takes a merger, a scanned chunk and a table");
        return NULL;
    }
    count = PyTuple_GetItem(scanned, 0);
    codes = PyTuple_GetItem(scanned, 1);
    numbers = PyTuple_GetItem(scanned, 2);
    uniques = PyTuple_GetItem(scanned, 3);
    Chunk c;
    memset(&c, 0, sizeof c);
    c.n = PyLong_AsSsize_t(count);
    if (c.n == -1 && PyErr_Occurred()) return NULL;
    if (c.n < 0 || !PyBytes_Check(codes) || !PyBytes_Check(numbers) || !PyTuple_Check(uniques) ||
        PyTuple_Size(uniques) != FIELD_COUNT ||
        PyBytes_Size(codes) / FIELD_COUNT / (Py_ssize_t)sizeof(int32_t) != c.n ||
        PyBytes_Size(codes) % (FIELD_COUNT * sizeof(int32_t)) != 0 ||
        PyBytes_Size(numbers) / NUMBER_COUNT / (Py_ssize_t)sizeof(double) != c.n ||
        PyBytes_Size(numbers) % (NUMBER_COUNT * sizeof(double)) != 0) {
        PyErr_SetString(PyExc_ValueError, "merge: not a chunk as scan returns it");
        return NULL;
    }
    c.codes = (const int32_t *)PyBytes_AsString(codes);
    c.numbers = (const double *)PyBytes_AsString(numbers);
    for (int f = 0; f < FIELD_COUNT; f++) {
        PyObject *texts = PyTuple_GetItem(uniques, f);
        if (!PyList_Check(texts)) {
            PyErr_SetString(PyExc_TypeError, "merge: a chunk's distinct texts are not a list");
            return NULL;
        }
        c.texts[f] = PyList_Size(texts);
    }
    c.phases = c.texts[PH] + 1;
    c.categories = c.texts[CAT] + 1;
    if (PyBytes_Size(table) != c.phases * c.categories) {
        PyErr_SetString(PyExc_ValueError, "merge: the kind table does not fit the chunk");
        return NULL;
    }
    c.table = (const signed char *)PyBytes_AsString(table);

    PyObject *result = NULL;
    size_t counts[MAX_KINDS], timed = m->timed;
    double first_ts = m->first_ts;
    for (int k = 0; k < m->kind_count; k++) counts[k] = m->kinds[k].count;
    for (int f = 0; f < FIELD_COUNT; f++) {
        if (!m->used[f]) continue;
        PyObject *texts = PyTuple_GetItem(uniques, f);
        c.remap[f] = malloc((size_t)(c.texts[f] + 1) * sizeof(int32_t));
        if (!c.remap[f]) {
            PyErr_NoMemory();
            goto done;
        }
        c.remap[f][0] = -1;
        for (Py_ssize_t i = 0; i < c.texts[f]; i++) {
            int32_t code = distinct_code(&m->distinct[f], PyList_GetItem(texts, i));
            if (code < 0) goto done;
            c.remap[f][i + 1] = code;
        }
    }
    if (kinds_grow(m, (size_t)c.n) < 0) goto done;
    int sorted;
    m->busy = 1;
    Py_INCREF(scanned); /* its bytes stay alive while the GIL is released */
    Py_BEGIN_ALLOW_THREADS
    sorted = sort_rows(m, &c);
    Py_END_ALLOW_THREADS
    Py_DECREF(scanned);
    m->busy = 0;
    if (sorted < 0) {
        for (int k = 0; k < m->kind_count; k++) m->kinds[k].count = counts[k];
        m->timed = timed;
        m->first_ts = first_ts;
        if (sorted == -1) PyErr_NoMemory();
        else PyErr_SetString(PyExc_ValueError, "merge: a code outside the chunk's texts");
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    for (int f = 0; f < FIELD_COUNT; f++) free(c.remap[f]);
    return result;
}

/* take(merger) -> (columns, timed, first_ts): per kind, a tuple of its fields' columns (bytearrays
   of int32 codes or float64 numbers), and the count and least time of the other timed events, all
   since the last take; the merger then starts again empty but for its distinct texts. */
static PyObject *take(PyObject *Py_UNUSED(module), PyObject *capsule) {
    Merger *m = merger_of(capsule);
    if (!m) return NULL;
    PyObject *kinds = PyTuple_New(m->kind_count);
    if (!kinds) return NULL;
    for (int k = 0; k < m->kind_count; k++) {
        Kind *kind = &m->kinds[k];
        PyObject *columns = PyTuple_New(kind->field_count);
        if (!columns) goto fail;
        PyTuple_SetItem(kinds, k, columns); /* steals the reference */
        for (int j = 0; j < kind->field_count; j++) {
            Py_ssize_t size = (Py_ssize_t)(kind->count * field_size(kind->fields[j]));
            /* A bytearray: numpy's view of it is writable, so the tables can take it as is. The
               merger's own, cut to its rows (the room past them was never written: no memory
               of the process's), or a new empty one. */
            PyObject *column = kind->arrays[j];
            if (column && PyByteArray_Resize(column, size) < 0) goto fail;
            if (!column && !(column = PyByteArray_FromStringAndSize("", 0))) goto fail;
            kind->arrays[j] = NULL;
            kind->columns[j] = NULL;
            PyTuple_SetItem(columns, j, column); /* steals the merger's reference */
        }
    }
    PyObject *result = Py_BuildValue("(Ond)", kinds, (Py_ssize_t)m->timed, m->first_ts);
    Py_DECREF(kinds);
    if (!result) return NULL;
    for (int k = 0; k < m->kind_count; k++) m->kinds[k].count = m->kinds[k].capacity = 0;
    m->timed = 0;
    m->first_ts = INFINITY;
    return result;
fail:
    /* Out of memory: the columns already handed over go with `kinds`; the merger starts again
       empty rather than with rows whose columns are gone. */
    Py_DECREF(kinds);
    for (int k = 0; k < m->kind_count; k++) {
        Kind *kind = &m->kinds[k];
        for (int j = 0; j < kind->field_count; j++) {
            Py_CLEAR(kind->arrays[j]);
            kind->columns[j] = NULL;
        }
        kind->count = kind->capacity = 0;
    }
    return NULL;
}

/* texts(merger) -> per coded field, a list of its distinct texts (bytes) by merged code. */
static PyObject *merged_texts(PyObject *Py_UNUSED(module), PyObject *capsule) {
    Merger *m = merger_of(capsule);
    if (!m) return NULL;
    PyObject *all = PyTuple_New(FIELD_COUNT);
    for (int f = 0; all && f < FIELD_COUNT; f++) {
        PyObject *copy = PyList_GetSlice(m->distinct[f].texts, 0, PY_SSIZE_T_MAX);
        if (!copy) Py_CLEAR(all);
        else PyTuple_SetItem(all, f, copy);
    }
    return all;
}

/* --- the op hierarchy ---------------------------------------------------------------------- */

/* nest(thread, end, flags, slack) -> (parent, ancestor_0, ancestor_1, ancestor_2, depth, top).

   The host events sorted by (thread, start, longest first): thread holds their thread codes
   (int64), end their end times (float64), flags a byte each (uint8; bit b set where the event is
   one of the wanted kinds b: an op, a module scope, a source scope). The parent of an event is
   the nearest earlier event of its thread that ends no earlier than it does, less `slack`: the
   candidates are the event before it and that one's ancestors in turn (those nested in a
   candidate that fails end before it too), so each event is passed over once in all, where
   events.py's numpy version jumped pointers over every row in rounds. ancestor_b is the nearest
   ancestor (not the event itself) with bit b set; depth the count of its ancestors with bit 0
   set, top the outermost of them (-1 where none). All int64, -1 for none; the result is that of
   the numpy version, which tests/test_scan_hierarchy.py keeps as the reference. */
enum { NEST_FLAGS = 3, NEST_OUTPUTS = NEST_FLAGS + 3 };

static void nest_rows(Py_ssize_t n, const int64_t *thread, const double *end,
                      const uint8_t *flags, double slack, int64_t **out) {
    int64_t *parent = out[0], *depth = out[NEST_FLAGS + 1], *top = out[NEST_FLAGS + 2];
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t candidate = i > 0 && thread[i - 1] == thread[i] ? (int64_t)i - 1 : -1;
        while (candidate >= 0 && end[candidate] + slack < end[i]) candidate = parent[candidate];
        parent[i] = candidate;
        for (int b = 0; b < NEST_FLAGS; b++) {
            int64_t *ancestor = out[1 + b];
            ancestor[i] = candidate < 0 ? -1
                          : (flags[candidate] >> b) & 1 ? candidate
                                                         : ancestor[candidate];
        }
        int64_t op = out[1][i];
        depth[i] = op < 0 ? 0 : depth[op] + 1;
        top[i] = op < 0 ? -1 : top[op] >= 0 ? top[op] : op;
    }
}

static PyObject *nest(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *thread_buffer, *end_buffer, *flags_buffer;
    double slack;
    if (!PyArg_ParseTuple(args, "OOOd", &thread_buffer, &end_buffer, &flags_buffer, &slack))
        return NULL;
    Text thread, end, flags;
    if (text_open(thread_buffer, &thread, "nest") < 0) return NULL;
    if (text_open(end_buffer, &end, "nest") < 0) {
        text_close(&thread);
        return NULL;
    }
    if (text_open(flags_buffer, &flags, "nest") < 0) {
        text_close(&thread);
        text_close(&end);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n = flags.length;
    if (thread.length != n * 8 || end.length != n * 8) {
        PyErr_SetString(PyExc_ValueError, "nest: thread and end need 8 bytes per flag");
        goto done;
    }
    result = PyTuple_New(NEST_OUTPUTS);
    int64_t *out[NEST_OUTPUTS];
    for (int k = 0; result && k < NEST_OUTPUTS; k++) {
        PyObject *column = PyByteArray_FromStringAndSize(NULL, n * 8);
        if (!column) {
            Py_CLEAR(result);
            break;
        }
        PyTuple_SetItem(result, k, column); /* steals the reference */
        out[k] = (int64_t *)PyByteArray_AsString(column);
    }
    if (!result) goto done;
    /* The outputs are new and the inputs pinned: nothing else can touch them. */
    Py_BEGIN_ALLOW_THREADS
    nest_rows(n, (const int64_t *)thread.bytes, (const double *)end.bytes,
              (const uint8_t *)flags.bytes, slack, out);
    Py_END_ALLOW_THREADS
done:
    text_close(&thread);
    text_close(&end);
    text_close(&flags);
    return result;
}

/* --- distinct values ----------------------------------------------------------------------- */

/* factorize(values) -> (codes, distinct): for a list of hashable objects, the int64 code of each
   (a bytearray; -1 for None) and the list of distinct values in order of first appearance, as
   pandas.factorize gives them. Equal values are found by a dict, but each distinct object is
   looked up there only once: the reader's columns repeat a few objects (one per distinct text)
   over millions of rows, so most rows cost one probe of a table of pointers. */
typedef struct {
    PyObject *key; /* borrowed: the list holds it for the call */
    int64_t code;
} Seen;

static PyObject *factorize(PyObject *Py_UNUSED(module), PyObject *values) {
    if (!PyList_Check(values)) {
        PyErr_SetString(PyExc_TypeError, "factorize: a list");
        return NULL;
    }
    Py_ssize_t n = PyList_Size(values);
    PyObject *codes = PyByteArray_FromStringAndSize(NULL, n * 8);
    PyObject *distinct = PyList_New(0), *by_value = PyDict_New(), *result = NULL;
    size_t capacity = 1024, used = 0;
    Seen *seen = calloc(capacity, sizeof(Seen));
    if (!codes || !distinct || !by_value || !seen) {
        if (!seen) PyErr_NoMemory();
        goto done;
    }
    int64_t *code = (int64_t *)PyByteArray_AsString(codes);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = PyList_GetItem(values, i); /* borrowed */
        if (value == Py_None) {
            code[i] = -1;
            continue;
        }
        size_t mask = capacity - 1, at = ((uintptr_t)value >> 4) * 0x9E3779B97F4A7C15ull & mask;
        while (seen[at].key && seen[at].key != value) at = (at + 1) & mask;
        if (seen[at].key) {
            code[i] = seen[at].code;
            continue;
        }
        PyObject *known = PyDict_GetItemWithError(by_value, value); /* borrowed */
        int64_t found;
        if (known) {
            found = (int64_t)PyLong_AsLongLong(known);
        } else {
            if (PyErr_Occurred()) goto done;
            found = (int64_t)PyList_Size(distinct);
            PyObject *number = PyLong_FromLongLong((long long)found);
            int failed = !number || PyDict_SetItem(by_value, value, number) < 0 ||
                         PyList_Append(distinct, value) < 0;
            Py_XDECREF(number);
            if (failed) goto done;
        }
        seen[at].key = value;
        seen[at].code = code[i] = found;
        if (++used * 2 > capacity) { /* at most half full: probes stay short */
            size_t grown = capacity * 2;
            Seen *moved = calloc(grown, sizeof(Seen));
            if (!moved) {
                PyErr_NoMemory();
                goto done;
            }
            for (size_t k = 0; k < capacity; k++) {
                if (!seen[k].key) continue;
                size_t to = ((uintptr_t)seen[k].key >> 4) * 0x9E3779B97F4A7C15ull & (grown - 1);
                while (moved[to].key) to = (to + 1) & (grown - 1);
                moved[to] = seen[k];
            }
            free(seen);
            seen = moved;
            capacity = grown;
        }
    }
    result = PyTuple_Pack(2, codes, distinct);
done:
    free(seen);
    Py_XDECREF(codes);
    Py_XDECREF(distinct);
    Py_XDECREF(by_value);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS,
     "scan(buffer, start, stop) -> (count, codes, numbers, uniques) or None: the events of the "
     "JSON array buffer[start:stop] as columns (see the source for the layout)."},
    {"split", split, METH_VARARGS,
     "split(buffer, start, stop, state, first) -> (cut, close, state, bad): where the values of "
     "a JSON container end in buffer[start:stop] (see the source)."},
    {"merger", merger_new, METH_O,
     "merger(kinds) -> a merger of scanned chunks into the columns of each kind (see the source)."},
    {"merge", merge, METH_VARARGS,
     "merge(merger, chunk, kind_of_pair): a scanned chunk's events, sorted into kinds."},
    {"take", take, METH_O,
     "take(merger) -> (columns, timed, first_ts): the columns merged since the last take."},
    {"texts", merged_texts, METH_O, "texts(merger) -> the distinct texts of each coded field."},
    {"nest", nest, METH_VARARGS,
     "nest(thread, end, flags, slack) -> (parent, ancestor_0, ancestor_1, ancestor_2, depth, "
     "top): the nesting of sorted host events (see the source)."},
    {"factorize", factorize, METH_O,
     "factorize(values) -> (codes, distinct): int64 codes of a list's values (-1 for None) and "
     "its distinct values in order of first appearance."},
    {NULL, NULL, 0, NULL},
};

/* No state outside a call: the module can be shared by interpreters and threads, and asks free-
   threaded Python to keep the GIL off. */
static int module_exec(PyObject *m) {
    init_byte_class(); /* the same table each time: no state that differs between interpreters */
    if (init_keys(EVENT_FIELDS, EVENT_KEYS) < 0 || init_keys(ARGS_FIELDS, ARGS_KEYS) < 0) {
        PyErr_SetString(PyExc_SystemError, "_scan: a field table outgrows its key index");
        return -1;
    }
    if (PyModule_AddIntConstant(m, "FIELD_COUNT", FIELD_COUNT) < 0) return -1;
    return PyModule_AddIntConstant(m, "NUMBER_COUNT", NUMBER_COUNT);
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, module_exec},
#ifdef Py_MOD_PER_INTERPRETER_GIL_SUPPORTED
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_MOD_GIL_NOT_USED
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_scan", NULL, 0, methods, slots, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__scan(void) { return PyModuleDef_Init(&module); }
