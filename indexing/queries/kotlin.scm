; Definitions (a specific kind such as interface wins over the generic class pattern)
(class_declaration
  "interface"
  (type_identifier) @name) @definition.interface

(class_declaration
  (type_identifier) @name) @definition.class

(class_declaration
  (delegation_specifier
    [(user_type) @base
     (constructor_invocation (user_type) @base)])) @definition.class

(object_declaration
  (type_identifier) @name) @definition.object

(object_declaration
  (delegation_specifier
    [(user_type) @base
     (constructor_invocation (user_type) @base)])) @definition.object

(function_declaration
  (simple_identifier) @name) @definition.function

(type_alias
  (type_identifier) @name) @definition.type

; Calls
(call_expression
  (simple_identifier) @callee) @call

(call_expression
  (navigation_expression
    (_) @receiver
    (navigation_suffix (simple_identifier) @callee))) @call

; Imports
(import_header
  (identifier) @import.module
  (import_alias (type_identifier) @import.alias)?) @import
