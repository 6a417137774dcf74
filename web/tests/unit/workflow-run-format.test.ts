import { describe, expect, it } from 'vitest'
import {
  canCancelWorkflowRun,
  canRerunFrom,
  elapsedMs,
  isWorkflowRunActive,
  isWorkflowRunState,
  nodeLook,
  outputText,
  runStateTagType,
  type WorkflowRunNode,
  type WorkflowRunState,
} from '@/pages/workflows/workflow-run-format'

describe('nodeLook', () => {
  const cases: [Pick<WorkflowRunNode, 'state' | 'runState'>, string][] = [
    [{ state: 'waiting' }, 'waiting'],
    [{ state: 'waiting', runState: null }, 'waiting'],
    [{ state: 'started', runState: 'pending' }, 'queued'],
    [{ state: 'started', runState: 'sending' }, 'queued'],
    [{ state: 'started', runState: null }, 'queued'],
    [{ state: 'started', runState: 'triggered' }, 'running'],
    [{ state: 'started', runState: 'failed' }, 'queued'],
    [{ state: 'succeeded', runState: 'succeeded' }, 'succeeded'],
    [{ state: 'failed', runState: 'lost' }, 'failed'],
    [{ state: 'cancelled', runState: 'cancelled' }, 'cancelled'],
    [{}, 'waiting'],
  ]
  it.each(cases)('%o is drawn %s', (node, look) => {
    expect(nodeLook(node)).toBe(look)
  })
})

describe('workflow run actions', () => {
  const all: WorkflowRunState[] = ['waiting', 'running', 'succeeded', 'failed', 'cancelled', 'skipped', 'timed_out']

  it('polls and cancels only a waiting or running run', () => {
    expect(all.filter((s) => isWorkflowRunActive(s))).toEqual(['waiting', 'running'])
    expect(all.filter((s) => canCancelWorkflowRun({ state: s }))).toEqual(['waiting', 'running'])
    expect(isWorkflowRunActive(undefined)).toBe(false)
  })

  it('re-runs from a failed or cancelled node of a failed, timed-out or cancelled run', () => {
    const nodeStates = ['waiting', 'started', 'succeeded', 'failed', 'cancelled'] as const
    const allowed: string[] = []
    for (const s of all) for (const n of nodeStates) if (canRerunFrom({ state: s }, { state: n })) allowed.push(`${s}/${n}`)
    expect(allowed).toEqual([
      'failed/failed',
      'failed/cancelled',
      'cancelled/failed',
      'cancelled/cancelled',
      'timed_out/failed',
      'timed_out/cancelled',
    ])
    expect(canRerunFrom({ state: 'failed' }, null)).toBe(false)
  })

  it('knows the run states', () => {
    expect(all.every(isWorkflowRunState)).toBe(true)
    expect(isWorkflowRunState('triggered')).toBe(false)
    expect(runStateTagType('succeeded')).toBe('success')
    expect(runStateTagType('timed_out')).toBe('danger')
    expect(runStateTagType('skipped')).toBe('info')
  })
})

describe('node details', () => {
  it('shows an output as text', () => {
    expect(outputText(undefined)).toBe('')
    expect(outputText(null)).toBe('')
    expect(outputText('rows: 3')).toBe('rows: 3')
    expect(outputText({ rows: [1, 2] })).toBe('{\n  "rows": [\n    1,\n    2\n  ]\n}')
    expect(outputText(42)).toBe('42')
  })

  it('measures from the start to the end, or to now while it goes on', () => {
    expect(elapsedMs({ startedAt: null }, 5000)).toBeNull()
    expect(elapsedMs({ startedAt: 1000, endedAt: 3500 }, 9000)).toBe(2500)
    expect(elapsedMs({ startedAt: 1000, endedAt: null }, 4000)).toBe(3000)
  })
})
