; Haskell (tree-sitter-haskell). The module header (with its doc comment: what the file is for), top-level functions and bindings, type declarations, type classes
; with their method signatures and default methods; instance bodies qualify their methods by the
; class name (a scope, like a Rust `impl`) without defining it again. A function written as several
; equations matches once per equation; `indexing.symbols` keeps the first (`merge_equations`).

; Definitions
(header
  module: (module) @name) @definition.module

(declarations
  (function name: (variable) @name) @definition.function)

(declarations
  (bind name: (variable) @name) @definition.function)

(declarations
  (data_type name: (name) @name) @definition.type)

(declarations
  (newtype name: (name) @name) @definition.type)

(declarations
  (type_synomym name: (name) @name) @definition.type)

(declarations
  (type_family name: (name) @name) @definition.type)

(declarations
  (class name: (name) @name) @definition.class)

(class_declarations
  (signature name: (variable) @name) @definition.method)

(class_declarations
  (function name: (variable) @name) @definition.method)

(class_declarations
  (bind name: (variable) @name) @definition.method)

(instance_declarations
  (function name: (variable) @name) @definition.method)

(instance_declarations
  (bind name: (variable) @name) @definition.method)

(instance
  name: (name) @name) @scope

; Calls (an application's innermost function: `f a b` is `(f a) b`)
(apply
  function: (variable) @callee) @call

(apply
  function: (qualified
    module: (module) @receiver
    id: (variable) @callee)) @call

(infix
  operator: (infix_id (variable) @callee)) @call

; Imports
(import
  module: (module) @import.module
  alias: (module) @import.alias) @import

(import
  module: (module) @import.module
  names: (import_list (import_name (variable) @import.name))) @import

(import
  module: (module) @import.module) @import
