// Module: the source model of one Python file, built from its tree-sitter tree
// (see docs/python-model.md). Plain data; indices into the vectors of the same Module;
// kNone (-1) means "none". Lines are 0-based, byte offsets index the full UTF-8 text
// (including a BOM). Every vector is in source order (statements and blocks pre-order, so a
// parent's index is lower than its children's).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kl::python {

inline constexpr int32_t kNone = -1;

/// Half-open byte range [start, end).
struct ByteRange {
  uint32_t start = 0;
  uint32_t end = 0;
  uint32_t size() const { return end - start; }
  bool empty() const { return end == start; }
  bool contains(uint32_t offset) const { return start <= offset && offset < end; }
  bool contains(ByteRange r) const { return start <= r.start && r.end <= end; }
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

/// Inclusive 0-based line span.
struct LineSpan {
  uint32_t first = 0;
  uint32_t last = 0;
  bool contains(uint32_t line) const { return first <= line && line <= last; }
  friend bool operator==(const LineSpan&, const LineSpan&) = default;
};

/// A sequence of statements: the module, or one body/clause of a compound statement.
struct Block {
  /// Node type of the syntax node whose body this is: "module", "function_definition",
  /// "class_definition", "if_statement" (the `if` body), "elif_clause", "else_clause",
  /// "for_statement", "while_statement", "try_statement" (the `try` body), "except_clause",
  /// "except_group_clause", "finally_clause", "with_statement", "case_clause".
  std::string_view clause;
  int32_t owner = kNone;            // the compound statement; kNone for the module block
  std::vector<int32_t> statements;  // direct children, in order
  /// From the first statement's start to the last statement's end. An empty block (broken
  /// code: `def f():` and nothing) is the empty range just after the header's ':'.
  ByteRange bytes;
  LineSpan lines;  // lines of `bytes`
  /// Clause header, from its keyword (`elif`, `else`, `def`/`async`, `case`, ...) through ':'
  /// (empty for the module). For a decorated def/class the header starts at `def`/`class`.
  ByteRange header;
  uint32_t headerLine = 0;  // line of the clause keyword (0 for the module)
  /// The body starts on the header's line (`if x: y()`, `def f(): return g()`).
  bool sameLine = false;
  /// Leading whitespace a statement of this block has on its own line: the text before the
  /// first statement on its line; for a sameLine block, the header line's indentation plus
  /// the file's indentation unit (what a body moved to its own line would use). "" for module.
  std::string indent;
};

/// One expression of the facts below (Module::expressions). What static analysis evaluates is
/// structured — names, attribute access, calls, subscripts, string literals; anything else is
/// Other (`nodeType` and `bytes` say what it was; its parts are not recorded).
struct Expression {
  enum class Kind { Name, Attribute, Call, Subscript, String, Other };
  /// One argument of a call, in source order.
  struct Argument {
    std::string keyword;    // `name=value`: name; "" for a positional argument
    int32_t value = kNone;  // Expression (for `*a` / `**k`: the `a` / `k`)
    enum class Splat : uint8_t { None, List, Dict } splat = Splat::None;  // *a / **k
    bool positional() const { return keyword.empty() && splat == Splat::None; }
  };
  Kind kind = Kind::Other;
  std::string_view nodeType;  // the tree-sitter node type ("identifier", "call", "list", ...)
  ByteRange bytes;
  /// Name: the identifier; Attribute: the attribute's name (`b` of `a.b`).
  std::string name;
  /// Attribute / Subscript: the object (`a` of `a.b`, `a[i]`); Call: the callee.
  int32_t object = kNone;
  /// Call: its arguments (a generator argument `f(x for x in y)` is one positional argument).
  std::vector<Argument> arguments;
  /// String: the value of a plain string literal (or an implicit concatenation of them); nullopt
  /// for f-strings with interpolations and bytes.
  std::optional<std::string> literal;
};

struct Decorator {
  std::string text;  // source text after '@' (e.g. "functools.cache", "torch.no_grad()")
  ByteRange bytes;   // from '@' to the end of the expression
  uint32_t line = 0;
  int32_t expression = kNone;  // the Expression after '@'
};

/// One parameter of a def, in order (the bare `*` and `/` separators are not parameters).
struct Parameter {
  std::string name;
  int32_t annotation = kNone;  // Expression of `name: T`; kNone when none
  bool hasDefault = false;
  enum class Splat : uint8_t { None, List, Dict } splat = Splat::None;  // *args / **kwargs
};

/// What a statement is: its tree-sitter node type as an enum ("expression_statement" ->
/// Expression, "function_definition" -> FunctionDef, ...). Other: a node type not listed (a
/// grammar newer than this list, an ERROR node).
enum class StatementKind {
  Expression,
  Return,
  Pass,
  Break,
  Continue,
  Raise,
  Assert,
  Delete,
  Global,
  Nonlocal,
  Import,
  ImportFrom,
  FutureImport,
  Print,
  Exec,
  TypeAlias,
  If,
  For,
  While,
  Try,
  With,
  Match,
  FunctionDef,
  ClassDef,
  Other
};
/// The kind of a tree-sitter statement node type.
StatementKind statementKind(std::string_view nodeType);

struct Statement {
  /// A decorated definition is ONE statement of kind FunctionDef / ClassDef whose range includes
  /// its decorators (decorated == true).
  StatementKind kind = StatementKind::Other;
  std::string_view nodeType;  // the tree-sitter node type ("expression_statement", ...)
  /// `global` / `nonlocal`: must stay first in a body an edit wraps.
  bool globalLike() const { return kind == StatementKind::Global || kind == StatementKind::Nonlocal; }
  bool isImport() const { return kind == StatementKind::Import || kind == StatementKind::ImportFrom; }
  ByteRange bytes;  // exact: first token through last token (no newline)
  LineSpan lines;
  int32_t parent = kNone;           // enclosing statement (compound); kNone at module level
  int32_t parentBlock = 0;          // the block it is a direct child of (0 = module block)
  int32_t function = kNone;         // innermost enclosing function (a def's own statement is
                                    // in the function that contains it, not itself)
  int32_t klass = kNone;            // innermost enclosing class whose body (transitively,
                                    // not through a def) holds it
  std::vector<int32_t> blocks;      // compound statements: bodies/clauses in source order
  int32_t definesFunction = kNone;  // for a def: its Function index
  int32_t definesClass = kNone;     // for a class: its Class index
  bool compound = false;
  bool decorated = false;
  bool joinedBySemicolon = false;        // shares its line with a sibling via ';'
  bool oneLineBody = false;              // in the body of a one-line compound (`if x: y()`)
  bool futureImport = false;             // `from __future__ import ...`
  bool docstring = false;                // first statement of module/def/class body, a string alone
  bool containsMultilineString = false;  // see Module::multilineStringsIn(bytes)
  /// An expression statement that is one call (`f(x)`, not `y = f(x)`): that CallSite.
  int32_t call = kNone;
  bool hasError = false;  // contains an ERROR or MISSING node
};

struct Function {
  std::string name;
  /// Python's __qualname__: "Outer.Inner.method"; nested defs "f.<locals>.g"; a class inside a
  /// function "f.<locals>.C.m". Unnamed broken defs have name "".
  std::string qualName;
  bool isAsync = false;
  bool isMethod = false;      // defined directly in a class body
  int32_t klass = kNone;      // the class it is directly defined in
  int32_t parent = kNone;     // enclosing function
  int32_t statement = kNone;  // its Statement
  std::vector<Decorator> decorators;
  ByteRange bytes;  // whole definition INCLUDING decorators
  LineSpan lines;
  ByteRange nameBytes;
  uint32_t defLine = 0;       // line of `def` (or `async def`)
  int32_t body = kNone;       // Block index (kNone only if the parser produced no body)
  int32_t docstring = kNone;  // Statement index of the docstring
  bool oneLine = false;       // body on the `def` line: `def f(): return g()`
  std::vector<Parameter> parameters;
};

struct Class {
  std::string name;
  std::string qualName;    // same convention as Function::qualName
  int32_t klass = kNone;   // enclosing class
  int32_t parent = kNone;  // enclosing function
  int32_t statement = kNone;
  std::vector<Decorator> decorators;
  ByteRange bytes;  // including decorators
  LineSpan lines;
  ByteRange nameBytes;
  uint32_t classLine = 0;
  int32_t body = kNone;
  int32_t docstring = kNone;
  /// Positional base-class expressions of `class C(A, b.B, metaclass=M)`: A, b.B (keywords and
  /// splats excluded).
  std::vector<int32_t> bases;
};

struct CallSite {
  std::string callee;  // source text of the called expression: "self.attn",
                       // "torch.matmul", "F.gelu", "f(x)" for f(x)(y)
  ByteRange bytes;     // the whole call, callee through ')'
  ByteRange calleeBytes;
  uint32_t line = 0;  // line where the call starts
  uint32_t lastLine = 0;
  int32_t statement = kNone;   // innermost statement containing the call
  int32_t function = kNone;    // that statement's function (decorators and default
                               // arguments are evaluated in the enclosing scope)
  int32_t expression = kNone;  // the Call Expression (callee: its `object`; its arguments)
};

/// `TARGET = VALUE` / `TARGET: T = VALUE` as an expression statement; a chained `a = b = v` gives
/// one per target (both with v). Augmented (`+=`) and value-less annotated assignments are not
/// assignments here.
struct Assignment {
  int32_t statement = kNone;
  int32_t target = kNone;  // Expression (Name, Attribute, Subscript, or Other for `a, b`)
  int32_t value = kNone;   // Expression
  bool annotated = false;
};

/// `for TARGETS in ITERABLE:` (also `async for`).
struct ForLoop {
  int32_t statement = kNone;
  /// The target; `a, b` and `(a, b)` are split into their elements (one level).
  std::vector<int32_t> targets;
  int32_t iterable = kNone;  // Expression
};

/// One item of a with-statement header (`with a() as x, b():` has two).
struct WithItem {
  int32_t statement = kNone;
  ByteRange bytes;  // the with_item (`a() as x`)
  /// The context manager expression (`a()` of `a() as x`).
  int32_t value = kNone;
};

/// One name bound by an import statement (anywhere in the file; scopes are not tracked).
struct ImportBinding {
  std::string local;   // the bound name: "torch", "th", "F", "gelu"
  std::string target;  // dotted path it refers to: "torch", "torch.nn.functional",
                       // "torch.nn.functional.gelu"; relative imports keep their dots
  int32_t statement = kNone;
  ByteRange bytes;  // the imported item (`torch.nn.functional as F`)
};

/// Inferred indentation unit: the most common indentation step between nested blocks.
struct Indentation {
  bool tabs = false;
  uint32_t width = 4;  // spaces per level (1 for tabs)
  std::string unit() const { return tabs ? std::string("\t") : std::string(width, ' '); }
  bool inferred = false;  // false: no nested block, defaulted to 4 spaces
};

enum class LineEnding { LF, CRLF };

struct Module {
  std::vector<Statement> statements;
  std::vector<Block> blocks;  // blocks[0] is the module block
  std::vector<Function> functions;
  std::vector<Class> classes;
  std::vector<CallSite> calls;  // source order of call start
  std::vector<ImportBinding> imports;
  /// Expressions the facts refer to (callees and arguments of calls, assignment targets and
  /// values, for-loop targets and iterables, with items, decorators, parameter annotations,
  /// base classes). Sub-expressions are recorded only inside names/attributes/calls/subscripts.
  std::vector<Expression> expressions;
  std::vector<Assignment> assignments;  // source order
  std::vector<ForLoop> forLoops;        // source order
  std::vector<WithItem> withItems;      // source order
  /// String literals whose text spans lines (outermost ones, sorted, disjoint). Never
  /// re-indent inside them.
  std::vector<ByteRange> multilineStrings;
  std::vector<ByteRange> errors;  // ERROR and MISSING nodes (outermost), sorted
  Indentation indentation;
  LineEnding lineEnding = LineEnding::LF;  // the majority line terminator
  bool bom = false;

