; Candidate NVTX ranges, filtered by spelling here; the callee is resolved through the
; file's imports in C++ (core/python/model_builder.cpp) before it counts. Captures:
;   @nvtx.api        the called / decorating expression ("torch.cuda.nvtx.range", "nvtx.annotate")
;   @nvtx.call       the call, when there is one (absent for a bare `@nvtx.annotate`)
;   @nvtx.with       with-statement;  @nvtx.clause its with_clause;  @nvtx.item the with_item
;   @nvtx.decorated  decorated definition;  @nvtx.decorator the decorator;  @nvtx.definition the def
;   @nvtx.statement  an expression statement that is a push or pop call

; with <api>(...) [as x]:
((with_statement
   (with_clause
     (with_item
       value: [(call function: (_) @nvtx.api) @nvtx.call
               (as_pattern (call function: (_) @nvtx.api) @nvtx.call)]) @nvtx.item) @nvtx.clause) @nvtx.with
 (#match? @nvtx.api "(^|\\W)(range|annotate)$"))

; @<api>(...) and bare @<api>
((decorated_definition
   (decorator [(call function: (_) @nvtx.api) @nvtx.call
               (attribute) @nvtx.api
               (identifier) @nvtx.api]) @nvtx.decorator
   definition: (_) @nvtx.definition) @nvtx.decorated
 (#match? @nvtx.api "(^|\\W)(range|annotate)$"))

; <push>(...) / <pop>() as statements
((expression_statement (call function: (_) @nvtx.api) @nvtx.call) @nvtx.statement
 (#match? @nvtx.api "(^|\\W)(range_push|push_range|range_pop|pop_range)$"))
