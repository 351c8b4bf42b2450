// Reading elements: nx::item and nx::to_vector.
#include <cstring>

#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "rune/nx.hpp"

namespace nx {

namespace detail {
void read_into(const Tensor& t, DType target, void* out, const char* api) {
  Tensor v = ops::elements_of(t, api);
  Tensor c = ops::contiguous(ops::convert_elements(v, target));
  if (c.numel()) std::memcpy(out, ops::data_of<char>(c), std::size_t(c.numel()) * size_of(target));
}
}  // namespace detail

double item(const Tensor& t, const Index& index) {
  Tensor v = ops::elements_of(t, "nx::item");
  const auto& impl = *v.impl();
  std::int64_t offset = impl.offset;
  if (index.empty()) {
    if (v.numel() != 1) ops::fail("nx::item", ops::describe(v) + " holds " + std::to_string(v.numel()) +
                                                  " elements, not one (give an index)");
  } else {
    if (std::int64_t(index.size()) != v.ndim())
      ops::fail("nx::item", "index " + to_string(index) + " does not have one entry per axis of " + ops::describe(v));
    for (std::size_t d = 0; d < index.size(); ++d) {
      std::int64_t i = index[d] < 0 ? index[d] + impl.shape[d] : index[d];
      if (i < 0 || i >= impl.shape[d])
        ops::fail("nx::item", "index " + to_string(index) + " is out of range for " + ops::describe(v));
      offset += i * impl.strides[d];
    }
  }
  Tensor one = ops::make_view(v, {}, {}, offset);
  return *ops::data_of<double>(ops::convert_elements(one, float64));
}

}  // namespace nx
