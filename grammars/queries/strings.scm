; String literals (f-strings included; nested strings inside interpolations match too).
;   @string   one string literal (a part of an implicit concatenation is its own match)
(string) @string
