#include "vm/kernel_shapes.hpp"

#include <algorithm>

namespace rune::vm {

std::int64_t row_of_operand(const nx::Shape& operand, const nx::Shape& kernel) {
  std::size_t lead = 0;
  while (lead < operand.size() && operand[lead] == 1) ++lead;
  const std::size_t rank = operand.size() - lead;
  if (rank == 0 || rank >= kernel.size() || !std::equal(operand.begin() + long(lead), operand.end(), kernel.end() - long(rank)))
    return 0;
  return nx::numel(operand) > 1 ? nx::numel(operand) : 0;
}

std::int64_t column_of_operand(const nx::Shape& operand, const nx::Shape& kernel) {
  if (operand.size() > kernel.size() || nx::numel(operand) <= 1) return 0;
  const std::size_t pad = kernel.size() - operand.size();
  auto axis = [&](std::size_t d) { return d < pad ? std::int64_t(1) : operand[d - pad]; };
  std::size_t ones = kernel.size();  // the trailing axes of length 1
  while (ones > 0 && axis(ones - 1) == 1) --ones;
  for (std::size_t d = 0; d < ones; ++d)
    if (axis(d) != kernel[d]) return 0;
  std::int64_t row = 1;
  for (std::size_t d = ones; d < kernel.size(); ++d) row *= kernel[d];
  return ones < kernel.size() && row > 1 ? row : 0;
}

std::int64_t repeat_of_operand(const nx::Shape& operand, const nx::Shape& kernel) {
  const std::int64_t row = row_of_operand(operand, kernel);
  return row != 0 ? row : column_of_operand(operand, kernel);
}

boost::container::small_vector<std::int64_t, 6> broadcast_strides(const nx::Shape& operand, const nx::Shape& kernel) {
  boost::container::small_vector<std::int64_t, 6> strides(kernel.size(), 0);
  const std::size_t pad = kernel.size() - operand.size();
  std::int64_t stride = 1;
  for (std::size_t d = operand.size(); d-- > 0; stride *= operand[d])
    if (operand[d] != 1) strides[pad + d] = stride;
  return strides;
}

}  // namespace rune::vm
