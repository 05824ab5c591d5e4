; Definitions
(function_declaration
  name: (identifier) @name) @definition.function

(function_declaration
  name: (dot_index_expression
    table: (_) @scope.name
    field: (identifier) @name)) @definition.function

(function_declaration
  name: (method_index_expression
    table: (_) @scope.name
    method: (identifier) @name)) @definition.function

(variable_declaration
  (assignment_statement
    (variable_list name: (identifier) @name)
    (expression_list value: (function_definition)))) @definition.function

(assignment_statement
  (variable_list name: (dot_index_expression
    table: (_) @scope.name
    field: (identifier) @name))
  (expression_list value: (function_definition))) @definition.function

; A module field holding a table, at the top of the file (`M.defaults = { ... }`, `config.values = {}`):
; the module's data, named as Python's and Rust's module constants are ...
(chunk
  (assignment_statement
    (variable_list name: (dot_index_expression
      table: (_) @scope.name
      field: (identifier) @name))
    (expression_list value: (table_constructor))) @definition.constant)

; ... and an object's table field set in its methods (`self.fragments = {}` in `M.new`).
(assignment_statement
  (variable_list name: (dot_index_expression
    table: (identifier) @scope.name
    field: (identifier) @name))
  (expression_list value: (table_constructor))
  (#eq? @scope.name "self")) @definition.constant

; A function stored in a field of a named table (`M.handlers = { git = function(...) end }`,
; `local actions = { close = function ... }`): the table's name qualifies it (`M.handlers.git`).
(assignment_statement
  (variable_list name: (_) @scope.name)
  (expression_list value: (table_constructor
    (field
      name: (identifier) @name
      value: (function_definition)) @definition.function)))

; Calls
(function_call
  name: (identifier) @callee
  (#not-eq? @callee "require")) @call

(function_call
  name: (dot_index_expression
    table: (_) @receiver
    field: (identifier) @callee)) @call

(function_call
  name: (method_index_expression
    table: (_) @receiver
    method: (identifier) @callee)) @call

; Imports
(variable_declaration
  (assignment_statement
    (variable_list name: (identifier) @import.alias)
    (expression_list
      value: (function_call
        name: (identifier) @_req
        arguments: (arguments . (string content: (string_content) @import.module)))))
  (#eq? @_req "require")) @import

(function_call
  name: (identifier) @_req
  arguments: (arguments . (string content: (string_content) @import.module))
  (#eq? @_req "require")) @import
