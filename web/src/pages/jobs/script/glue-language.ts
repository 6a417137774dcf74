// The CodeMirror language of each GLUE type, each loaded on demand: the editor route carries
// CodeMirror itself, and a PHP script (which brings HTML, CSS and JavaScript) costs nothing to a
// shell one.
import type { Extension } from '@codemirror/state'
import { StreamLanguage } from '@codemirror/language'
import type { GlueType } from '@/api/types'
import { glueLanguageName } from './glue-language-name'

export async function loadGlueLanguage(glueType: GlueType | undefined): Promise<Extension> {
  switch (glueLanguageName(glueType)) {
    case 'shell': {
      const { shell } = await import('@codemirror/legacy-modes/mode/shell')
      return StreamLanguage.define(shell)
    }
    case 'python':
      return (await import('@codemirror/lang-python')).python()
    case 'javascript':
      return (await import('@codemirror/lang-javascript')).javascript()
    case 'php':
      // The script is a whole PHP file: "<?php" first, HTML around it allowed.
      return (await import('@codemirror/lang-php')).php({ plain: false })
    case 'powershell': {
      const { powerShell } = await import('@codemirror/legacy-modes/mode/powershell')
      return StreamLanguage.define(powerShell)
    }
    case 'groovy': {
      const { groovy } = await import('@codemirror/legacy-modes/mode/groovy')
      return StreamLanguage.define(groovy)
    }
    default:
      return []
  }
}
