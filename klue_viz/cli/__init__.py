"""The command line (`klue-viz ...`): `main` assembles the parser and runs each command from its table; one module per
command group (`evaluate`, `report`, `annotations`, `discovery`, `compare`, `gold`, `runs`, `probes`), each with
`add_commands(subparsers)` and its handlers; `common` holds what the groups share. A group imports `common`, never
`main` or another group.
May import: every floor but ui.
"""
