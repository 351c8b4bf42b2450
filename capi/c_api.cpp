// The C API (include/rune/rune.h) over rune::Program and the VM: each entry point
// catches every exception and turns it into a status and the thread's last
// error message.
#include "rune/rune.h"

#include <exception>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/eval.hpp"
#include "ir/program.hpp"
#include "ir/text.hpp"
#include "rune/nx.hpp"
#include "rune/program.hpp"
#include "vm/executor.hpp"

struct rune_program {
  // A parameter's or result's description, held for rune_value_info.
  struct Value {
    nx::DType dtype;
    nx::Shape shape;
    std::string name;
  };
  rune::Program program;
  std::vector<Value> params, results;
  // The run's tensors borrowing the caller's buffers: kept between calls so
  // a call allocates nothing once they have their size.
  std::vector<nx::Tensor> args, outs;
};

namespace {

thread_local std::string last_error;

// A failure with its status, raised inside an entry point.
struct Failure {
  rune_status status;
  std::string message;
};

// Runs body, returning RUNE_OK, or the status of what it threw (whose
// message becomes the last error). std::invalid_argument is `otherwise`:
// a user error whose kind depends on the entry point.
template <class Body> rune_status guarded(rune_status otherwise, Body body) {
  try {
    body();
    return RUNE_OK;
  } catch (const Failure& f) {
    last_error = f.message;
    return f.status;
  } catch (const std::invalid_argument& e) {
    last_error = e.what();
    return otherwise;
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return RUNE_ERROR_RUNTIME;
  } catch (const std::exception& e) {
    last_error = e.what();
    return RUNE_ERROR_RUNTIME;
  } catch (...) {
    last_error = "an exception that is not a std::exception";
    return RUNE_ERROR_RUNTIME;
  }
}

[[noreturn]] void fail(rune_status status, const char* api, const std::string& message) {
  throw Failure{status, std::string(api) + ": " + message};
}

void require(bool ok, const char* api, const char* message) {
  if (!ok) fail(RUNE_ERROR_ARGUMENT, api, message);
}

// The handles made and not yet freed. A handle is checked by looking it up,
// never by reading through it: a freed or foreign pointer may point at
// anything, or at nothing readable.
struct Handles {
  std::mutex mutex;
  std::unordered_set<const rune_program*> live;
};
Handles& handles() {
  static Handles h;
  return h;
}

bool live(const rune_program* p) {
  std::lock_guard lock(handles().mutex);
  return handles().live.contains(p);
}

void require_program(const rune_program* p, const char* api) {
  require(p != nullptr, api, "the program is NULL");
  require(live(p), api, "the handle is not a live rune_program (freed, or not made by rune_program_parse or "
                        "rune_program_load)");
}

// "%n": a value by its number in the text.
std::string number_name(int value) {
  std::string s(1, '%');  // (not "%" + to_string: GCC 12 warns falsely on that)
  s += std::to_string(value);
  return s;
}

std::vector<rune_program::Value> describe(const rune::Program& program, const std::vector<int>& values,
                                          std::span<const std::string> names) {
  const rune::ir::Program& p = program.ir();
  const std::vector<int> numbers = rune::ir::number_values(p).at(&p);
  std::vector<rune_program::Value> out;
  for (std::size_t k = 0; k < values.size(); ++k) {
    const auto& type = p.types[std::size_t(values[k])];
    // (escaped: a C string cannot hold a NUL of the path)
    std::string name = k < names.size() ? rune::escaped_path(names[k]) : number_name(numbers[std::size_t(values[k])]);
    out.push_back({type.dtype, type.shape, std::move(name)});
  }
  return out;
}

// The handle of a parsed program (a program without names names its values
// by their numbers in the text).
rune_program* make_handle(rune::Program program) {
  auto* h = new rune_program{};
  h->params = describe(program, program.ir().params, program.param_names());
  h->results = describe(program, program.ir().results, program.result_names());
  h->program = std::move(program);
  std::lock_guard lock(handles().mutex);
  handles().live.insert(h);
  return h;
}

rune_status value_info(const rune_program* p, int i, rune_value_info* out, bool result, const char* api) {
  return guarded(RUNE_ERROR_ARGUMENT, [&] {
    require_program(p, api);
    require(out != nullptr, api, "the info pointer is NULL");
    const auto& values = result ? p->results : p->params;
    if (i < 0 || std::size_t(i) >= values.size())
      fail(RUNE_ERROR_ARGUMENT, api,
           "index " + std::to_string(i) + " is out of range: the program has " + std::to_string(values.size()) +
               (result ? " results" : " parameters"));
    const rune_program::Value& v = values[std::size_t(i)];
    out->dtype = static_cast<rune_dtype>(v.dtype);  // (the enums list the dtypes in the same order)
    out->ndim = int(v.shape.size());
    out->shape = v.shape.data();
    out->name = v.name.c_str();
  });
}

// Borrows the caller's buffers as the program's values and runs it (the
// entry point `api`, the handle checked).
void run(rune_program* p, const void* const* params, void* const* results, const char* api) {
  require(params != nullptr || p->params.empty(), api, "the parameter array is NULL");
  require(results != nullptr || p->results.empty(), api, "the result array is NULL");
  // The buffers are borrowed as the program's own types: only null and
  // misaligned pointers can be wrong here.
  auto borrow = [&](const rune_program::Value& v, auto* data, std::size_t k, const char* what) {
    try {
      return nx::borrow(v.dtype, v.shape, data);
    } catch (const std::invalid_argument& e) {
      fail(RUNE_ERROR_ARGUMENT, api, std::string(what) + " " + std::to_string(k) + " (" + v.name + "): " + e.what());
    }
  };
  p->args.resize(p->params.size());
  p->outs.resize(p->results.size());
  for (std::size_t k = 0; k < p->params.size(); ++k) p->args[k] = borrow(p->params[k], params[k], k, "parameter");
  for (std::size_t k = 0; k < p->results.size(); ++k) p->outs[k] = borrow(p->results[k], results[k], k, "result");
  // The tensors have the program's types by construction: of rune::run_into's
  // checks, only the buffers' overlap is left to make, once per call.
  rune::ir::check_result_buffers(p->program.ir(), p->outs, api, p->program.result_names());
  try {
    rune::vm::execute_into(p->program.code(), p->args, p->outs, api);
  } catch (const std::exception& e) {
    fail(RUNE_ERROR_RUNTIME, api, e.what());  // what fails now fails in the run
  }
}

// Each buffer holds its value's bytes (bytes: the caller's sizes).
void check_sizes(const std::vector<rune_program::Value>& values, const size_t* bytes, const char* what,
                 const char* api) {
  if (values.empty()) return;
  if (bytes == nullptr) fail(RUNE_ERROR_ARGUMENT, api, std::string("the ") + what + " size array is NULL");
  for (std::size_t k = 0; k < values.size(); ++k) {
    const rune_program::Value& v = values[k];
    const auto needed = std::size_t(nx::numel(v.shape)) * nx::size_of(v.dtype);
    if (bytes[k] < needed)
      fail(RUNE_ERROR_ARGUMENT, api,
           std::string(what) + " " + std::to_string(k) + " (" + v.name + "): the buffer holds " +
               std::to_string(bytes[k]) + " bytes, " + std::string(nx::name(v.dtype)) + " " + nx::to_string(v.shape) +
               " takes " + std::to_string(needed));
  }
}

static_assert(int(nx::DType::bool_) == RUNE_BOOL && int(nx::DType::uint64) == RUNE_UINT64 &&
              int(nx::DType::float64) == RUNE_FLOAT64 && int(nx::DType::complex128) == RUNE_COMPLEX128 &&
              nx::dtype_count == RUNE_COMPLEX128 + 1);

}  // namespace

