import { describe, expect, it } from 'vitest'
import { hasSide, isLong, mebibytes, planRows, valueText, type ApplyPlan } from '@/pages/groups/apply-plan'

const plan: ApplyPlan = {
  dryRun: true,
  changed: true,
  groups: [{ appName: 'billing', action: 'unchanged', changes: [] }],
  jobs: [
    { appName: 'billing', name: 'nightly', action: 'update', changes: [{ field: 'scheduleConf', from: '0 0 2 * * ?', to: '0 0 3 * * ?' }] },
    { appName: 'billing', name: 'reconcile', action: 'create', changes: [{ field: 'jobDesc', to: 'Reconcile' }] },
    { appName: 'billing', name: 'old', action: 'delete', changes: [{ field: 'jobDesc', from: 'Old' }] },
  ],
  users: [{ username: 'ops', action: 'create', changes: [] }],
  summary: { create: 2, update: 1, unchanged: 1, delete: 1 },
}

describe('planRows', () => {
  it('lists the groups, then the jobs as appName/name, then the users, each in the server’s order with its action', () => {
    expect(planRows(plan).map((r) => [r.kind, r.key, r.action])).toEqual([
      ['group', 'billing', 'unchanged'],
      ['job', 'billing/nightly', 'update'],
      ['job', 'billing/reconcile', 'create'],
      ['job', 'billing/old', 'delete'],
      ['user', 'ops', 'create'],
    ])
  })

  it('keeps the changed fields of an update only', () => {
    const rows = planRows(plan)
    expect(rows[1]!.changes).toEqual([{ field: 'scheduleConf', from: '0 0 2 * * ?', to: '0 0 3 * * ?' }])
    expect(rows[2]!.changes).toEqual([])
    expect(rows[3]!.changes).toEqual([])
  })
})

describe('workflows in a plan', () => {
  it('come after the jobs as appName/name', () => {
    const withWorkflows: ApplyPlan = {
      ...plan,
      workflows: [
        { appName: 'billing', name: 'etl', action: 'update', changes: [{ field: 'nodes[load]', from: null, to: {} }] },
        { appName: 'billing', name: 'gone', action: 'delete', changes: [], blocked: 'run 4 of it is running' },
      ],
      refused: 'workflow billing/gone has a run going on',
    }
    expect(planRows(withWorkflows).map((r) => [r.kind, r.key, r.action])).toEqual([
      ['group', 'billing', 'unchanged'],
      ['job', 'billing/nightly', 'update'],
      ['job', 'billing/reconcile', 'create'],
      ['job', 'billing/old', 'delete'],
      ['workflow', 'billing/etl', 'update'],
      ['workflow', 'billing/gone', 'delete'],
      ['user', 'ops', 'create'],
    ])
  })
})

describe('the values of a change', () => {
  it('tells an absent side from a side that is null or empty', () => {
    expect(hasSide({ field: 'jobDesc', to: 'x' }, 'from')).toBe(false)
    expect(hasSide({ field: 'jobDesc', to: 'x' }, 'to')).toBe(true)
    expect(hasSide({ field: 'alarmEmail', from: '', to: 'a@example.com' }, 'from')).toBe(true)
    expect(hasSide({ field: 'x', from: null, to: 1 }, 'from')).toBe(true)
  })

  it('shows strings as they are and anything else as JSON', () => {
    expect(valueText('0 0 2 * * ?')).toBe('0 0 2 * * ?')
    expect(valueText(600)).toBe('600')
    expect(valueText(true)).toBe('true')
    expect(valueText(['reconcile', 'other/job'])).toBe('["reconcile","other/job"]')
    expect(valueText(null)).toBe('null')
    expect(valueText(undefined)).toBe('')
  })

  it('shows a script or a long value as a block', () => {
    expect(isLong('#!/bin/sh\necho hi')).toBe(true)
    expect(isLong('x'.repeat(81))).toBe(true)
    expect(isLong('0 0 2 * * ?')).toBe(false)
  })
})

it('names a size in MiB with one decimal', () => {
  expect(mebibytes(16 * 1024 * 1024)).toBe('16.0 MiB')
  expect(mebibytes(18_000_000)).toBe('17.2 MiB')
})
