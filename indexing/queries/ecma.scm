; Shared by javascript and typescript (and tsx through typescript): patterns valid in every
; ECMAScript grammar. Not a grammar itself: other files pull it in with `; inherits: ecma`.

; Definitions
(class_declaration
  name: (_) @name) @definition.class

(class
  name: (_) @name) @definition.class

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(method_definition
  name: (_) @name) @definition.method

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: (class))) @definition.class

(expression_statement
  (assignment_expression
    left: (member_expression
      object: (_) @scope.name
      property: (property_identifier) @name)
    right: [(arrow_function) (function_expression)])) @definition.function

(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function

; `var proto = module.exports = function(options) {}`: `proto` and `module.exports`
(variable_declarator
  name: (identifier) @name
  value: (assignment_expression
    right: [(arrow_function) (function_expression)])) @definition.function

(variable_declarator
  value: (assignment_expression
    left: (member_expression
      object: (_) @scope.name
      property: (property_identifier) @name)
    right: [(arrow_function) (function_expression)]) @definition.function)

; `res.set = res.header = function header() {}`: both names are definitions
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (_) @scope.name
      property: (property_identifier) @name)
    right: (assignment_expression
      right: [(arrow_function) (function_expression)]))) @definition.function

(assignment_expression
  right: (assignment_expression
    left: (member_expression
      object: (_) @scope.name
      property: (property_identifier) @name)
    right: [(arrow_function) (function_expression)]) @definition.function)

; Calls
(call_expression
  function: (identifier) @callee) @call

(call_expression
  function: (member_expression
    object: (_) @receiver
    property: (property_identifier) @callee)) @call

(new_expression
  constructor: (identifier) @callee) @call

; Imports
(import_statement
  (import_clause (identifier) @import.alias @import.default)
  source: (string (string_fragment) @import.module)) @import

(import_statement
  (import_clause (namespace_import (identifier) @import.alias))
  source: (string (string_fragment) @import.module)) @import

(import_statement
  (import_clause
    (named_imports
      (import_specifier
        name: (_) @import.name
        alias: (_)? @import.alias)))
  source: (string (string_fragment) @import.module)) @import

(import_statement
  "import" .
  source: (string (string_fragment) @import.module)) @import

(variable_declarator
  name: (identifier) @import.alias
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @import.module)))
  (#eq? @_require "require")) @import

; `var compileETag = require('./utils').compileETag`
(variable_declarator
  name: (identifier) @import.alias
  value: (member_expression
    object: (call_expression
      function: (identifier) @_require
      arguments: (arguments . (string (string_fragment) @import.module)))
    property: (property_identifier) @import.name)
  (#eq? @_require "require")) @import

; Re-exports: `export * from './x'`, `export { a, b as c } from './x'`
(export_statement
  "*" @import.name
  source: (string (string_fragment) @import.module)) @import

(export_statement
  (export_clause
    (export_specifier
      name: (_) @import.name
      alias: (_)? @import.alias))
  source: (string (string_fragment) @import.module)) @import

(variable_declarator
  name: (object_pattern
    [(shorthand_property_identifier_pattern) @import.name
     (pair_pattern key: (property_identifier) @import.name value: (identifier) @import.alias)])
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @import.module)))
  (#eq? @_require "require")) @import

; Receiver evidence (indexing/receivers.py): local values, `this.x = ...` fields
(variable_declarator
  name: (identifier) @local.name
  value: (_) @local.value) @local

(assignment_expression
  left: [(identifier) (member_expression object: (this) property: (property_identifier))] @local.name
  right: (_) @local.value) @local
