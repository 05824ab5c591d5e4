"""Navigation over the call graph for the front ends: the definitions a name means, callers, callees,
impact, references under a cursor, workspace symbols."""
