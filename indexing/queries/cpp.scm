; inherits: c_family
; C++ only: methods, operators, destructors and qualified definitions, references, classes and
; bases, aliases, qualified and template calls, using declarations.

; Definitions
(function_definition
  declarator: (function_declarator
    declarator: [(field_identifier) (operator_name) (destructor_name)] @name)) @definition.function

(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      scope: (_) @scope.name
      name: [(identifier) (operator_name) (destructor_name)] @name))) @definition.function

(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (field_identifier) @name))) @definition.function

(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: [(identifier) (field_identifier)] @name))) @definition.function

(class_specifier
  name: (type_identifier) @name
  body: (field_declaration_list)) @definition.class

(class_specifier
  (base_class_clause [(type_identifier) (qualified_identifier) (template_type)] @base)) @definition.class

(struct_specifier
  (base_class_clause [(type_identifier) (qualified_identifier) (template_type)] @base)) @definition.struct

(alias_declaration
  name: (type_identifier) @name) @definition.type

(field_declaration
  declarator: (function_declarator
    declarator: [(field_identifier) (identifier) (operator_name) (destructor_name)] @name)) @definition.method

; Calls
(call_expression
  function: (qualified_identifier
    scope: (_) @receiver
    name: (identifier) @callee)) @call

(call_expression
  function: (template_function
    name: (identifier) @callee)) @call

; Imports
(using_declaration
  (qualified_identifier) @import.module) @import
