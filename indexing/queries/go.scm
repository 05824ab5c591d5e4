; Definitions
(function_declaration
  name: (identifier) @name) @definition.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [(type_identifier) @scope.name
             (pointer_type (type_identifier) @scope.name)
             (generic_type type: (type_identifier) @scope.name)
             (pointer_type (generic_type type: (type_identifier) @scope.name))]))
  name: (field_identifier) @name) @definition.method

(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (struct_type))) @definition.struct

(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (interface_type))) @definition.interface

(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: [(type_identifier) (qualified_type) (function_type) (map_type) (slice_type)
           (array_type) (channel_type) (pointer_type) (generic_type)])) @definition.type

(type_declaration
  (type_spec
    type: (struct_type
      (field_declaration_list
        (field_declaration
          !name
          type: [(type_identifier) (qualified_type) (pointer_type)] @base))))) @definition.struct

(type_declaration
  (type_spec
    type: (interface_type
      (type_elem [(type_identifier) (qualified_type)] @base)))) @definition.interface

(method_elem
  name: (field_identifier) @name) @definition.method

; Calls
(call_expression
  function: (identifier) @callee) @call

(call_expression
  function: (selector_expression
    operand: (_) @receiver
    field: (field_identifier) @callee)) @call

; Imports
(import_spec
  name: (_)? @import.alias
  path: (interpreted_string_literal) @import.module) @import

; Receiver evidence (indexing/receivers.py): locals, parameters, struct fields
(short_var_declaration
  left: (expression_list . (identifier) @local.name)
  right: (expression_list . (_) @local.value)) @local

(var_spec
  name: (identifier) @local.name
  type: (_) @local.type) @local

(var_spec
  name: (identifier) @local.name
  value: (expression_list . (_) @local.value)) @local

(parameter_declaration
  name: (identifier) @local.name
  type: (_) @local.type) @local

(field_declaration
  name: (field_identifier) @local.name
  type: (_) @local.type) @local.field
