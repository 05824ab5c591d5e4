; Definitions
(class
  name: [(constant) (scope_resolution)] @name) @definition.class

(class
  superclass: (superclass (_) @base)) @definition.class

(module
  name: [(constant) (scope_resolution)] @name) @definition.module

(method
  name: (_) @name) @definition.function

(singleton_method
  name: (_) @name) @definition.function

; Calls
(call
  !receiver
  method: (identifier) @callee
  (#not-match? @callee "^(require|require_relative|load)$")) @call

(call
  receiver: (_) @receiver
  method: (_) @callee) @call

; Imports
(call
  method: (identifier) @_req
  arguments: (argument_list . (string (string_content) @import.module))
  (#match? @_req "^(require|require_relative|load)$")) @import
