/* The C API: programs saved as text (rune::save_program) loaded, queried and
 * run on caller-owned buffers, from C99 or any language that calls C.
 *
 * No exception crosses it. Every function returning rune_status sets, when
 * it fails, a message read by rune_last_error() (thread-local; valid until
 * the thread's next call into the API). A program handle may be used by one
 * thread at a time (rune_program_run keeps its scratch in the handle);
 * distinct handles may run on distinct threads at once. docs/embedding.md
 * shows it at work. */
#ifndef RUNE_RUNE_H
#define RUNE_RUNE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rune_program rune_program; /* opaque */

typedef enum {
  RUNE_OK = 0,
  RUNE_ERROR_PARSE,    /* the text is not a program (the message has the line and column) */
  RUNE_ERROR_IO,       /* the file cannot be read (a folder, or longer than 256 MiB) */
  RUNE_ERROR_ARGUMENT, /* a NULL or freed handle, an index out of range, a misaligned or short buffer */
  RUNE_ERROR_RUNTIME   /* the program failed while it ran (an iterate that did not stop, say) */
} rune_status;

typedef enum {
  RUNE_BOOL, RUNE_INT8, RUNE_INT16, RUNE_INT32, RUNE_INT64,
  RUNE_UINT8, RUNE_UINT32, RUNE_UINT64, RUNE_FLOAT16,
  RUNE_BFLOAT16, RUNE_FLOAT32, RUNE_FLOAT64,
  RUNE_COMPLEX64, RUNE_COMPLEX128
} rune_dtype;

/* A parameter or result: owned by the program, valid while it lives. `name`
 * is its path in the traced structures ("state.position", "1.w"; control
 * characters written \xHH and a backslash \\), or "%n" (its number in the
 * text) for a program without names. */
typedef struct {
  rune_dtype dtype;
  int ndim;
  const int64_t* shape;
  const char* name;
} rune_value_info;

rune_status rune_program_parse(const char* text, size_t length, rune_program** out);
/* a file of at most 256 MiB; RUNE_ERROR_IO for a longer one (or /dev/zero) */
rune_status rune_program_load(const char* path, rune_program** out);
/* NULL is fine; a handle already freed (or not made by parse or load) is
   recognised where its memory was not reused, and left alone */
void        rune_program_free(rune_program* p);
/* -1 for a NULL, freed or foreign program */
int         rune_program_param_count(const rune_program* p);
int         rune_program_result_count(const rune_program* p);
rune_status rune_program_param(const rune_program* p, int i, rune_value_info* out);
rune_status rune_program_result(const rune_program* p, int i, rune_value_info* out);
/* params[i] and results[i]: caller-owned C-order buffers of the declared
   dtype and shape, aligned to the element size; nothing is allocated per
   call in the steady state. A result buffer may be a parameter's (each
   result is computed before any is written). */
rune_status rune_program_run(rune_program* p, const void* const* params, void* const* results);
/* the same, with each buffer's size in bytes: RUNE_ERROR_ARGUMENT naming the
   first buffer smaller than its value, before anything is read or written */
rune_status rune_program_run_sized(rune_program* p, const void* const* params, const size_t* param_bytes,
                                   void* const* results, const size_t* result_bytes);
const char* rune_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* RUNE_RUNE_H */
