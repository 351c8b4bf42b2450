/* The C API from C99: a program parsed and loaded, its values described,
 * run on caller buffers (in place too), and every error status. Takes a
 * folder to write a program file into. */
#include <rune/rune.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                 \
  do {                                                              \
    if (!(cond)) {                                                  \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                   \
    }                                                               \
  } while (0)

/* The status is `want` and the message starts with `prefix`. */
static void check_error(rune_status got, rune_status want, const char* prefix, int line) {
  if (got != want || strncmp(rune_last_error(), prefix, strlen(prefix)) != 0) {
    fprintf(stderr, "%s:%d: status %d (want %d), message \"%s\" (want \"%s...\")\n", __FILE__, line, (int)got,
            (int)want, rune_last_error(), prefix);
    ++failures;
  }
}
#define CHECK_ERROR(call, status, prefix) check_error((call), (status), (prefix), __LINE__)

/* One explicit step of x'' = -x with step dt: v = v - x dt, x = x + v dt. */
static const char* header =
    "rune program 1\n"
    "parameter \"0.position\" : float64 [2] at CPU\n"
    "parameter \"0.velocity\" : float64 [2] at CPU\n"
    "parameter \"1\" : float64 [] at CPU\n"
    "result \"position\" : float64 [2] at CPU\n"
    "result \"velocity\" : float64 [2] at CPU\n";
static const char* body =
    "program (%0, %1, %2)\n"
    "  %3 : float64 [2] at CPU = Map [mul(x0, x1)] (x0: float64 [2] at CPU) (x1: float64 [] at CPU)\n"
    "    with x0 = %0, x1 = %2\n"
    "  %4 : float64 [2] at CPU = Map [sub(x0, x1)] (x0: float64 [2] at CPU) (x1: float64 [2] at CPU)\n"
    "    with x0 = %1, x1 = %3\n"
    "  %5 : float64 [2] at CPU = Map [mul(x0, x1)] (x0: float64 [2] at CPU) (x1: float64 [] at CPU)\n"
    "    with x0 = %4, x1 = %2\n"
    "  %6 : float64 [2] at CPU = Map [add(x0, x1)] (x0: float64 [2] at CPU) (x1: float64 [2] at CPU)\n"
    "    with x0 = %0, x1 = %5\n"
    "  return %6, %4\n";
/* An iterate that never stops within its 3 steps. */
static const char* endless =
    "program (%0)\n"
    "  %1 : float64 [] at CPU = iterate 3 steps, init (%0), until_captures (), step_captures ()\n"
    "    until\n"
    "      program (%2)\n"
    "        %3 : float64 [] at CPU = Map [float64:0x41cdcd6500000000] at CPU\n"
    "        %4 : bool [] at CPU = Map [greater(x0, x1)] (x0: float64 [] at CPU) (x1: float64 [] at CPU)\n"
    "          with x0 = %2, x1 = %3\n"
    "        return %4\n"
    "    step\n"
    "      program (%5, %6 : bool [] at CPU)\n"
    "        %7 : float64 [] at CPU = Map [float64:0x3ff0000000000000] at CPU\n"
    "        %8 : float64 [] at CPU = Map [add(x0, x1)] (x0: float64 [] at CPU) (x1: float64 [] at CPU)\n"
    "          with x0 = %5, x1 = %7\n"
    "        return %8\n"
    "  return %1\n";

static rune_program* parse(const char* a, const char* b) {
  size_t n = strlen(a) + strlen(b);
  char* text = malloc(n + 1);
  rune_program* p = NULL;
  strcpy(text, a);
  strcat(text, b);
  CHECK(rune_program_parse(text, n, &p) == RUNE_OK);
  free(text);
  return p;
}

static void describes_its_values(void) {
  rune_program* p = parse(header, body);
  rune_value_info info;
  CHECK(rune_program_param_count(p) == 3 && rune_program_result_count(p) == 2);
  CHECK(rune_program_param(p, 0, &info) == RUNE_OK);
  CHECK(info.dtype == RUNE_FLOAT64 && info.ndim == 1 && info.shape[0] == 2 && strcmp(info.name, "0.position") == 0);
  CHECK(rune_program_param(p, 2, &info) == RUNE_OK);
  CHECK(info.ndim == 0 && strcmp(info.name, "1") == 0);
  CHECK(rune_program_result(p, 1, &info) == RUNE_OK);
  CHECK(strcmp(info.name, "velocity") == 0);
  rune_program_free(p);

  /* Without a header, values are named by their numbers in the text. */
  p = parse("", body);
  CHECK(rune_program_param(p, 1, &info) == RUNE_OK && strcmp(info.name, "%1") == 0);
  CHECK(rune_program_result(p, 0, &info) == RUNE_OK && strcmp(info.name, "%6") == 0);
  CHECK(rune_program_result(p, 1, &info) == RUNE_OK && strcmp(info.name, "%4") == 0);
  rune_program_free(p);
}

