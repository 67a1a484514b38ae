import sys

from caledonia_env.cli import main

if __name__ == "__main__":      # worker processes (spawn / forkserver) import this module
    sys.exit(main())
