// Columns<Row, Col...>: a structure-of-arrays table of the plain struct Row — one vector per
// field — that reads like a std::vector<Row>:
//
//   const auto& op = model.gpuOps[i];          // a Row VALUE assembled from the columns
//   for (const auto& op : model.gpuOps) ...    // rows by value, in order
//   model.gpuOps.push_back(op);                // appends one value to every column
//   model.gpuOps.set(i, op);                   // overwrites row i
//   model.gpuOps.update(i, [](GpuOp& op) { op.start += 5; });
//
// and gives hot loops the columns themselves:
//
//   const auto& start = model.gpuOps.col<&GpuOp::start>();   // const std::vector<int64_t>&
//   int64_t s = model.gpuOps.get<&GpuOp::start>(i);          // one field, any column kind
//
// A row accessor only reads the fields it uses once inlined, so `model.gpuOps[i].start` costs
// one load. Rows are values: `&model.gpuOps[i]` and `auto& op = model.gpuOps[i]` do not
// compile (use the index, or `const auto&`, which binds to the value).
//
// Column kinds:
//  - Dense<&Row::f>: always stored (col<>() is available).
//  - Sparse<&Row::f>: stored only once some row holds a value other than Row{}.f — a column
//    that is default in every row (rank 0 of a single file, no CUDA graphs, no NVTX domains)
//    costs nothing. get<>() and rows read the default while it is not stored.
//  - Compact<&Row::f> / Compact<&Row::f, &Row::base> (integer fields): 4 bytes a row, the
//    value's offset from Row{}.f (correlation ids from -1) or from the same row's `base` field
//    (an end from its start: the duration); Small<&Row::f>: 2 bytes a row (thread and process
//    indices, offset from kNone). A value whose offset is negative or does not fit is kept
//    exactly in a side map (about 40 bytes for that row), so every value reads back as written. col<>() is not
//    available (use get<>()); `base` must be an earlier column and changes only with the whole row (set/update), never
//    alone (put/mapColumn), so the compact field keeps its own value when the base moves.
// Every field of Row must have a column: a static_assert counts Row's fields.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kl::profile {

template <auto M>
struct Dense {};
template <auto M>
struct Sparse {};
template <auto M, auto Base = nullptr, typename W = uint32_t>
struct Compact {};
/// A small index (thread, process): 2 bytes a row while it is below 65535.
template <auto M>
using Small = Compact<M, nullptr, uint16_t>;

namespace columns_detail {

template <auto M>
struct MemberOf;
template <typename C, typename T, T C::*M>
struct MemberOf<M> {
  using Class = C;
  using Type = T;
};

template <typename Spec>
struct SpecOf;
template <auto M>
struct SpecOf<Dense<M>> {
  static constexpr auto member = M;
  static constexpr bool sparse = false;
};
template <auto M>
struct SpecOf<Sparse<M>> {
  static constexpr auto member = M;
  static constexpr bool sparse = true;
};
template <auto M, auto B, typename W>
struct SpecOf<Compact<M, B, W>> {
  static constexpr auto member = M;
  static constexpr bool sparse = false;
};

template <auto A, auto B>
constexpr bool sameMember() {
  if constexpr (std::is_same_v<decltype(A), decltype(B)>)
    return A == B;
  else
    return false;
}

/// Number of fields of an aggregate (brace-initialisable with that many values).
struct AnyField {
  template <typename T>
  operator T() const;  // never defined: unevaluated use only
};
template <typename T, typename Seq>
struct Bracable;
template <typename T, size_t... I>
struct Bracable<T, std::index_sequence<I...>> {
  static constexpr bool value = requires { T{((void)I, AnyField{})...}; };
};
template <typename T, size_t N = 0>
constexpr size_t fieldCount() {
  if constexpr (Bracable<T, std::make_index_sequence<N + 1>>::value)
    return fieldCount<T, N + 1>();
  else
    return N;
}

/// Storage of one Dense or Sparse column.
template <typename Row, typename Spec>
struct Store {
  static constexpr auto member = SpecOf<Spec>::member;
  static constexpr bool sparse = SpecOf<Spec>::sparse;
  static constexpr bool compact = false;
  static constexpr bool relative = false;
  static constexpr auto base = nullptr;
  using T = typename MemberOf<member>::Type;
  using S = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;  // no std::vector<bool>
  std::vector<S> v;   // sparse: empty while every row is default (on == false)
  bool on = !sparse;  // values stored (a sparse column: since some row held a non-default value)

