"""``python -m agent_graph`` runs the ``agc`` command line."""

from .cli import run

run()
