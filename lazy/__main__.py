"""`python -m lazy script.py [args]`: see lazy/runner.py."""
import sys

from .runner import main

sys.exit(main(sys.argv[1:]))
