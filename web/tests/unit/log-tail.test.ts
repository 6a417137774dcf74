import { describe, expect, it } from 'vitest'
import {
  initialTail,
  isTailing,
  MAX_FAILURES,
  MAX_TAIL_CHARS,
  nextPollDelay,
  reduceTail,
  type TailEvent,
  type TailState,
} from '@/pages/runs/log-tail'

const run = (events: TailEvent[], start: TailState = initialTail()) => events.reduce(reduceTail, start)
const page = (fromLine: number, toLine: number, content: string, isEnd = false): TailEvent => ({
  type: 'page',
  fromLine,
  toLine,
  content,
  isEnd,
})

describe('log tail', () => {
  it('starts at line 1, following', () => {
    const s = initialTail()
    expect(s.nextLine).toBe(1)
    expect(s.phase).toBe('following')
    expect(isTailing(s)).toBe(true)
  })

  it('appends pages and follows toLine', () => {
    const s = run([page(1, 2, 'a\nb\n'), page(3, 3, 'c\n')])
    expect(s.text).toBe('a\nb\nc\n')
    expect(s.nextLine).toBe(4)
    expect(s.phase).toBe('following')
    expect(nextPollDelay(s)).toBe(250)
  })

  it('counts answers without new lines and slows down', () => {
    const s1 = run([page(1, 1, 'a\n'), page(2, 1, '')])
    expect(s1.nextLine).toBe(2)
    expect(s1.idle).toBe(1)
    expect(nextPollDelay(s1)).toBe(1000)
    const s3 = run([page(2, 1, ''), page(2, 1, '')], s1)
    expect(nextPollDelay(s3)).toBe(3000)
  })

  it('stops at isEnd', () => {
    const s = run([page(1, 2, 'a\nb\n'), page(3, 3, 'c\n', true)])
    expect(s.phase).toBe('ended')
    expect(s.text).toBe('a\nb\nc\n')
    expect(nextPollDelay(s)).toBeNull()
    expect(isTailing(s)).toBe(false)
    // Nothing changes it afterwards.
    expect(reduceTail(s, page(4, 4, 'd\n'))).toBe(s)
  })

  it('ignores an answer to an older request', () => {
    const s = run([page(1, 2, 'a\nb\n')])
    expect(reduceTail(s, page(1, 2, 'a\nb\n'))).toBe(s)
  })

  it('waits while the fire has not reached an executor', () => {
    const s = run([{ type: 'notReady' }])
    expect(s.phase).toBe('waiting')
    expect(nextPollDelay(s)).toBe(2000)
    const after = run([page(1, 1, 'x\n')], s)
    expect(after.phase).toBe('following')
  })

  it('ends without a log when the run ended before reaching an executor', () => {
    const s = run([{ type: 'runOver' }, { type: 'notReady' }])
    expect(s.phase).toBe('ended')
    expect(s.text).toBe('')
  })

  it('stops after two empty answers once the run is over', () => {
    const s = run([page(1, 1, 'a\n'), { type: 'runOver' }, page(2, 1, '')])
    expect(s.phase).toBe('following')
    expect(run([page(2, 1, '')], s).phase).toBe('ended')
  })

  it('retries failures with a growing delay, then gives up', () => {
    let s = run([page(1, 1, 'a\n'), { type: 'failed', message: 'executor down' }])
    expect(s.phase).toBe('following')
    expect(s.error).toBe('executor down')
    expect(nextPollDelay(s)).toBe(2000)
    s = run([{ type: 'failed', message: 'executor down' }], s)
    expect(nextPollDelay(s)).toBe(4000)
    for (let i = 2; i < MAX_FAILURES; i++) s = reduceTail(s, { type: 'failed', message: 'executor down' })
    expect(s.phase).toBe('error')
    expect(nextPollDelay(s)).toBeNull()
    // Retry starts again from where it was.
    s = reduceTail(s, { type: 'retry' })
    expect(s.phase).toBe('following')
    expect(s.nextLine).toBe(2)
    expect(s.error).toBeNull()
  })

  it('gives up at once on a failure when the run is over', () => {
    const s = run([{ type: 'runOver' }, { type: 'failed', message: 'gone' }])
    expect(s.phase).toBe('error')
  })

  it('a success clears the failure count', () => {
    const s = run([{ type: 'failed', message: 'x' }, page(1, 1, 'a\n')])
    expect(s.failures).toBe(0)
    expect(s.error).toBeNull()
  })

  it('drops the beginning of a very long log at a line boundary', () => {
    const line = 'x'.repeat(99) + '\n'
    const big = line.repeat(Math.ceil(MAX_TAIL_CHARS / line.length) + 10)
    const s = run([page(1, 5, big)])
    expect(s.truncated).toBe(true)
    expect(s.text.length).toBeLessThanOrEqual(MAX_TAIL_CHARS)
    expect(s.text.startsWith('x')).toBe(true)
    expect(s.text.endsWith('\n')).toBe(true)
  })
})
