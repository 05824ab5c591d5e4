; Definitions
(function_item
  name: (identifier) @name) @definition.function

(function_signature_item
  name: (identifier) @name) @definition.function

(struct_item
  name: (type_identifier) @name) @definition.struct

(union_item
  name: (type_identifier) @name) @definition.struct

(enum_item
  name: (type_identifier) @name) @definition.enum

(trait_item
  name: (type_identifier) @name) @definition.trait

(trait_item
  bounds: (trait_bounds (_) @base)) @definition.trait

(type_item
  name: (type_identifier) @name) @definition.type

(mod_item
  name: (identifier) @name) @definition.module

(const_item
  name: (identifier) @name) @definition.constant

(static_item
  name: (identifier) @name) @definition.constant

(macro_definition
  name: (identifier) @name) @definition.function

; `impl Type` and `impl Trait for Type` qualify the functions inside them.
(impl_item
  type: [(type_identifier) @name
         (generic_type type: (type_identifier) @name)
         (scoped_type_identifier name: (type_identifier) @name)]) @scope

; Calls
(call_expression
  function: (identifier) @callee) @call

(call_expression
  function: (field_expression
    value: (_) @receiver
    field: (field_identifier) @callee)) @call

(call_expression
  function: (scoped_identifier
    path: (_) @receiver
    name: (identifier) @callee)) @call

(call_expression
  function: (generic_function
    function: [(identifier) @callee
               (field_expression value: (_) @receiver field: (field_identifier) @callee)
               (scoped_identifier path: (_) @receiver name: (identifier) @callee)])) @call

(macro_invocation
  macro: (identifier) @callee) @call

; Imports
(use_declaration
  argument: (scoped_identifier
    path: (_) @import.module
    name: (identifier) @import.name)) @import

(use_declaration
  argument: (identifier) @import.module) @import

(use_declaration
  argument: (use_as_clause
    path: (scoped_identifier path: (_) @import.module name: (identifier) @import.name)
    alias: (identifier) @import.alias)) @import

(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list
      [(identifier) @import.name
       (self) @import.name
       (use_as_clause path: (identifier) @import.name alias: (identifier) @import.alias)]))) @import

(use_declaration
  argument: (use_wildcard (_) @import.module)) @import

; Receiver evidence (indexing/receivers.py): let bindings, parameters, struct fields
(let_declaration
  pattern: (identifier) @local.name
  type: (_) @local.type) @local

(let_declaration
  pattern: (identifier) @local.name
  value: (_) @local.value) @local

(parameter
  pattern: (identifier) @local.name
  type: (_) @local.type) @local

(field_declaration
  name: (field_identifier) @local.name
  type: (_) @local.type) @local.field
