"""Observer for agc mcp serve: prints the publication Fact once a report is published.

Run in the Run's workspace; it looks only, and prints ``{}`` when nothing is there (the
server then removes a stale ``publication`` Fact).
"""

import json
import os

found = sorted(os.listdir("published")) if os.path.isdir("published") else []
print(json.dumps({"publication": {"url": f"published/{found[-1]}"}} if found else {}))
