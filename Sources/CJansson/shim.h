#include <jansson.h>

/* jansson exposes these as function-like macros, which Swift cannot import. */
static inline int cjansson_typeof(const json_t *json) { return (int)json_typeof(json); }
static inline size_t cjansson_real_precision(int digits) { return JSON_REAL_PRECISION(digits); }
