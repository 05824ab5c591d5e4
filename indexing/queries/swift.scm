; Definitions
(class_declaration
  declaration_kind: ["class" "actor"]
  name: (type_identifier) @name) @definition.class

(class_declaration
  declaration_kind: "struct"
  name: (type_identifier) @name) @definition.struct

(class_declaration
  declaration_kind: "enum"
  name: (type_identifier) @name) @definition.enum

(class_declaration
  declaration_kind: ["class" "actor" "struct" "enum"]
  (inheritance_specifier inherits_from: (_) @base)) @definition.class

; `extension Foo` qualifies the functions inside it.
(class_declaration
  declaration_kind: "extension"
  name: (user_type (type_identifier) @name)) @scope

(protocol_declaration
  name: (type_identifier) @name) @definition.interface

(protocol_declaration
  (inheritance_specifier inherits_from: (_) @base)) @definition.interface

(function_declaration
  name: (simple_identifier) @name) @definition.function

(protocol_function_declaration
  name: (simple_identifier) @name) @definition.function

(init_declaration
  "init" @name) @definition.function

(typealias_declaration
  name: (type_identifier) @name) @definition.type

; Calls
(call_expression
  (simple_identifier) @callee) @call

(call_expression
  (navigation_expression
    target: (_) @receiver
    suffix: (navigation_suffix suffix: (simple_identifier) @callee))) @call

; Imports
(import_declaration
  (identifier) @import.module) @import
