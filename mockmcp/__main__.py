"""`python -m mockmcp` runs the command line."""

from mockmcp.cli import main

main()
