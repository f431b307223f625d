import sys

from replication.cli import main

sys.exit(main())
