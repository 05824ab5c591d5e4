; Shared by c and cpp: patterns valid in both grammars. Not a grammar itself: other files pull it
; in with `; inherits: c_family` (c.scm adds function-like macros, which C++ does not index).

; Definitions
(function_definition
  declarator: (function_declarator
    declarator: (identifier) @name)) @definition.function

(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (identifier) @name))) @definition.function

(struct_specifier
  name: (type_identifier) @name
  body: (field_declaration_list)) @definition.struct

(union_specifier
  name: (type_identifier) @name
  body: (field_declaration_list)) @definition.struct

(enum_specifier
  name: (type_identifier) @name
  body: (enumerator_list)) @definition.enum

(type_definition
  declarator: (type_identifier) @name) @definition.type

; Calls
(call_expression
  function: (identifier) @callee) @call

(call_expression
  function: (field_expression
    argument: (_) @receiver
    field: (field_identifier) @callee)) @call

; Imports
(preproc_include
  path: [(string_literal) (system_lib_string)] @import.module) @import
