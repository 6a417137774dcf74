#!/usr/bin/env node
// Fails when a package locked in package-lock.json declares an `engines.node` range that
// excludes one of the Node.js versions the console must build with: Debian 12's (18.19.0)
// and the current LTS line the project uses (20.11.0).
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import semver from 'semver'

export const REQUIRED_NODE_VERSIONS = ['18.19.0', '20.11.0']

/** Packages of a lockfile (v2/v3) whose engines.node excludes one of `versions`. */
export function incompatiblePackages(lock, versions = REQUIRED_NODE_VERSIONS) {
  const bad = []
  for (const [path, meta] of Object.entries(lock.packages ?? {})) {
    if (path === '') continue // the console itself
    const range = meta?.engines?.node
    if (typeof range !== 'string' || range.trim() === '') continue
    const excluded = versions.filter((v) => !semver.satisfies(v, range, { includePrerelease: true }))
    if (excluded.length > 0) {
      const name = meta.name ?? path.replace(/^.*node_modules\//, '')
      bad.push({ name, version: meta.version, range, excluded, optional: Boolean(meta.optional) })
    }
  }
  return bad
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]
if (isMain) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..')
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'))
  const bad = incompatiblePackages(lock)
  const count = Object.keys(lock.packages ?? {}).length - 1
  if (bad.length > 0) {
    console.error(`check-engines: ${bad.length} locked package(s) do not support Node ${REQUIRED_NODE_VERSIONS.join(' and ')}:`)
    for (const b of bad) {
      console.error(`  ${b.name}@${b.version}: engines.node "${b.range}" excludes ${b.excluded.join(', ')}${b.optional ? ' (optional)' : ''}`)
    }
    process.exit(1)
  }
  console.log(`check-engines: all ${count} locked packages support Node ${REQUIRED_NODE_VERSIONS.join(' and ')}`)
}
