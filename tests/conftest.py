"""Suite-wide setup: the CLI's trust store lives in a temporary folder, not the user's cache."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from agent_graph.bundles import TRUST_ENV

if TRUST_ENV not in os.environ:
    _folder = tempfile.mkdtemp(prefix="agc-trust-")
    os.environ[TRUST_ENV] = _folder  # inherited by every agc the tests start
    atexit.register(shutil.rmtree, _folder, True)
