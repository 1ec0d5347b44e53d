import sys

from bench.run import main

raise SystemExit(main(sys.argv[1:]))
