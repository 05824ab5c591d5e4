; Definitions
(class_declaration
  name: (identifier) @name) @definition.class

(class_declaration
  superclass: (superclass (_) @base)) @definition.class

(class_declaration
  interfaces: (super_interfaces (type_list (_) @base))) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

(interface_declaration
  name: (identifier) @name) @definition.interface

(interface_declaration
  (extends_interfaces (type_list (_) @base))) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(annotation_type_declaration
  name: (identifier) @name) @definition.interface

(method_declaration
  name: (identifier) @name) @definition.method

(constructor_declaration
  name: (identifier) @name) @definition.method

; Calls
(method_invocation
  !object
  name: (identifier) @callee) @call

(method_invocation
  object: (_) @receiver
  name: (identifier) @callee) @call

(object_creation_expression
  type: [(type_identifier) @callee
         (generic_type (type_identifier) @callee)
         (scoped_type_identifier (type_identifier) @callee .)]) @call

; Imports
(import_declaration
  (scoped_identifier
    scope: (_) @import.module
    name: (identifier) @import.name)
  .) @import

(import_declaration
  (scoped_identifier) @import.module
  (asterisk) @import.name) @import

; Receiver evidence (indexing/receivers.py): locals, parameters, fields
(local_variable_declaration
  type: (_) @local.type
  declarator: (variable_declarator name: (identifier) @local.name)) @local

(formal_parameter
  type: (_) @local.type
  name: (identifier) @local.name) @local

(field_declaration
  type: (_) @local.type
  declarator: (variable_declarator name: (identifier) @local.name)) @local.field
