"""`python -m lsp_server.cli ...`: the `codeseek` console script (editors start the server this way)."""

import sys

from lsp_server.cli.main import main

sys.exit(main())
