; inherits: c_family
; C only: function-like macros are definitions.
(preproc_function_def
  name: (identifier) @name) @definition.function