static void runs_on_caller_buffers(const char* folder) {
  char path[4096];
  FILE* file;
  rune_program* p = NULL;
  double position[2] = {1., -2.}, velocity[2] = {0.5, 0.}, dt = 0.5;
  double new_position[2], new_velocity[2];
  const void* params[3];
  void* results[2];
  int frame;
  snprintf(path, sizeof path, "%s/c_api_step.rune", folder);
  file = fopen(path, "w");
  CHECK(file != NULL);
  fputs(header, file);
  fputs(body, file);
  fclose(file);
  CHECK(rune_program_load(path, &p) == RUNE_OK);
  remove(path);

  params[0] = position, params[1] = velocity, params[2] = &dt;
  results[0] = new_position, results[1] = new_velocity;
  CHECK(rune_program_run(p, params, results) == RUNE_OK);
  /* v = 0.5 - 1 * 0.5 = 0, x = 1 + 0; v = 0 + 2 * 0.5 = 1, x = -2 + 0.5 */
  CHECK(new_velocity[0] == 0. && new_velocity[1] == 1.);
  CHECK(new_position[0] == 1. && new_position[1] == -1.5);

  /* In place, frame after frame: the state's buffers receive the results. */
  results[0] = position, results[1] = velocity;
  for (frame = 0; frame < 2; ++frame) CHECK(rune_program_run(p, params, results) == RUNE_OK);
  /* x, v = (1, 0.5) -> (1, 0) -> (0.75, -0.5) */
  CHECK(position[0] == 0.75 && velocity[0] == -0.5);
  rune_program_free(p);
}

static void reports_every_error(void) {
  rune_program* p = NULL;
  rune_value_info info;
  double buffer[4] = {0., 0., 0., 0.}, dt = 0.;
  const void* params[3];
  void* results[2];
  const void* none[1] = {NULL};

  CHECK_ERROR(rune_program_parse("program (", 9, &p), RUNE_ERROR_PARSE, "rune::parse_program: line 1, column 10: ");
  CHECK(p == NULL);
  CHECK_ERROR(rune_program_parse("program ()\n  return\n", 20, NULL), RUNE_ERROR_ARGUMENT,
              "rune_program_parse: the out pointer is NULL");
  CHECK_ERROR(rune_program_load("/nonexistent/step.rune", &p), RUNE_ERROR_IO,
              "rune_program_load: cannot read /nonexistent/step.rune: No such file or directory");
  CHECK_ERROR(rune_program_load(NULL, &p), RUNE_ERROR_ARGUMENT, "rune_program_load: the path is NULL");

  CHECK(rune_program_param_count(NULL) == -1 && rune_program_result_count(NULL) == -1);
  CHECK_ERROR(rune_program_param(NULL, 0, &info), RUNE_ERROR_ARGUMENT, "rune_program_param: the program is NULL");
  p = parse(header, body);
  CHECK_ERROR(rune_program_param(p, 3, &info), RUNE_ERROR_ARGUMENT,
              "rune_program_param: index 3 is out of range: the program has 3 parameters");
  CHECK_ERROR(rune_program_result(p, -1, &info), RUNE_ERROR_ARGUMENT,
              "rune_program_result: index -1 is out of range: the program has 2 results");
  CHECK_ERROR(rune_program_result(p, 0, NULL), RUNE_ERROR_ARGUMENT, "rune_program_result: the info pointer is NULL");

  params[0] = buffer, params[1] = buffer + 2, params[2] = &dt;
  results[0] = buffer, results[1] = buffer + 2;
  CHECK_ERROR(rune_program_run(NULL, params, results), RUNE_ERROR_ARGUMENT, "rune_program_run: the program is NULL");
  CHECK_ERROR(rune_program_run(p, NULL, results), RUNE_ERROR_ARGUMENT, "rune_program_run: the parameter array is NULL");
  CHECK_ERROR(rune_program_run(p, params, NULL), RUNE_ERROR_ARGUMENT, "rune_program_run: the result array is NULL");
  params[1] = NULL;
  CHECK_ERROR(rune_program_run(p, params, results), RUNE_ERROR_ARGUMENT,
              "rune_program_run: parameter 1 (0.velocity): nx::borrow: the pointer is null");
  params[1] = (const char*)buffer + 1;
  CHECK_ERROR(rune_program_run(p, params, results), RUNE_ERROR_ARGUMENT,
              "rune_program_run: parameter 1 (0.velocity): nx::borrow: the pointer is not aligned to float64's 8 bytes");
  params[1] = buffer + 2;
  results[1] = buffer + 1;
  CHECK_ERROR(rune_program_run(p, params, results), RUNE_ERROR_ARGUMENT,
              "rune_program_run: result velocity and result position share memory");
  rune_program_free(p);

  p = parse("", endless);
  results[0] = buffer;
  CHECK_ERROR(rune_program_run(p, none, results), RUNE_ERROR_ARGUMENT,
              "rune_program_run: parameter 0 (%0): nx::borrow: the pointer is null");
  params[0] = &dt;
  CHECK_ERROR(rune_program_run(p, params, results), RUNE_ERROR_RUNTIME,
              "rune_program_run: rune::iterate: until is still false after max = 3 steps");
  rune_program_free(p);
  rune_program_free(NULL);
}

