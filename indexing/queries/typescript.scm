; inherits: ecma
; TypeScript only (tsx inherits this file): abstract classes, heritage clauses, interfaces, type
; aliases, enums, namespaces and signatures.
(abstract_class_declaration
  name: (_) @name) @definition.class

(class_declaration
  (class_heritage (extends_clause value: (_) @base))) @definition.class

(class_declaration
  (class_heritage (implements_clause (_) @base))) @definition.class

(abstract_class_declaration
  (class_heritage (extends_clause value: (_) @base))) @definition.class

(abstract_class_declaration
  (class_heritage (implements_clause (_) @base))) @definition.class

(class
  (class_heritage (extends_clause value: (_) @base))) @definition.class

(class
  (class_heritage (implements_clause (_) @base))) @definition.class

(interface_declaration
  name: (_) @name) @definition.interface

(interface_declaration
  (extends_type_clause (_) @base)) @definition.interface

(type_alias_declaration
  name: (_) @name) @definition.type

(enum_declaration
  name: (_) @name) @definition.enum

(internal_module
  name: (_) @name) @definition.module

(abstract_method_signature
  name: (_) @name) @definition.method

(method_signature
  name: (_) @name) @definition.method

(function_signature
  name: (_) @name) @definition.function

; Receiver evidence: annotated parameters, variables and fields
(required_parameter
  pattern: (identifier) @local.name
  type: (type_annotation (_) @local.type)) @local

(optional_parameter
  pattern: (identifier) @local.name
  type: (type_annotation (_) @local.type)) @local

(variable_declarator
  name: (identifier) @local.name
  type: (type_annotation (_) @local.type)) @local

(public_field_definition
  name: (property_identifier) @local.name
  type: (type_annotation (_) @local.type)) @local.field

(required_parameter pattern: (identifier) @local.name) @local

(optional_parameter pattern: (identifier) @local.name) @local
