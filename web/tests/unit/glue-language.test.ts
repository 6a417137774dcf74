import { describe, expect, it } from 'vitest'
import { GLUE_TYPES } from '@/api/types'
import { glueLanguageName, isGlueType, remarkProblem } from '@/pages/jobs/script/glue-language-name'
import { loadGlueLanguage } from '@/pages/jobs/script/glue-language'

describe('GLUE languages', () => {
  it('maps every glue type', () => {
    expect(glueLanguageName('GLUE_SHELL')).toBe('shell')
    expect(glueLanguageName('GLUE_PYTHON')).toBe('python')
    expect(glueLanguageName('GLUE_NODEJS')).toBe('javascript')
    expect(glueLanguageName('GLUE_PHP')).toBe('php')
    expect(glueLanguageName('GLUE_POWERSHELL')).toBe('powershell')
    expect(glueLanguageName('GLUE_GROOVY')).toBe('groovy')
    expect(glueLanguageName('BEAN')).toBeNull()
    expect(glueLanguageName(undefined)).toBeNull()
    expect(isGlueType('BEAN')).toBe(false)
    expect(isGlueType('GLUE_SHELL')).toBe(true)
  })

  it('gives CodeMirror a language for every script type, none for BEAN', async () => {
    for (const g of GLUE_TYPES) {
      const ext = await loadGlueLanguage(g)
      if (g === 'BEAN') expect(ext).toEqual([])
      else expect(ext).toBeTruthy()
    }
  })

  it('checks a version remark like the API', () => {
    expect(remarkProblem('')).toBe('required')
    expect(remarkProblem('   ')).toBe('required')
    expect(remarkProblem('fix')).toBeNull()
    expect(remarkProblem('x'.repeat(128))).toBeNull()
    expect(remarkProblem('x'.repeat(129))).toBe('tooLong')
  })
})
