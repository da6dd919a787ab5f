#include "Suggest.hpp"
#include "Units.hpp"

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
