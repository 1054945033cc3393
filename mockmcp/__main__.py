"""`python -m mockmcp` runs the command line."""

from mockmcp.cli.app import main

main()
