"""`python -m mockmcp` runs the command line."""

from mockmcp.cli.launch import main

raise SystemExit(main())
