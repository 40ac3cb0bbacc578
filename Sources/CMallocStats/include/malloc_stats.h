#include <stddef.h>

/// Bytes currently allocated through malloc (glibc mallinfo2's uordblks + hblkhd); for benchmarks.
size_t cmalloc_bytes_in_use(void);
