"""Shared pytest set-up: tests/ is on sys.path so every test folder can import the helpers
here (`t2t_model_testing`), and test modules are imported by path (pytest's importlib
mode), so two folders may hold test files of the same name."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
