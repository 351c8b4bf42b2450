// rune::jit: a function traced once per key and run as a program.
//
// A call retraces exactly when its key is new: the static leaves and the
// structure of the arguments, and each tensor leaf's dtype, shape,
// placement and layout (C order or a strided view). Captured doubles and tensors are constants of the program of
// that key. The program runs through the passes and is compiled to bytecode
// once; every call runs the bytecode on the VM (vm/, docs/vm.md), and a call
// whose arguments are all tensors of the latest call's types finds it
// without building a key. The maps running around a call (rune::vmap) are
// part of its key. The cache keeps at most JitOptions::cache_size programs,
// dropping the least recently used. A compiled function may be called from
// several threads at once.
#pragma once

#include <algorithm>
#include <atomic>
#include <concepts>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <iterator>
#include <list>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rune/detail/compiled.hpp"
#include "rune/detail/diagnose.hpp"
#include "rune/detail/staging.hpp"
#include "rune/program.hpp"
#include "rune/tree.hpp"

namespace rune {

namespace detail {
// How many traces of compiled functions this thread is inside.
inline thread_local int jit_traces_here = 0;
}  // namespace detail

struct JitError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The options of rune::jit.
struct JitOptions {
  // The most programs a compiled function keeps, one per key; past it the
  // least recently used is dropped (a later call with its key traces
  // again), so a key that changes on every call holds memory flat.
  std::size_t cache_size = 64;
  // The most elements of a value of static shape the compiled program
  // computes as scalars, one per element, where it can (docs/vm.md, "Small
  // tensors as scalars"): a float64 [3] state then runs as three scalars.
  // 0: none; at most 64.
  std::int64_t scalar_elements = 8;
  // The rows (of a scan) or trips (of an iterate) of scalar steps after
  // which the loop runs as machine code (docs/vm.md, "Machine code"),
  // counted over the calls: 0 promotes at the first call, a negative
  // number never (the VM alone). RUNE_NATIVE=off or eager overrides it; a
  // build without the machine-code tier ignores it.
  std::int64_t native_after = 1000;
};

template <class F> class Compiled {
 public:
  explicit Compiled(F f, JitOptions options = {})
      : f_(std::move(f)), state_(std::make_shared<State>(checked(options))) {}

  template <class... Args>
    requires(detail::Structures<Args...> && std::invocable<const F&, const Args&...>)
  auto operator()(const Args&... args) const {
    using R = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    if constexpr ((std::is_same_v<Args, nx::Tensor> && ...)) {
      if (std::shared_ptr<const typename State::Latest> latest = latest_for(args...)) {
        if constexpr (sizeof...(Args) == 1) {
          return result<R>(*latest->exe, detail::execute(*latest->exe->code, std::span<const nx::Tensor>(&args..., 1), {}));
        } else {
          const nx::Tensor in[] = {args...};
          return result<R>(*latest->exe, detail::execute(*latest->exe->code, in, {}));
        }
      }
    }
    std::vector<nx::Tensor> in;
    (append(in, leaves(args)), ...);
    std::vector<nx::Tensor> captures;
    const detail::CallKey key = key_of(args...);
    std::shared_ptr<const detail::Executable> exe = executable<R>(key, &captures, args...);
    if constexpr ((std::is_same_v<Args, nx::Tensor> && ...))
      if (captures.empty() && key.maps.empty()) remember(key, exe, args...);
    return result<R>(*exe, detail::execute(*exe->code, in, captures));
  }

  template <class... Args> auto operator()(const Args&...) const {
    RUNE_DETAIL_DIAGNOSE_CALL("rune::jit", "an argument is", (std::invocable<const F&, const Args&...>),
                              "the function cannot be called with these arguments", Args...);
    return detail::Misuse{};
  }

  // How many times f was traced (one per new key, and again for a key whose
  // program the cache dropped).
  std::int64_t traces() const { return state_->traces.load(); }
  // How many programs the cache holds (at most JitOptions::cache_size).
  std::size_t cached() const {
    std::lock_guard lock(state_->mutex);
    return state_->cache.size();
  }

  // The program a call on args runs (traced now if their key is new), after
  // the passes, with names: each parameter's path in (args...) ("0.position",
  // "1.w"), each result's in f's result. rune::save_program writes it with
  // its header; rune::load reads it back as a typed callable.
  template <class... Args>
    requires(detail::Structures<Args...> && std::invocable<const F&, const Args&...>)
  Program program(const Args&... args) const {
    using R = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    std::vector<nx::Tensor> captures;
    std::shared_ptr<const detail::Executable> exe = executable<R>(key_of(args...), &captures, args...);
    if (!captures.empty())
      throw std::invalid_argument("rune::jit: the function reads values of an enclosing trace; its program is that "
                                  "trace's, not one that can be kept");
    std::vector<std::string> params, results;
    for_each_leaf(std::forward_as_tuple(args...), [&](const std::string& path, const nx::Tensor&) { params.push_back(path); });
    for_each_leaf(*static_cast<const R*>(exe->result_like.get()),
                  [&](const std::string& path, const nx::Tensor&) { results.push_back(path); });
    return detail::named_program(*exe, std::move(params), std::move(results));
  }
  template <class... Args> Program program(const Args&...) const {
    RUNE_DETAIL_DIAGNOSE_CALL("rune::jit", "an argument is", (std::invocable<const F&, const Args&...>),
                              "the function cannot be called with these arguments", Args...);
    return {};
  }

 private:
  struct State {
    // The fast path of calls whose arguments are all tensors: the latest
    // such call's argument types and executable, found without building a
    // key when the next call's arguments have those types. Shared: a call
    // holds the one it found while it runs, whatever the cache drops.
    struct Latest {
      std::vector<TreeKey::Leaf> types;
      std::shared_ptr<const detail::Executable> exe;
    };
    // A cached program, and its place in the order of use.
    struct Slot {
      std::shared_ptr<const detail::Executable> exe;
      std::shared_ptr<const Latest> latest;  // made by the first all-tensor call
      typename std::list<const detail::CallKey*>::iterator used;
    };

    explicit State(JitOptions o) : options(o) {}
    const JitOptions options;
    std::mutex mutex;              // guards the cache, its order of use, the latest key and the keys being traced
    std::vector<detail::CallKey> tracing;  // the keys being traced now (by any thread)
    std::condition_variable trace_ended;   // (with `mutex`)
    std::unordered_map<detail::CallKey, Slot, detail::CallKeyHash> cache;
    std::list<const detail::CallKey*> by_use;  // the cache's keys, most recently used first
    std::optional<detail::CallKey> latest;
    std::atomic<std::int64_t> traces{0};
    // Calls in a row that traced (a call finding its program resets it), for
    // the one-time warning about a key that changes on every call.
    std::atomic<int> traced_in_a_row{0};
    bool warned = false;  // (under `mutex`)
    // The fast path's latest call, apart from `mutex` so that a call finds it
    // without waiting on the cache's work. (Not an
    // std::atomic<std::shared_ptr>: libstdc++ 12's load releases its lock
    // with a relaxed store, a data race that ThreadSanitizer reports.)
    struct LatestCall {
      std::shared_ptr<const Latest> load() const {
        std::lock_guard lock(mutex);
        return latest;
      }
      void store(std::shared_ptr<const Latest> call) {
        std::lock_guard lock(mutex);
        latest = std::move(call);
      }

     private:
      mutable std::mutex mutex;
      std::shared_ptr<const Latest> latest;
    } latest_call;
  };

  static JitOptions checked(JitOptions options) {
    if (options.cache_size == 0)
      throw std::invalid_argument("rune::jit: cache_size = 0 keeps no program; give 1 or more");
    if (options.scalar_elements < 0 || options.scalar_elements > 64)
      throw std::invalid_argument("rune::jit: scalar_elements = " + std::to_string(options.scalar_elements) +
                                  " is outside 0 .. 64");
    return options;
  }

  template <class... Args> static detail::CallKey key_of(const Args&... args) {
    return {compiled_key_of(std::forward_as_tuple(args...)), detail::running_maps()};
  }

  static TreeKey::Leaf type_of(const nx::Tensor& t) {
    return {t.dtype(), t.shape(), t.placement(), tree_detail::strided(t)};
  }
  // type_of(t) == type, without building t's.
  static bool has_type(const nx::Tensor& t, const TreeKey::Leaf& type) {
    const nx::detail::TensorImpl& impl = *t.impl();
    return impl.dtype == type.dtype && impl.shape == type.shape && impl.placement == type.placement &&
           tree_detail::strided(t) == type.strided;
  }

  // The latest call's program when args have its arguments' types and no
  // map runs around the call (the key would hold it).
  template <class... Args> std::shared_ptr<const typename State::Latest> latest_for(const Args&... args) const {
    std::shared_ptr<const typename State::Latest> latest = state_->latest_call.load();
    if (!latest || !(args.defined() && ...)) return nullptr;
    std::size_t k = 0;
    const bool same = (has_type(args, latest->types[k++]) && ...);
    if (!same || !detail::running_maps().empty()) return nullptr;
    found_program();
    return latest;
  }

  // The call's result, of the executable's structure, from its leaves.
  template <class R> static R result(const detail::Executable& exe, detail::Values&& leaves) {
    if constexpr (std::is_same_v<R, nx::Tensor>) return std::move(leaves[0]);
    else return rebuild(*static_cast<const R*>(exe.result_like.get()), std::span<const nx::Tensor>(leaves.data(), leaves.size()));
  }

  // Makes the call the fast path's latest (while the cache holds its program).
  template <class... Args>
  void remember(const detail::CallKey& key, const std::shared_ptr<const detail::Executable>& exe,
                const Args&... args) const {
    if (!(args.defined() && ...)) return;
    std::lock_guard lock(state_->mutex);
    auto found = state_->cache.find(key);
    if (found == state_->cache.end() || found->second.exe != exe) return;
    auto& latest = found->second.latest;
    if (!latest) latest = std::make_shared<const typename State::Latest>(typename State::Latest{{type_of(args)...}, exe});
    state_->latest_call.store(latest);
  }

  // The executable of the key, traced if the key is new (captures: the
  // values of an enclosing trace it reads).
  template <class R, class... Args>
  std::shared_ptr<const detail::Executable> executable(const detail::CallKey& key, std::vector<nx::Tensor>* captures,
                                                       const Args&... args) const {
    std::unique_lock lock(state_->mutex);
    // One trace per key: a thread meeting a key that another thread traces
    // waits for that trace, unless it is inside a trace itself (of any
    // compiled function): it could then be what the other waits for (two
    // functions that call each other while tracing), so it traces the key
    // too, and the first program cached is kept. No lock is held while f runs.
    state_->trace_ended.wait(lock, [&] { return detail::jit_traces_here > 0 || !being_traced(key); });
    if (auto exe = lookup_locked(key)) return exe;
    state_->tracing.push_back(key);
    lock.unlock();
    Tracing mark(*state_, key);
    return trace<R>(key, captures, args...);
  }

  // While one lives, this thread traces `key`.
  class Tracing {
   public:
    Tracing(State& state, const detail::CallKey& key) : state_(state), key_(key) { ++detail::jit_traces_here; }
    ~Tracing() {
      --detail::jit_traces_here;
      {
        std::lock_guard lock(state_.mutex);
        state_.tracing.erase(std::find(state_.tracing.begin(), state_.tracing.end(), key_));
      }
      state_.trace_ended.notify_all();
    }
    Tracing(const Tracing&) = delete;
    Tracing& operator=(const Tracing&) = delete;

   private:
    State& state_;
    const detail::CallKey& key_;
  };

  bool being_traced(const detail::CallKey& key) const {  // (under `mutex`)
    return std::find(state_->tracing.begin(), state_->tracing.end(), key) != state_->tracing.end();
  }

  void found_program() const {
    if (state_->traced_in_a_row.load(std::memory_order_relaxed) != 0)
      state_->traced_in_a_row.store(0, std::memory_order_relaxed);
  }

  static void append(std::vector<nx::Tensor>& to, std::vector<nx::Tensor>&& more) {
    if (to.empty()) to = std::move(more);
    else to.insert(to.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }

  std::shared_ptr<const detail::Executable> lookup_locked(const detail::CallKey& key) const {  // (under `mutex`)
    auto found = state_->cache.find(key);
    if (found == state_->cache.end()) return nullptr;
    state_->by_use.splice(state_->by_use.begin(), state_->by_use, found->second.used);
    if (!state_->latest || !(*state_->latest == key)) state_->latest = key;  // (a copy only when it changes)
    found_program();
    return found->second.exe;
  }

  // Caches a new key's program, dropping the least recently used past the
  // bound (under `mutex`); gives the key's cached program (the first traced).
  // A call running a dropped program keeps it alive.
  std::shared_ptr<const detail::Executable> cache(const detail::CallKey& key,
                                                  std::shared_ptr<const detail::Executable> exe) const {
    auto [slot, added] = state_->cache.emplace(key, typename State::Slot{exe, nullptr, {}});
    if (!added) return slot->second.exe;
    state_->by_use.push_front(&slot->first);
    slot->second.used = state_->by_use.begin();
    if (state_->cache.size() <= state_->options.cache_size) return exe;
    auto oldest = state_->cache.find(*state_->by_use.back());
    if (oldest->second.latest && state_->latest_call.load() == oldest->second.latest) state_->latest_call.store(nullptr);
    state_->by_use.pop_back();
    state_->cache.erase(oldest);
    return exe;
  }

  // Traces f for a new key. A function that reads values of an enclosing
  // trace (captures) is not cached: those values belong to this call.
  template <class R, class... Args>
  std::shared_ptr<const detail::Executable> trace(const detail::CallKey& key, std::vector<nx::Tensor>* captures,
                                                  const Args&... args) const {
    detail::Staging staging("rune::jit");
    auto stand_in = [&](const auto& arg) {
      std::vector<nx::Tensor> params = staging.parameters(leaves(arg));
      return rebuild(arg, std::span<const nx::Tensor>(params));
    };
    std::tuple<decltype(stand_in(args))...> traced{stand_in(args)...};
    auto result = std::make_shared<R>(std::apply(f_, traced));
    auto exe = std::make_shared<detail::Executable>();
    exe->code = detail::compile(staging.finish(result_leaves("rune::jit", *result)), state_->options.scalar_elements,
                                state_->options.native_after);
    exe->result_like = result;
    *captures = staging.captures();
    std::lock_guard lock(state_->mutex);
    ++state_->traces;
    const int in_a_row = state_->traced_in_a_row.fetch_add(1, std::memory_order_relaxed) + 1;
    if (state_->latest) detail::report_retrace(key, *state_->latest, in_a_row, state_->warned);
    state_->latest = key;
    if (captures->empty()) return cache(key, exe);  // (the first trace of the key)
    return exe;
  }

  F f_;
  std::shared_ptr<State> state_;
};

template <class F> Compiled<F> jit(F f, JitOptions options = {}) { return Compiled<F>(std::move(f), options); }

}  // namespace rune
