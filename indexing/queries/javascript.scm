; inherits: ecma
; JavaScript only: a class_heritage holds the base expression itself (TypeScript wraps it in
; extends_clause, see typescript.scm).
(class_declaration
  (class_heritage [(identifier) (member_expression) (call_expression)] @base)) @definition.class

(class
  (class_heritage [(identifier) (member_expression) (call_expression)] @base)) @definition.class

; Parameters are local names (a bare call of one is not a call of a definition)

(formal_parameters (identifier) @local.name) @local

(formal_parameters (assignment_pattern left: (identifier) @local.name)) @local
