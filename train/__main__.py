"""``python -m train {train,evaluate,plot}``: the ``caledonia`` CLI (all its commands)."""
import sys

from caledonia_env.cli import main

sys.exit(main())
