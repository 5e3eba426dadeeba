"""Puts tools/ on sys.path so that tests can read the op table with the generator's own reader."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