  const Block& moduleBlock() const { return blocks[0]; }
  /// Innermost statement whose range contains `offset`; kNone when none.
  int32_t statementAt(uint32_t offset) const;
  /// Innermost statement whose line span contains `line`; kNone when none.
  int32_t statementAtLine(uint32_t line) const;
  /// Innermost function whose span contains `offset`; kNone when none.
  int32_t functionAt(uint32_t offset) const;
  /// Function by qualified name; kNone when none (first one if redefined).
  int32_t findFunction(std::string_view qualName) const;
  int32_t findClass(std::string_view qualName) const;
  /// Multi-line strings intersecting `r`.
  std::span<const ByteRange> multilineStringsIn(ByteRange r) const;
  /// Whether `offset` lies strictly inside a multi-line string (after its first byte).
  bool insideMultilineString(uint32_t offset) const;
  /// "a.b.c" for a Name/Attribute chain expression; nullopt for anything else (a call, `a[i].b`).
  std::optional<std::string> dottedName(int32_t expression) const;
  /// The value (an Expression) of argument `position` (0-based, counting positional arguments
  /// only) of Call expression `call`, else of its `keyword=` argument when `keyword` is not empty;
  /// kNone when neither is there or `call` is not a Call. A positional argument after a `*splat`
  /// does not count (its position is unknown); the keyword is looked up then.
  int32_t argument(int32_t call, size_t position, std::string_view keyword = {}) const;
  /// The with items of with-statement `statement`, in order.
  std::span<const WithItem> withItemsOf(int32_t statement) const;
  /// Resolves a dotted name through the imports: "th.nn.functional.gelu" -> "torch.nn.functional.gelu"
  /// after `import torch as th`. A first component no import binds is kept as is.
  std::string resolve(std::string_view dotted) const;
};

}  // namespace kl::python
