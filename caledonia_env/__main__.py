import sys

from .cli import main

if __name__ == "__main__":      # worker processes (spawn / forkserver) import this module
    sys.exit(main())
