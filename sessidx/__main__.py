from sessidx.cli import main

raise SystemExit(main())
