; Definitions
(function_definition
  name: (word) @name) @definition.function

; Calls: every command is a call of its name
(command
  name: (command_name (word) @callee)
  (#not-match? @callee "^(source|\\.)$")) @call

; Imports: `source file` and `. file`
(command
  name: (command_name (word) @_src)
  argument: [(word) (string) (raw_string) (concatenation)] @import.module
  (#match? @_src "^(source|\\.)$")) @import
