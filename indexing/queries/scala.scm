; Definitions
(class_definition
  name: (identifier) @name) @definition.class

(class_definition
  extend: (extends_clause [(type_identifier) (generic_type) (stable_type_identifier)] @base)) @definition.class

(object_definition
  name: (identifier) @name) @definition.object

(object_definition
  extend: (extends_clause [(type_identifier) (generic_type) (stable_type_identifier)] @base)) @definition.object

(trait_definition
  name: (identifier) @name) @definition.trait

(trait_definition
  extend: (extends_clause [(type_identifier) (generic_type) (stable_type_identifier)] @base)) @definition.trait

(enum_definition
  name: (identifier) @name) @definition.enum

(function_definition
  name: (identifier) @name) @definition.function

(function_declaration
  name: (identifier) @name) @definition.function

(type_definition
  name: (type_identifier) @name) @definition.type

; Calls
(call_expression
  function: (identifier) @callee) @call

(call_expression
  function: (field_expression
    value: (_) @receiver
    field: (identifier) @callee)) @call

(instance_expression
  (type_identifier) @callee) @call

; Imports (`@import.path`: the first path segment; the segments that follow it are joined to it)
(import_declaration
  . (identifier) @import.path
  .
  (namespace_wildcard)? @import.name) @import

(import_declaration
  . (identifier) @import.path
  (namespace_selectors
    [(identifier) @import.name
     (arrow_renamed_identifier name: (identifier) @import.name alias: (identifier) @import.alias)])) @import
