#include "strategies/workload/chakra/ProtoWire.hpp"

#include <cstring>

namespace clustersim::proto {

void Writer::varint(std::uint64_t v)
{
  while (v >= 0x80) {
    buf_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  buf_.push_back(static_cast<char>(v));
}

void Writer::uint64_field(std::uint32_t field, std::uint64_t v)
{
  tag(field, WireType::varint);
  varint(v);
}

void Writer::double_field(std::uint32_t field, double v)
{
  tag(field, WireType::fixed64);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  for (int i = 0; i < 8; ++i)
    buf_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

void Writer::bytes_field(std::uint32_t field, std::string_view bytes)
{
  tag(field, WireType::length);
  varint(bytes.size());
  buf_.append(bytes);
}

void Writer::packed_field(std::uint32_t field, const std::vector<std::uint64_t>& values)
{
  if (values.empty())
    return;
  Writer inner;
  for (auto v : values)
    inner.varint(v);
  bytes_field(field, inner.bytes());
}

bool Reader::next(std::uint32_t& field, WireType& type)
{
  if (pos_ >= data_.size())
    return false;
  const std::size_t at = offset();
  const std::uint64_t key = varint();
  const auto wire = static_cast<std::uint8_t>(key & 7);
  if (wire != 0 && wire != 1 && wire != 2 && wire != 5)
    throw WireError(at, "wire type " + std::to_string(wire) + " is not one of protobuf's (0, 1, 2, 5)");
  if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff)
    throw WireError(at, "field number " + std::to_string(key >> 3) + " is out of range");
  field = static_cast<std::uint32_t>(key >> 3);
  type = static_cast<WireType>(wire);
  return true;
}

std::uint64_t Reader::varint()
{
  const std::size_t at = offset();
  std::uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos_ >= data_.size())
      throw WireError(at, "the message ends inside a varint");
    const auto byte = static_cast<std::uint8_t>(data_[pos_++]);
    if (shift == 63 && byte > 1)
      throw WireError(at, "a varint longer than 64 bits");
    v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return v;
  }
  throw WireError(at, "a varint longer than 10 bytes");
}

double Reader::fixed64()
{
  if (data_.size() - pos_ < 8)
    throw WireError(offset(), "the message ends inside a 64-bit value");
  std::uint64_t bits = 0;
  for (int i = 0; i < 8; ++i)
    bits |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(data_[pos_ + static_cast<std::size_t>(i)])) << (8 * i);
  pos_ += 8;
  double v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

std::string_view Reader::bytes()
{
  const std::size_t at = offset();
  const std::uint64_t n = varint();
  if (n > data_.size() - pos_)
    throw WireError(at, "a field of " + std::to_string(n) + " bytes runs past the end of its message (" +
                            std::to_string(data_.size() - pos_) + " left)");
  auto out = data_.substr(pos_, static_cast<std::size_t>(n));
  pos_ += static_cast<std::size_t>(n);
  return out;
}

void Reader::repeated(WireType type, std::vector<std::uint64_t>& out)
{
  if (type == WireType::varint) {
    out.push_back(varint());
    return;
  }
  if (type != WireType::length)
    throw WireError(offset(), "a repeated integer field has wire type " +
                                  std::to_string(static_cast<int>(type)) + "; valid: 0 (one value) or 2 (packed)");
  const std::string_view body = bytes();
  Reader packed(body, offset() - body.size());
  while (packed.pos_ < packed.data_.size())
    out.push_back(packed.varint());
}

void Reader::skip(WireType type)
{
  switch (type) {
  case WireType::varint:
    varint();
    return;
  case WireType::fixed64:
    fixed64();
    return;
  case WireType::length:
    bytes();
    return;
  case WireType::fixed32:
    if (data_.size() - pos_ < 4)
      throw WireError(offset(), "the message ends inside a 32-bit value");
    pos_ += 4;
    return;
  }
}

void append_delimited(std::string& out, const std::string& message)
{
  Writer len;
  len.varint(message.size());
  out += len.bytes();
  out += message;
}

std::vector<Delimited> split_delimited(std::string_view file)
{
  std::vector<Delimited> out;
  std::size_t at = 0;
  while (at < file.size()) {
    Reader r(file.substr(at), at);
    const std::uint64_t n = r.varint();
    const std::size_t body = r.offset();
    if (n > file.size() - body)
      throw WireError(at, "a message of " + std::to_string(n) + " bytes runs past the end of the file (" +
                              std::to_string(file.size() - body) + " left)");
    out.push_back({file.substr(body, static_cast<std::size_t>(n)), body});
    at = body + static_cast<std::size_t>(n);
  }
  return out;
}

} // namespace clustersim::proto