  static T dflt() { return Row{}.*member; }
  bool stored() const { return on; }
  T get(size_t i) const {
    if constexpr (sparse)
      return on ? static_cast<T>(v[i]) : dflt();
    else
      return static_cast<T>(v[i]);
  }
  void push(const T& x, size_t rows, size_t reserveHint) {
    if constexpr (sparse) {
      if (!on) {
        if (x == dflt()) return;
        materialize(rows, reserveHint);
      }
    }
    v.push_back(static_cast<S>(x));
  }
  void put(size_t i, const T& x, size_t rows) {
    if constexpr (sparse) {
      if (!on) {
        if (x == dflt()) return;
        materialize(rows, rows);
      }
    }
    v[i] = static_cast<S>(x);
  }
  void materialize(size_t rows, size_t reserveHint) {
    v.reserve(reserveHint > rows ? reserveHint : rows + 1);
    v.assign(rows, static_cast<S>(dflt()));
    on = true;
  }
  void clear() {
    v.clear();
    if constexpr (sparse) {
      v.shrink_to_fit();
      on = false;
    }
  }
  void shrink() { v.shrink_to_fit(); }
  void permute(const std::vector<uint32_t>& order) {
    if (!on) return;
    std::vector<S> out;
    out.reserve(v.size());
    for (uint32_t o : order) out.push_back(v[o]);
    v = std::move(out);
  }
  size_t bytes() const { return v.capacity() * sizeof(S); }
};

/// Storage of one Compact column: per row the offset of the value from a reference (the
/// field's default, or the row's base field) in W, modulo the field's width (a kNone default
/// makes index 0 offset 1), kEscaped where it does not fit; those rows' values in `escaped`
/// (a hash map: writing any row costs O(1), whatever the order of the writes).
template <typename Row, auto M, auto B, typename W>
struct CompactStore {
  static constexpr auto member = M;
  static constexpr bool sparse = false;
  static constexpr bool compact = true;
  static constexpr bool relative = !std::is_same_v<decltype(B), std::nullptr_t>;
  static constexpr auto base = B;
  using T = typename MemberOf<M>::Type;
  static_assert(std::is_integral_v<T> && sizeof(T) <= 8, "Compact<> holds integer fields");
  using U = std::make_unsigned_t<T>;
  static_assert(std::is_unsigned_v<W> && sizeof(W) <= sizeof(uint32_t));
  static constexpr W kEscaped = std::numeric_limits<W>::max();
  std::vector<W> v;
  std::unordered_map<uint64_t, T> escaped;

  static T dflt() { return Row{}.*member; }
  bool stored() const { return true; }
  /// The value of row i given its reference (the default, or the row's base value).
  T get(size_t i, T ref) const {
    const W d = v[i];
    if (d != kEscaped) return static_cast<T>(static_cast<U>(static_cast<U>(ref) + d));
    return escaped.find(i)->second;
  }
  void push(const T& x, T ref, size_t rows) {
    const W d = offset(x, ref);
    v.push_back(d);
    if (d == kEscaped) escaped.emplace(rows, x);
  }
  void put(size_t i, const T& x, T ref) {
    if (v[i] == kEscaped) escaped.erase(i);
    v[i] = offset(x, ref);
    if (v[i] == kEscaped) escaped.emplace(i, x);
  }
  void clear() {
    v.clear();
    escaped.clear();
  }
  void shrink() {
    v.shrink_to_fit();
    escaped.rehash(0);
  }
  void permute(const std::vector<uint32_t>& order) {
    std::vector<W> out;
    out.reserve(v.size());
    std::unordered_map<uint64_t, T> esc;
    esc.reserve(escaped.size());
    for (uint32_t o : order) {
      if (v[o] == kEscaped) esc.emplace(out.size(), escaped.find(o)->second);
      out.push_back(v[o]);
    }
    v = std::move(out);
    escaped = std::move(esc);
  }
  /// The column's bytes; an escaped value counted as its node (key, value, next pointer) and
  /// its bucket.
  size_t bytes() const {
    if (escaped.empty()) return v.capacity() * sizeof(W);
    return v.capacity() * sizeof(W) + escaped.size() * (sizeof(uint64_t) + sizeof(T) + sizeof(void*)) +
           escaped.bucket_count() * sizeof(void*);
  }

