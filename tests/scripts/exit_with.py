"""Exits with the status given as argv[1], or raises when it is 'raise'."""
import sys

print("running", sys.argv[1:])
if sys.argv[1] == "raise":
    raise ValueError("boom from the script")
sys.exit(int(sys.argv[1]))
