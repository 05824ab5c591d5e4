; Zig (tree-sitter-zig as packaged: PEG-named nodes). `pub` is a sibling token before `Decl`.
; Definitions: functions, and containers bound to a name (`const Foo = struct { ... };`); their
; functions are qualified by the container (`Foo.init`). Other top-level and container-level
; `const` / `var` declarations are constants (`pub const mem = @import("mem.zig");`).
(Decl
  (FnProto "fn" . (IDENTIFIER) @name)) @definition.function

(Decl
  (VarDecl
    (IDENTIFIER) @name
    (ErrorUnionExpr
      (SuffixExpr
        (ContainerDecl
          (ContainerDeclType ["struct" "union" "opaque"])))))) @definition.struct

(Decl
  (VarDecl
    (IDENTIFIER) @name
    (ErrorUnionExpr
      (SuffixExpr
        (ContainerDecl
          (ContainerDeclType "enum")))))) @definition.enum

(Decl
  (VarDecl
    (IDENTIFIER) @name
    (ErrorUnionExpr
      (SuffixExpr
        (ErrorSetDecl))))) @definition.enum

(Decl
  (VarDecl
    (IDENTIFIER) @name)) @definition.constant

; Calls: `f(x)`, `a.b.f(x)` (the callee is the name before the argument list).
(SuffixExpr
  (IDENTIFIER) @callee
  .
  (FnCallArguments)) @call

(FieldOrFnCall
  (IDENTIFIER) @callee
  (FnCallArguments)) @call
