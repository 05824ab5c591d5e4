; Definitions
(class_definition
  name: (identifier) @name) @definition.class

(class_definition
  superclasses: (argument_list [(identifier) (attribute) (subscript)] @base)) @definition.class

(function_definition
  name: (identifier) @name) @definition.function

; Module-level constants: UPPER_CASE = ...
(module
  (assignment
    left: (identifier) @name
    (#match? @name "^[A-Z][A-Z0-9_]+$")) @definition.constant)

; Calls
(call
  function: (identifier) @callee) @call

(call
  function: (attribute
    object: (_) @receiver
    attribute: (identifier) @callee)) @call

; Imports
(import_statement
  name: (dotted_name) @import.module) @import

(import_statement
  name: (aliased_import
    name: (dotted_name) @import.module
    alias: (identifier) @import.alias)) @import

(import_from_statement
  module_name: (_) @import.module
  name: (dotted_name) @import.name) @import

(import_from_statement
  module_name: (_) @import.module
  name: (aliased_import
    name: (dotted_name) @import.name
    alias: (identifier) @import.alias)) @import

(import_from_statement
  module_name: (_) @import.module
  (wildcard_import) @import.name) @import

; Receiver evidence (indexing/receivers.py): local assignments, annotations, self fields
(assignment
  left: [(identifier) (attribute object: (identifier) attribute: (identifier))] @local.name
  right: (_) @local.value) @local

(assignment
  left: (identifier) @local.name
  type: (type) @local.type) @local

(typed_parameter
  (identifier) @local.name
  type: (type) @local.type) @local

(typed_default_parameter
  name: (identifier) @local.name
  type: (type) @local.type) @local

(default_parameter
  name: (identifier) @local.name
  value: [(dictionary) (list) (string)] @local.value) @local

(parameters (identifier) @local.name) @local

(default_parameter name: (identifier) @local.name) @local

(subscript
  value: (identifier) @local.name
  subscript: (string)) @local.dictuse
