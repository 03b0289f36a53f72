"""One module per subcommand: wire probe, core and output together, return an exit code."""
