import { describe, expect, it } from 'vitest'
import {
  ALARM_WATCH_MS,
  alarmKind,
  alarmPending,
  alarmNotable,
  firstLine,
  formatLateness,
  isRunActive,
  isRunStatusFilter,
  isWaitingForSlot,
  latenessMs,
  resultKind,
  runDuration,
  runStateLook,
  triggerKind,
  stateKey,
  stateTagType,
} from '@/pages/runs/run-format'

describe('run formatting', () => {
  it('tells a pending fire waiting for a slot apart from one merely pending', () => {
    expect(isWaitingForSlot({ state: 'pending', waitingForSlot: true })).toBe(true)
    expect(isWaitingForSlot({ state: 'pending', waitingForSlot: false })).toBe(false)
    expect(isWaitingForSlot({ state: 'pending' })).toBe(false)
    // Once admitted and sent, the mark no longer matters.
    expect(isWaitingForSlot({ state: 'triggered', waitingForSlot: true })).toBe(false)
    expect(runStateLook({ state: 'pending', waitingForSlot: true })).toEqual({ key: 'runs.waitingForSlot', tag: 'warning', slot: true })
    expect(runStateLook({ state: 'pending' })).toEqual({ key: 'runs.states.pending', tag: 'warning', slot: false })
    expect(runStateLook({ state: 'succeeded', waitingForSlot: true })).toEqual({ key: 'runs.states.succeeded', tag: 'success', slot: false })
    expect(runStateLook({ state: 'weird' as never })).toEqual({ key: null, tag: 'info', slot: false })
  })

  it('lateness is trigger minus scheduled', () => {
    expect(latenessMs({ scheduledTime: 1000, triggerTime: 2250 })).toBe(1250)
    expect(latenessMs({ scheduledTime: 1000, triggerTime: null })).toBeNull()
    expect(latenessMs({ scheduledTime: 1000 })).toBeNull()
  })

  it('formats lateness with its sign', () => {
    expect(formatLateness(1250)).toBe('+1.25 s')
    expect(formatLateness(-300)).toBe('-300 ms')
    expect(formatLateness(0)).toBe('0 ms')
    expect(formatLateness(125_000)).toBe('+2 min 5 s')
    expect(formatLateness(null)).toBe('')
  })

  it('duration runs from trigger to result, or to now while running', () => {
    expect(runDuration({ state: 'succeeded', triggerTime: 1000, handleTime: 4000 }, 10_000)).toEqual({ ms: 3000, running: false })
    expect(runDuration({ state: 'triggered', triggerTime: 1000, handleTime: null }, 10_000)).toEqual({ ms: 9000, running: true })
    expect(runDuration({ state: 'pending', triggerTime: null }, 10_000)).toBeNull()
    expect(runDuration({ state: 'lost', triggerTime: 1000, handleTime: null }, 10_000)).toBeNull()
    // Clocks of two machines: never negative.
    expect(runDuration({ state: 'failed', triggerTime: 5000, handleTime: 4000 }, 0)).toEqual({ ms: 0, running: false })
  })

  it('classifies states and results', () => {
    expect(isRunActive({ state: 'pending' })).toBe(true)
    expect(isRunActive({ state: 'triggered' })).toBe(true)
    expect(isRunActive({ state: 'failed' })).toBe(false)
    // Claimed by a node and being posted to an executor (answered by the API, not yet in openapi.yaml).
    expect(isRunActive({ state: 'sending' as 'pending' })).toBe(true)
    expect(stateTagType('sending' as 'pending')).toBe('primary')
    expect(stateKey('sending')).toBe('runs.states.sending')
    expect(stateKey('triggered')).toBe('runs.states.triggered')
    expect(stateKey('exploded')).toBeNull()
    expect(stateTagType('succeeded')).toBe('success')
    expect(stateTagType('lost')).toBe('danger')
    expect(stateTagType('cancelled')).toBe('info')
    expect(resultKind(200)).toBe('ok')
    expect(resultKind(500)).toBe('failed')
    expect(resultKind(0)).toBe('none')
    expect(resultKind(undefined)).toBe('none')
    expect(triggerKind({ state: 'triggered', triggerCode: 500, handleCode: 0 })).toBe('unconfirmed')
    expect(triggerKind({ state: 'succeeded', triggerCode: 500, handleCode: 200 })).toBe('unconfirmed')
    expect(triggerKind({ state: 'lost', triggerCode: 500, handleCode: 500 })).toBe('unconfirmed')
    expect(triggerKind({ state: 'failed', triggerCode: 500, handleCode: 0 })).toBe('failed')
    expect(triggerKind({ state: 'triggered', triggerCode: 200, handleCode: 0 })).toBe('ok')
    expect(isRunStatusFilter('running')).toBe(true)
    expect(isRunStatusFilter('succeeded')).toBe(false)
  })

  it('first line of a message, shortened', () => {
    expect(firstLine('\n  Trigger: ok \nmore')).toBe('Trigger: ok')
    expect(firstLine('a'.repeat(100), 10)).toBe('aaaaaaaaa…')
    expect(firstLine(undefined)).toBe('')
  })

  it('names where a run’s alarm stands, and marks only the ones that went out or failed', () => {
    expect([0, 1, -1, 2, 3, undefined, 9].map(alarmKind)).toEqual(['undecided', 'none', 'sending', 'sent', 'failed', 'undecided', null])
    expect([0, 1, -1, 2, 3, 9].map(alarmNotable)).toEqual([false, false, true, true, true, false])
  })

  it('keeps watching a badly ended run’s alarm until it is decided, for a while', () => {
    const failed = { state: 'failed' as const, alarmStatus: 0, handleTime: 1_000_000 }
    expect(alarmPending(failed, 1_000_000 + 5000)).toBe(true)
    expect(alarmPending({ ...failed, alarmStatus: -1 }, 1_000_000 + 5000)).toBe(true)
    expect(alarmPending({ ...failed, alarmStatus: 2 }, 1_000_000 + 5000)).toBe(false)
    expect(alarmPending({ ...failed, alarmStatus: 1 }, 1_000_000 + 5000)).toBe(false)
    expect(alarmPending(failed, 1_000_000 + ALARM_WATCH_MS)).toBe(false)
    expect(alarmPending({ ...failed, state: 'succeeded' }, 1_000_000 + 5000)).toBe(false)
  })
})
