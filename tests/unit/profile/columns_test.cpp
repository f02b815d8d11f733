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

namespace {

struct Span {
  int64_t start = 0;
  int64_t end = 0;
  int64_t id = -1;
};
using SpanTable = Columns<Span, Dense<&Span::start>, Compact<&Span::end, &Span::start>, Compact<&Span::id>>;

}  // namespace

TEST_CASE("columns: compact columns read back every value exactly, 4 bytes a row where the offset fits") {
  SpanTable t;
  const int64_t big = int64_t{1} << 40;
  // Fitting offsets (a short duration, ids from -1), a long one, a negative one (end < start),
  // the extremes of int64, and an offset of exactly UINT32_MAX (the escape value itself).
  std::vector<Span> rows = {{100, 150, -1},
                            {big, big + 7, 0},
                            {5, 5 + (int64_t{1} << 33), int64_t{1} << 35},
                            {50, 40, -7},
                            {INT64_MIN, INT64_MAX, INT64_MAX},
                            {0, UINT32_MAX, int64_t{UINT32_MAX} - 1},
                            {1, 1, INT64_MIN}};
  for (const auto& r : rows) t.push_back(r);
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    CHECK(t[i].start == rows[i].start);
    CHECK(t[i].end == rows[i].end);
    CHECK(t[i].id == rows[i].id);
    CHECK(t.get<&Span::end>(i) == rows[i].end);
    CHECK(t.get<&Span::id>(i) == rows[i].id);
  }
  // A table of fitting values costs 8 (start) + 4 + 4 bytes a row.
  SpanTable small;
  small.reserve(1000);
  for (int64_t i = 0; i < 1000; ++i) small.push_back(Span{i * 1000, i * 1000 + 10, i});
  CHECK(small.bytes() == 1000 * (8 + 4 + 4));
}

TEST_CASE("columns: a compact column keeps its values through set, put, update, mapColumn and permute") {
  SpanTable t;
  t.push_back(Span{10, 20, 1});
  t.push_back(Span{30, 30 + (int64_t{1} << 36), 2});  // escaped duration
  t.push_back(Span{50, 60, int64_t{1} << 34});        // escaped id
  // The whole row moves (clock alignment shifts start and end together).
  t.update(0, [](Span& s) {
    s.start += 1000;
    s.end += 1000;
  });
  CHECK(t[0].start == 1010);
  CHECK(t[0].end == 1020);
  // An escaped value replaced by a fitting one and back.
  t.put<&Span::end>(1, 35);
  CHECK(t[1].end == 35);
  t.put<&Span::end>(2, 50 - 1);  // negative duration: escaped
  CHECK(t[2].end == 49);
  t.put<&Span::id>(2, 3);
  CHECK(t[2].id == 3);
  t.set(1, Span{-5, int64_t{1} << 50, -1});
  CHECK(t[1].start == -5);
  CHECK(t[1].end == int64_t{1} << 50);
  t.mapColumn<&Span::id>([](int64_t x) { return x * (int64_t{1} << 33); });
  CHECK(t[0].id == int64_t{1} << 33);
  CHECK(t[1].id == -(int64_t{1} << 33));
  CHECK(t[2].id == 3 * (int64_t{1} << 33));
  t.permute({2, 0, 1});
  CHECK(t[0].start == 50);
  CHECK(t[0].end == 49);
  CHECK(t[0].id == 3 * (int64_t{1} << 33));
  CHECK(t[1].end == 1020);
  CHECK(t[2].end == int64_t{1} << 50);
  CHECK(t[2].id == -(int64_t{1} << 33));
  // The model's tables: a correlation id and an end per row cost 4 bytes each, the thread 2.
  ApiCallTable calls;
  calls.reserve(10);
  for (int i = 0; i < 10; ++i) {
    ApiCall c;
    c.start = int64_t{1} << 40;
    c.end = c.start + 5000;
    c.correlationId = i;
    c.thread = 0;
    calls.push_back(c);
  }
  CHECK(calls.bytes() == 10 * (8 + 4 + 4 + 2));
  CHECK(calls[9].correlationId == 9);
  CHECK(calls[9].end == (int64_t{1} << 40) + 5000);
}

TEST_CASE("columns: a small index column takes 2 bytes a row and reads back kNone and large indices") {
  RangeTable t;
  const std::vector<uint32_t> threads = {kNone, 0, 1, 65533, 65534, 65535, 70000, kNone - 1};
  for (uint32_t th : threads) {
    Range r;
    r.start = 10;
    r.end = 20;
    r.thread = th;
    t.push_back(r);
  }
  for (size_t i = 0; i < threads.size(); ++i) {
    INFO("row " << i);
    CHECK(t[i].thread == threads[i]);
    CHECK(t.get<&Range::thread>(i) == threads[i]);
  }
  t.permute({7, 6, 5, 4, 3, 2, 1, 0});
  for (size_t i = 0; i < threads.size(); ++i) CHECK(t[i].thread == threads[threads.size() - 1 - i]);
  // Indices below 65534 (and kNone) cost 2 bytes; start 8, end (duration) 4, text 4.
  RangeTable small;
  small.reserve(100);
  for (uint32_t i = 0; i < 100; ++i) {
    Range r;
    r.start = i;
    r.end = i + 1;
    r.thread = i % 3;
    small.push_back(r);
  }
  CHECK(small.bytes() == 100 * (8 + 4 + 4 + 2));
}
