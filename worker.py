"""`python worker.py` is `wiki worker`: the deployment entry point of a worker process."""

from cli.main import main

if __name__ == "__main__":
    import sys

    sys.argv[1:] = ["worker"]
    main()