 private:
  static W offset(T x, T ref) {
    const U d = static_cast<U>(static_cast<U>(x) - static_cast<U>(ref));  // modulo the width: x < ref is large
    return d < kEscaped ? static_cast<W>(d) : kEscaped;
  }
};

template <typename Row, typename Spec>
struct StoreFor {
  using type = Store<Row, Spec>;
};
template <typename Row, auto M, auto B, typename W>
struct StoreFor<Row, Compact<M, B, W>> {
  using type = CompactStore<Row, M, B, W>;
};

}  // namespace columns_detail

template <typename Row, typename... Specs>
class Columns {
  static_assert(sizeof...(Specs) == columns_detail::fieldCount<Row>(),
                "Columns<Row, ...>: every field of Row needs a Dense<> or Sparse<> column");

  template <auto M, size_t I = 0>
  static constexpr size_t indexOf() {
    static_assert(I < sizeof...(Specs), "no column for this member");
    if constexpr (columns_detail::sameMember<
                      columns_detail::SpecOf<std::tuple_element_t<I, std::tuple<Specs...>>>::member, M>())
      return I;
    else
      return indexOf<M, I + 1>();
  }
  using Stores = std::tuple<typename columns_detail::StoreFor<Row, Specs>::type...>;
  template <auto M>
  using StoreOf = std::tuple_element_t<indexOf<M>(), Stores>;
  /// Whether some Compact column stores its values relative to column M.
  template <typename S, auto M>
  static constexpr bool relativeTo() {
    if constexpr (S::compact && S::relative)
      return columns_detail::sameMember<S::base, M>();
    else
      return false;
  }
  template <auto M>
  static constexpr bool isBase() {
    return (relativeTo<typename columns_detail::StoreFor<Row, Specs>::type, M>() || ...);
  }
  /// The reference a compact store's values are relative to, for row i / for row r.
  template <typename S>
  auto refAt(size_t i) const {
    if constexpr (S::relative) {
      static_assert(indexOf<S::base>() < indexOf<S::member>(), "Compact<f, base>: base must be an earlier column");
      return static_cast<typename S::T>(get<S::base>(i));
    } else {
      return S::dflt();
    }
  }
  template <typename S>
  static auto refOf(const Row& r) {
    if constexpr (S::relative)
      return static_cast<typename S::T>(r.*(S::base));
    else
      return S::dflt();
  }

