// Columns<>: sparse columns cost nothing while every row holds the default, and read the same
// rows as a plain vector of structs once some row does not.
#include "core/profile/columns.h"

#include <doctest/doctest.h>

#include "core/profile/model.h"

using namespace kl::profile;

namespace {

struct Row {
  int64_t start = 0;
  int32_t tag = -1;
  uint8_t flag = 0;
};
using Table = Columns<Row, Dense<&Row::start>, Sparse<&Row::tag>, Sparse<&Row::flag>>;

}  // namespace

TEST_CASE("columns: a sparse column holding only defaults is not stored, also after reserve()") {
  Table t;
  t.reserve(1000);
  for (int64_t i = 0; i < 1000; ++i) t.push_back(Row{i, -1, 0});
  CHECK_FALSE(t.stored<&Row::tag>());
  CHECK_FALSE(t.stored<&Row::flag>());
  CHECK(t.bytes() == 1000 * sizeof(int64_t));
  CHECK(t[999].tag == -1);
  // The model's tables: default-valued fields of the row types cost no bytes either.
  GpuOpTable ops;
  ops.reserve(100);
  for (int i = 0; i < 100; ++i) {
    GpuOp op;
    op.start = i;
    op.end = i + 1;
    ops.push_back(op);
  }
  CHECK_FALSE(ops.stored<&GpuOp::rank>());
  CHECK_FALSE(ops.stored<&GpuOp::graphId>());
  CHECK_FALSE(ops.stored<&GpuOp::kind>());
}

TEST_CASE("columns: the first non-default value stores the column; earlier rows read the default") {
  Table t;
  t.reserve(10);
  t.push_back(Row{1, -1, 0});
  t.push_back(Row{2, -1, 0});
  t.push_back(Row{3, 7, 0});
  t.push_back(Row{4, -1, 0});
  REQUIRE(t.stored<&Row::tag>());
  CHECK_FALSE(t.stored<&Row::flag>());
  CHECK(t[0].tag == -1);
  CHECK(t[2].tag == 7);
  CHECK(t.get<&Row::tag>(3) == -1);
  t.put<&Row::flag>(1, 1);  // put on a column not stored yet
  CHECK(t.stored<&Row::flag>());
  CHECK(t[1].flag == 1);
  CHECK(t[0].flag == 0);
  t.permute({3, 2, 1, 0});
  CHECK(t[0].start == 4);
  CHECK(t[1].tag == 7);
  CHECK(t[2].flag == 1);
  t.clear();
  CHECK(t.empty());
  CHECK_FALSE(t.stored<&Row::tag>());
  t.push_back(Row{5, -1, 0});
  CHECK_FALSE(t.stored<&Row::tag>());
  CHECK(t[0].start == 5);
}
