import sys

from kemu.cli import main

sys.exit(main())
