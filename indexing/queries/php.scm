; Definitions
(class_declaration
  name: (name) @name) @definition.class

(class_declaration
  (base_clause (_) @base)) @definition.class

(class_declaration
  (class_interface_clause (_) @base)) @definition.class

(interface_declaration
  name: (name) @name) @definition.interface

(trait_declaration
  name: (name) @name) @definition.trait

(enum_declaration
  name: (name) @name) @definition.enum

(function_definition
  name: (name) @name) @definition.function

(method_declaration
  name: (name) @name) @definition.method

; Calls
(function_call_expression
  function: [(name) (qualified_name)] @callee) @call

(member_call_expression
  object: (_) @receiver
  name: (name) @callee) @call

(nullsafe_member_call_expression
  object: (_) @receiver
  name: (name) @callee) @call

(scoped_call_expression
  scope: (_) @receiver
  name: (name) @callee) @call

(object_creation_expression
  [(name) (qualified_name)] @callee) @call

; Imports
(namespace_use_declaration
  (namespace_use_clause
    .
    [(qualified_name) (name)] @import.module
    alias: (name)? @import.alias)) @import