extern "C" {

rune_status rune_program_parse(const char* text, size_t length, rune_program** out) {
  return guarded(RUNE_ERROR_PARSE, [&] {
    require(out != nullptr, "rune_program_parse", "the out pointer is NULL");
    *out = nullptr;
    require(text != nullptr || length == 0, "rune_program_parse", "the text is NULL");
    *out = make_handle(rune::parse_program(std::string_view(text ? text : "", length)));
  });
}

rune_status rune_program_load(const char* path, rune_program** out) {
  return guarded(RUNE_ERROR_PARSE, [&] {
    require(out != nullptr, "rune_program_load", "the out pointer is NULL");
    *out = nullptr;
    require(path != nullptr, "rune_program_load", "the path is NULL");
    std::string text;
    if (auto problem = rune::ir::read_file(path, &text))
      fail(RUNE_ERROR_IO, "rune_program_load", std::string("cannot read ") + path + ": " + *problem);
    *out = make_handle(rune::parse_program(text));
  });
}

void rune_program_free(rune_program* p) {
  {
    std::lock_guard lock(handles().mutex);
    if (handles().live.erase(p) == 0) return;  // (NULL, freed or foreign: nothing of ours to free)
  }
  delete p;
}

int rune_program_param_count(const rune_program* p) { return live(p) ? int(p->params.size()) : -1; }
int rune_program_result_count(const rune_program* p) { return live(p) ? int(p->results.size()) : -1; }

rune_status rune_program_param(const rune_program* p, int i, rune_value_info* out) {
  return value_info(p, i, out, false, "rune_program_param");
}
rune_status rune_program_result(const rune_program* p, int i, rune_value_info* out) {
  return value_info(p, i, out, true, "rune_program_result");
}

rune_status rune_program_run(rune_program* p, const void* const* params, void* const* results) {
  const char* api = "rune_program_run";
  return guarded(RUNE_ERROR_ARGUMENT, [&] {
    require_program(p, api);
    run(p, params, results, api);
  });
}

rune_status rune_program_run_sized(rune_program* p, const void* const* params, const size_t* param_bytes,
                                   void* const* results, const size_t* result_bytes) {
  const char* api = "rune_program_run_sized";
  return guarded(RUNE_ERROR_ARGUMENT, [&] {
    require_program(p, api);
    check_sizes(p->params, param_bytes, "parameter", api);
    check_sizes(p->results, result_bytes, "result", api);
    run(p, params, results, api);
  });
}

const char* rune_last_error(void) { return last_error.c_str(); }

}  // extern "C"
