import { describe, expect, it } from 'vitest'
import { messages } from '@/i18n'

type Tree = { [key: string]: unknown }

/** Every leaf key of a message tree, as dotted paths. */
function leafKeys(tree: Tree, prefix = ''): string[] {
  const out: string[] = []
  for (const [k, v] of Object.entries(tree)) {
    const path = prefix ? `${prefix}.${k}` : k
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) out.push(...leafKeys(v as Tree, path))
    else out.push(path)
  }
  return out.sort()
}

function leafValues(tree: Tree): [string, unknown][] {
  const out: [string, unknown][] = []
  const walk = (t: Tree, prefix: string) => {
    for (const [k, v] of Object.entries(t)) {
      const path = prefix ? `${prefix}.${k}` : k
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) walk(v as Tree, path)
      else out.push([path, v])
    }
  }
  walk(tree, '')
  return out
}

/** The names of {placeholders} in a message. */
function placeholders(message: string): string[] {
  return [...message.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).sort()
}

describe('i18n messages', () => {
  const en = messages.en as unknown as Tree
  const zh = messages['zh-CN'] as unknown as Tree

  it('has the same keys in English and Simplified Chinese', () => {
    const enKeys = leafKeys(en)
    const zhKeys = leafKeys(zh)
    expect(zhKeys.filter((k) => !enKeys.includes(k)), 'keys only in zh-CN').toEqual([])
    expect(enKeys.filter((k) => !zhKeys.includes(k)), 'keys missing from zh-CN').toEqual([])
    expect(enKeys.length).toBeGreaterThan(50)
  })

  it('has a non-empty string for every key in every language', () => {
    for (const tree of [en, zh]) {
      for (const [path, value] of leafValues(tree)) {
        expect(typeof value, path).toBe('string')
        expect((value as string).trim(), path).not.toBe('')
      }
    }
  })

  it('uses the same placeholders in both languages', () => {
    const zhValues = new Map(leafValues(zh))
    for (const [path, value] of leafValues(en)) {
      expect(placeholders(zhValues.get(path) as string), path).toEqual(placeholders(value as string))
    }
  })

  it('has no unescaped vue-i18n special characters', () => {
    // "@" starts a linked message and "|" separates plural forms in vue-i18n's syntax.
    for (const tree of [en, zh]) {
      for (const [path, value] of leafValues(tree)) {
        expect(value as string, path).not.toMatch(/@|\|/)
      }
    }
  })
})
