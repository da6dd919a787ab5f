#include "topology/config/Suggest.hpp"
#include "topology/config/Units.hpp"

#include <doctest/doctest.h>

using namespace clustersim;

TEST_CASE("quantities parse with their units into SI")
{
  CHECK(parse_quantity("80GiB", Quantity::bytes) == doctest::Approx(80.0 * 1024 * 1024 * 1024));
  CHECK(parse_quantity("25MB", Quantity::bytes) == doctest::Approx(25e6));
  CHECK(parse_quantity("300GBps", Quantity::bandwidth) == doctest::Approx(300e9));
  CHECK(parse_quantity("300 GB/s", Quantity::bandwidth) == doctest::Approx(300e9));
  CHECK(parse_quantity("400Gbps", Quantity::bandwidth) == doctest::Approx(50e9));
  CHECK(parse_quantity("1.5us", Quantity::time) == doctest::Approx(1.5e-6));
  CHECK(parse_quantity("989TFLOPS", Quantity::flop_rate) == doctest::Approx(989e12));
  CHECK(parse_quantity("700W", Quantity::power) == doctest::Approx(700));
}

TEST_CASE("units and counts as users type them: days, bit/s, nccl-tests' sizes, 15T tokens")
{
  CHECK(parse_quantity("30d", Quantity::time) == doctest::Approx(30 * 86400.0));
  CHECK(parse_quantity("400Gbit/s", Quantity::bandwidth) == doctest::Approx(50e9));
  CHECK(parse_quantity("400 Gbit/s", Quantity::bandwidth) == parse_quantity("400Gbps", Quantity::bandwidth));
  // nccl-tests reads -b 8G as 8 GiB, K and M binary too, either case
  CHECK(parse_quantity("8G", Quantity::bytes) == doctest::Approx(8.0 * 1024 * 1024 * 1024));
  CHECK(parse_quantity("64m", Quantity::bytes) == doctest::Approx(64.0 * 1024 * 1024));
  CHECK(parse_quantity("1K", Quantity::bytes) == doctest::Approx(1024));
  // counts: decimal multipliers, B as in "7B parameters"
  CHECK(parse_count("15T").value() == doctest::Approx(15e12));
  CHECK(parse_count("7B").value() == doctest::Approx(7e9));
  CHECK(parse_count("405G").value() == doctest::Approx(405e9));
  CHECK(parse_count("2.5M").value() == doctest::Approx(2.5e6));
  CHECK(parse_count("1e12").value() == doctest::Approx(1e12));
  CHECK(parse_count(" 3P ").value() == doctest::Approx(3e15));
  CHECK_FALSE(parse_count("15TB").has_value());
  CHECK_FALSE(parse_count("T").has_value());
  CHECK_FALSE(parse_count("").has_value());
}

TEST_CASE("bad quantities name the valid suffixes")
{
  SUBCASE("no unit")
  {
    CHECK_THROWS_WITH_AS(parse_quantity("300", Quantity::bandwidth), doctest::Contains("has no unit"), UnitError);
  }
  SUBCASE("unknown unit")
  {
    try {
      parse_quantity("300GiBps", Quantity::bandwidth);
      FAIL("no error");
    } catch (const UnitError& e) {
      CHECK(std::string(e.what()).find("unknown unit 'GiBps'") != std::string::npos);
      CHECK(e.valid().find("GBps") != std::string::npos);
    }
  }
  SUBCASE("not a number")
  {
    CHECK_THROWS_WITH_AS(parse_quantity("fast", Quantity::time), doctest::Contains("is not a time"), UnitError);
  }
  SUBCASE("negative")
  {
    CHECK_THROWS_WITH_AS(parse_quantity("-1us", Quantity::time), doctest::Contains("negative"), UnitError);
  }
}

TEST_CASE("suggestions find the nearest valid name")
{
  std::vector<std::string> keys{"tp", "pp", "dp", "micro_batch", "global_batch", "sequence_parallel"};
  CHECK(nearest("micro_bach", keys) == "micro_batch");
  CHECK(nearest("sequence_paralel", keys) == "sequence_parallel");
  CHECK(nearest("zzzzzzzzzz", keys).empty());
  CHECK(unknown_name("key", "tpp", keys, "training") == "unknown key 'tpp' in training; did you mean 'tp'?");
}
