// What nx::check and rune::callback need from the program layer, without
// exposing it.
#pragma once

#include <exception>
#include <functional>
#include <span>
#include <vector>

#include "rune/tensor.hpp"

namespace rune::detail {

using MakeException = std::function<std::exception_ptr(const nx::Index&, std::span<const nx::Tensor>)>;

// Applies a check: eagerly it throws make(index, data at index) for the
// first false element; traced, it is recorded as an equation.
void bind_check(std::vector<nx::Tensor> conditions, std::vector<nx::Tensor> data, MakeException make);

using HostFunction = std::function<std::vector<nx::Tensor>(std::span<const nx::Tensor>)>;

// Applies a callback: eagerly it runs function; traced, it is recorded as an
// equation whose results have the types of `like`.
std::vector<nx::Tensor> bind_callback(std::vector<nx::Tensor> args, std::span<const nx::Tensor> like,
                                      HostFunction function);

}  // namespace rune::detail
