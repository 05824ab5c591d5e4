; inherits: ecma
; JavaScript only: a class_heritage holds the base expression itself (TypeScript wraps it in
; extends_clause, see typescript.scm).
(class_declaration
  (class_heritage [(identifier) (member_expression) (call_expression)] @base)) @definition.class

(class
  (class_heritage [(identifier) (member_expression) (call_expression)] @base)) @definition.class
