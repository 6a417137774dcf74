// Which language a GLUE type's script is written in (null: BEAN, no script). Pure: unit tested.
import type { GlueType } from '@/api/types'

export type GlueLanguageName = 'shell' | 'python' | 'javascript' | 'php' | 'powershell' | 'groovy'

const BY_TYPE: Record<GlueType, GlueLanguageName | null> = {
  BEAN: null,
  GLUE_SHELL: 'shell',
  GLUE_PYTHON: 'python',
  GLUE_NODEJS: 'javascript',
  GLUE_PHP: 'php',
  GLUE_POWERSHELL: 'powershell',
  GLUE_GROOVY: 'groovy',
}

export function glueLanguageName(glueType: GlueType | undefined): GlueLanguageName | null {
  return glueType ? (BY_TYPE[glueType] ?? null) : null
}

export function isGlueType(glueType: GlueType | undefined): boolean {
  return glueLanguageName(glueType) !== null
}

/** A script version's remark: 1 to 128 characters once trimmed (the API's rule). */
export function remarkProblem(remark: string): 'required' | 'tooLong' | null {
  const r = remark.trim()
  if (!r) return 'required'
  if (r.length > 128) return 'tooLong'
  return null
}
