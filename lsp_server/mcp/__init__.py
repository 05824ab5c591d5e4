"""`codeseek mcp`: the Model Context Protocol front end (the stdio server and its engine side)."""
