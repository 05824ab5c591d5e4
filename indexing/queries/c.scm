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

(preproc_function_def
  name: (identifier) @name) @definition.function

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
