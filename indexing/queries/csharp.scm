; Definitions
(class_declaration
  name: (identifier) @name) @definition.class

(class_declaration
  (base_list (_) @base)) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

(struct_declaration
  name: (identifier) @name) @definition.struct

(struct_declaration
  (base_list (_) @base)) @definition.struct

(interface_declaration
  name: (identifier) @name) @definition.interface

(interface_declaration
  (base_list (_) @base)) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(method_declaration
  name: (identifier) @name) @definition.method

(constructor_declaration
  name: (identifier) @name) @definition.method

(local_function_statement
  name: (identifier) @name) @definition.function

(delegate_declaration
  name: (identifier) @name) @definition.type

; Calls
(invocation_expression
  function: (identifier) @callee) @call

(invocation_expression
  function: (member_access_expression
    expression: _ @receiver
    name: (identifier) @callee)) @call

(invocation_expression
  function: (generic_name (identifier) @callee)) @call

(invocation_expression
  function: (member_access_expression
    expression: _ @receiver
    name: (generic_name (identifier) @callee))) @call

(object_creation_expression
  type: [(identifier) @callee (generic_name (identifier) @callee)]) @call

; Imports
(using_directive
  !name
  [(identifier) (qualified_name)] @import.module) @import

(using_directive
  name: (identifier) @import.alias
  [(identifier) (qualified_name)] @import.module) @import
