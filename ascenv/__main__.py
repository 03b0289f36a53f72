from ascenv.cli import main

raise SystemExit(main())
