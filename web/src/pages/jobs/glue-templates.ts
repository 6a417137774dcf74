// The first version of a new GLUE job's script: a runnable example in its language.
import type { GlueType } from '@/api/types'

export const GLUE_TEMPLATES: Partial<Record<GlueType, string>> = {
  GLUE_SHELL: '#!/bin/bash\necho "cronwheel: start"\necho "params: $1"\necho "shard: $2 of $3"\nexit 0\n',
  GLUE_PYTHON: '#!/usr/bin/env python3\nimport sys\n\nprint("cronwheel: start")\nprint("params:", sys.argv[1] if len(sys.argv) > 1 else "")\nsys.exit(0)\n',
  GLUE_NODEJS: '#!/usr/bin/env node\nconsole.log("cronwheel: start")\nconsole.log("params:", process.argv[2] ?? "")\nprocess.exit(0)\n',
  GLUE_PHP: '<?php\necho "cronwheel: start\\n";\necho "params: " . ($argv[1] ?? "") . "\\n";\nexit(0);\n',
  GLUE_POWERSHELL: 'Write-Host "cronwheel: start"\nWrite-Host "params: $($args[0])"\nexit 0\n',
}