 public:
  using value_type = Row;
  using size_type = size_t;

  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Row;
    using difference_type = std::ptrdiff_t;
    using reference = Row;
    using pointer = void;
    const_iterator() = default;
    const_iterator(const Columns* t, size_t i) : t_(t), i_(i) {}
    Row operator*() const { return (*t_)[i_]; }
    struct Arrow {
      Row row;
      const Row* operator->() const { return &row; }
    };
    Arrow operator->() const { return {(*t_)[i_]}; }
    Row operator[](difference_type n) const { return (*t_)[i_ + static_cast<size_t>(n)]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      auto c = *this;
      ++i_;
      return c;
    }
    const_iterator& operator--() {
      --i_;
      return *this;
    }
    const_iterator operator--(int) {
      auto c = *this;
      --i_;
      return c;
    }
    const_iterator& operator+=(difference_type n) {
      i_ += static_cast<size_t>(n);
      return *this;
    }
    const_iterator& operator-=(difference_type n) {
      i_ -= static_cast<size_t>(n);
      return *this;
    }
    friend const_iterator operator+(const_iterator a, difference_type n) { return a += n; }
    friend const_iterator operator+(difference_type n, const_iterator a) { return a += n; }
    friend const_iterator operator-(const_iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.i_ == b.i_; }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) { return a.i_ <=> b.i_; }
    /// Row index of the iterator.
    size_t index() const { return i_; }

   private:
    const Columns* t_ = nullptr;
    size_t i_ = 0;
  };
  using iterator = const_iterator;

  Columns() = default;
  Columns(std::initializer_list<Row> rows) {
    reserve(rows.size());
    for (const auto& r : rows) push_back(r);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

  /// Row i by value (every field; unused loads vanish when inlined).
  Row operator[](size_t i) const {
    Row r;
    std::apply(
        [&](const auto&... s) {
          (([&] {
             using S = std::remove_cvref_t<decltype(s)>;
             if constexpr (S::compact)
               r.*(s.member) = s.get(i, refOf<S>(r));  // a base column comes earlier: r has it
             else
               r.*(s.member) = s.get(i);
           }()),
           ...);
        },
        stores_);
    return r;
  }
  Row front() const { return (*this)[0]; }
  Row back() const { return (*this)[size_ - 1]; }

  void push_back(const Row& r) {
    std::apply(
        [&](auto&... s) {
          (([&] {
             using S = std::remove_cvref_t<decltype(s)>;
             if constexpr (S::compact)
               s.push(r.*(s.member), refOf<S>(r), size_);
             else
               s.push(r.*(s.member), size_, reserve_);
           }()),
           ...);
        },
        stores_);
    ++size_;
  }
  /// Overwrites row i.
  void set(size_t i, const Row& r) {
    std::apply(
        [&](auto&... s) {
          (([&] {
             using S = std::remove_cvref_t<decltype(s)>;
             if constexpr (S::compact)
               s.put(i, r.*(s.member), refOf<S>(r));
             else
               s.put(i, r.*(s.member), size_);
           }()),
           ...);
        },
        stores_);
  }
  /// Read-modify-write of row i: fn(Row&).
  template <typename Fn>
  void update(size_t i, Fn&& fn) {
    Row r = (*this)[i];
    fn(r);
    set(i, r);
  }
  /// Applies fn(Row&) to every row.
  template <typename Fn>
  void updateAll(Fn&& fn) {
    for (size_t i = 0; i < size_; ++i) update(i, fn);
  }

  /// One field of row i.
  template <auto M>
  auto get(size_t i) const {
    using S = StoreOf<M>;
    if constexpr (S::compact)
      return std::get<indexOf<M>()>(stores_).get(i, refAt<S>(i));
    else
      return std::get<indexOf<M>()>(stores_).get(i);
  }
  /// Sets one field of row i (not the base of a Compact column: set the whole row).
  template <auto M>
  void put(size_t i, const typename columns_detail::MemberOf<M>::Type& x) {
    static_assert(!isBase<M>(), "the base of a Compact column changes with its row only (set/update)");
    using S = StoreOf<M>;
    if constexpr (S::compact)
      std::get<indexOf<M>()>(stores_).put(i, x, refAt<S>(i));
    else
      std::get<indexOf<M>()>(stores_).put(i, x, size_);
  }
  /// Rewrites every stored value of column M in place: v = fn(v). A sparse column that is not
  /// stored is left alone, so fn must map the column's default to itself.
  template <auto M, typename Fn>
  void mapColumn(Fn&& fn) {
    static_assert(!isBase<M>(), "the base of a Compact column changes with its row only (set/update)");
    using T = typename columns_detail::MemberOf<M>::Type;
    auto& s = std::get<indexOf<M>()>(stores_);
    if constexpr (StoreOf<M>::compact) {
      for (size_t i = 0; i < size_; ++i) put<M>(i, static_cast<T>(fn(get<M>(i))));
    } else {
      if (!s.stored()) return;
      for (auto& x : s.v) x = static_cast<typename StoreOf<M>::S>(fn(static_cast<T>(x)));
    }
  }
  /// A dense column (size() values).
  template <auto M>
  const auto& col() const {
    static_assert(!StoreOf<M>::sparse && !StoreOf<M>::compact, "col<>() needs a Dense<> column; use get<>()");
    return std::get<indexOf<M>()>(stores_).v;
  }
  /// Whether column M holds values (always for Dense; for Sparse: some row is not default).
  template <auto M>
  bool stored() const {
    return std::get<indexOf<M>()>(stores_).stored();
  }

  /// Capacity for n rows in every stored column (and for sparse columns once they are stored).
  void reserve(size_t n) {
    reserve_ = n;
    std::apply([&](auto&... s) { ((s.stored() ? s.v.reserve(n) : void()), ...); }, stores_);
  }
  void clear() {
    std::apply([](auto&... s) { ((s.clear()), ...); }, stores_);
    size_ = 0;
  }
  void shrink_to_fit() {
    std::apply([](auto&... s) { ((s.shrink()), ...); }, stores_);
  }
  /// Reorders the rows: new row k = old row order[k] (order is a permutation of [0, size)).
  /// One column at a time, so the transient memory is one column. Compact columns move their
  /// offsets as they are: a row's base moves with it.
  void permute(const std::vector<uint32_t>& order) {
    std::apply([&](auto&... s) { ((s.permute(order)), ...); }, stores_);
  }
  /// Bytes held by the stored columns (capacity), for memory reports.
  size_t bytes() const {
    size_t b = 0;
    std::apply([&](const auto&... s) { ((b += s.bytes()), ...); }, stores_);
    return b;
  }

 private:
  Stores stores_;
  size_t size_ = 0;
  size_t reserve_ = 0;
};

}  // namespace kl::profile
