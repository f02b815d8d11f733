; Call sites. Captures:
;   @call          the whole call expression (callee through the closing parenthesis)
;   @call.callee   the called expression ("self.attn", "torch.matmul", "f(x)" in f(x)(y))
(call function: (_) @call.callee) @call