/* Issue 25: what the API cannot trust is refused: a file without end, a
 * folder, a handle that is not a live program, a buffer too small, and a
 * name holding a NUL is shown whole. */
static void refuses_what_it_cannot_trust(const char* folder) {
  rune_program* p = NULL;
  rune_value_info info;
  char expected[512];
  static double foreign[64]; /* not a handle: never read by the library */
  double position[2] = {1., 0.}, velocity[2] = {0., 1.}, dt = 0.5, out_position[2], out_velocity[2];
  const void* params[3];
  void* results[2];
  size_t param_bytes[3] = {sizeof position, sizeof velocity, sizeof dt};
  size_t result_bytes[2] = {sizeof out_position, sizeof out_velocity};

  CHECK_ERROR(rune_program_load("/dev/zero", &p), RUNE_ERROR_IO,
              "rune_program_load: cannot read /dev/zero: it is longer than 268435456 bytes, the most rune reads of a file");
  CHECK(p == NULL);
  snprintf(expected, sizeof expected, "rune_program_load: cannot read %s: Is a directory", folder);
  CHECK_ERROR(rune_program_load(folder, &p), RUNE_ERROR_IO, expected);

  CHECK(rune_program_param_count((rune_program*)foreign) == -1);
  CHECK_ERROR(rune_program_param((rune_program*)foreign, 0, &info), RUNE_ERROR_ARGUMENT,
              "rune_program_param: the handle is not a live rune_program (freed, or not made by rune_program_parse "
              "or rune_program_load)");
  CHECK_ERROR(rune_program_run((rune_program*)foreign, params, results), RUNE_ERROR_ARGUMENT,
              "rune_program_run: the handle is not a live rune_program");
  rune_program_free((rune_program*)foreign); /* left alone */

  p = parse(header, body);
  params[0] = position, params[1] = velocity, params[2] = &dt;
  results[0] = out_position, results[1] = out_velocity;
  param_bytes[1] = 8;
  CHECK_ERROR(rune_program_run_sized(p, params, param_bytes, results, result_bytes), RUNE_ERROR_ARGUMENT,
              "rune_program_run_sized: parameter 1 (0.velocity): the buffer holds 8 bytes, float64 [2] takes 16");
  param_bytes[1] = sizeof velocity;
  result_bytes[0] = 15;
  CHECK_ERROR(rune_program_run_sized(p, params, param_bytes, results, result_bytes), RUNE_ERROR_ARGUMENT,
              "rune_program_run_sized: result 0 (position): the buffer holds 15 bytes, float64 [2] takes 16");
  CHECK_ERROR(rune_program_run_sized(p, params, NULL, results, result_bytes), RUNE_ERROR_ARGUMENT,
              "rune_program_run_sized: the parameter size array is NULL");
  result_bytes[0] = sizeof out_position;
  CHECK(rune_program_run_sized(p, params, param_bytes, results, result_bytes) == RUNE_OK);
  CHECK(out_velocity[0] == -0.5 && out_velocity[1] == 1.);
  CHECK(out_position[0] == 0.75 && out_position[1] == 0.5);
  rune_program_free(p);
  /* (the library never reads through a freed handle: it is looked up) */
  CHECK(rune_program_param_count(p) == -1);
  CHECK_ERROR(rune_program_run(p, params, results), RUNE_ERROR_ARGUMENT,
              "rune_program_run: the handle is not a live rune_program");
  rune_program_free(p); /* (freeing it again does nothing) */

  {
    static const char* nul_header =
        "rune program 1\n"
        "parameter \"0.p\\x00s\" : float64 [2] at CPU\n"
        "parameter \"0.velocity\" : float64 [2] at CPU\n"
        "parameter \"1\" : float64 [] at CPU\n"
        "result \"position\" : float64 [2] at CPU\n"
        "result \"velocity\" : float64 [2] at CPU\n";
    p = parse(nul_header, body);
    CHECK(rune_program_param(p, 0, &info) == RUNE_OK && strcmp(info.name, "0.p\\x00s") == 0);
    params[0] = NULL;
    CHECK_ERROR(rune_program_run(p, params, results), RUNE_ERROR_ARGUMENT,
                "rune_program_run: parameter 0 (0.p\\x00s): nx::borrow: the pointer is null");
    rune_program_free(p);
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_c_api FOLDER\n");
    return 2;
  }
  describes_its_values();
  runs_on_caller_buffers(argv[1]);
  reports_every_error();
  refuses_what_it_cannot_trust(argv[1]);
  if (failures == 0) printf("C API: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
