// scalebayes/nn/idx.hpp -- read IDX files (MNIST and relatives) without R: for the standalone CLI and tests.
// Reads the uncompressed format (gunzip first): magic (0, 0, type, ndims), big-endian int32 dimensions,
// row-major data. Returns doubles in R's column-major layout with the examples first, which is what
// nn::from_col_major() and nn::make_dataset() take.
#pragma once
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace scalebayes {
namespace nn {

struct IdxArray {
  std::vector<std::int64_t> dims;  // examples first
  std::vector<double> values;      // column-major (R layout)
};

inline IdxArray read_idx_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot open " + path);
  unsigned char m[4];
  if (!in.read(reinterpret_cast<char*>(m), 4) || m[0] != 0 || m[1] != 0)
    throw std::invalid_argument(path + " is not an (uncompressed) IDX file");
  const int type = m[2], nd = m[3];
  int size = 0;
  switch (type) {
    case 0x08: case 0x09: size = 1; break;
    case 0x0B: size = 2; break;
    case 0x0C: case 0x0D: size = 4; break;
    case 0x0E: size = 8; break;
    default: throw std::invalid_argument(path + ": unsupported IDX type code");
  }
  IdxArray a;
  std::int64_t total = 1;
  for (int d = 0; d < nd; ++d) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) throw std::invalid_argument(path + ": truncated header");
    const std::int64_t v = (std::int64_t(b[0]) << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
    a.dims.push_back(v);
    total *= v;
  }
  std::vector<unsigned char> raw(static_cast<std::size_t>(total * size));
  if (!in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size())))
    throw std::invalid_argument(path + ": truncated data");
  std::vector<double> rowmajor(static_cast<std::size_t>(total));
  for (std::int64_t i = 0; i < total; ++i) {
    const unsigned char* p = raw.data() + i * size;
    std::uint64_t u = 0;
    for (int k = 0; k < size; ++k) u = (u << 8) | p[k];
    double v;
    switch (type) {
      case 0x08: v = static_cast<double>(u); break;
      case 0x09: v = static_cast<double>(static_cast<std::int8_t>(u)); break;
      case 0x0B: v = static_cast<double>(static_cast<std::int16_t>(u)); break;
      case 0x0C: v = static_cast<double>(static_cast<std::int32_t>(u)); break;
      case 0x0D: { std::uint32_t w = static_cast<std::uint32_t>(u); float f; std::memcpy(&f, &w, 4); v = f; break; }
      default: { double f; std::memcpy(&f, &u, 8); v = f; }
    }
    rowmajor[static_cast<std::size_t>(i)] = v;
  }
  // row-major (i0, i1, ..., ik) -> column-major with the same index order
  a.values.resize(rowmajor.size());
  std::vector<std::int64_t> idx(a.dims.size(), 0);
  for (std::int64_t r = 0; r < total; ++r) {
    std::int64_t c = 0, stride = 1;
    for (std::size_t d = 0; d < a.dims.size(); ++d) { c += idx[d] * stride; stride *= a.dims[d]; }
    a.values[static_cast<std::size_t>(c)] = rowmajor[static_cast<std::size_t>(r)];
    for (int d = static_cast<int>(a.dims.size()) - 1; d >= 0; --d) {
      if (++idx[static_cast<std::size_t>(d)] < a.dims[static_cast<std::size_t>(d)]) break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
  return a;
}

}  // namespace nn
}  // namespace scalebayes
