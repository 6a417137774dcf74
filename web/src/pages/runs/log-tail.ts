// The live tail of a run's log (GET logs/{id}/content?fromLine=N) as a pure state machine: the
// page drives it with the answers it gets and asks it when to poll next. Unit tested.
//
//  - Each page answers lines fromLine..toLine; the next request starts at toLine + 1 (toLine is
//    fromLine - 1 when no line was there yet).
//  - isEnd: the run is over and that was its last line: stop.
//  - 409: the fire has not reached an executor yet: wait (stop when the run ended without one).
//  - Other failures (502: the executor does not answer) are retried with a growing delay, and
//    given up after a few, or at once when the run is over (its executor may be gone).
//  - When the run is over but the executor never says isEnd (an executor of another kind, a
//    lost run), the tail stops after two answers without new lines.

export type TailPhase = 'waiting' | 'following' | 'ended' | 'error'

export interface TailState {
  phase: TailPhase
  /** The fromLine of the next request (1-based). */
  nextLine: number
  /** The text read so far (its beginning dropped beyond MAX_TAIL_CHARS). */
  text: string
  /** Some of the beginning was dropped to keep the page light. */
  truncated: boolean
  /** The run's own state is final (from GET logs/{id}). */
  runOver: boolean
  /** Answers in a row without new lines. */
  idle: number
  /** Failures in a row, and the last one's message. */
  failures: number
  error: string | null
}

export type TailEvent =
  | { type: 'page'; fromLine: number; toLine: number; content: string; isEnd: boolean }
  | { type: 'notReady' }
  | { type: 'failed'; message: string }
  | { type: 'runOver' }
  | { type: 'retry' }

export const MAX_TAIL_CHARS = 2_000_000
export const MAX_FAILURES = 5

export function initialTail(): TailState {
  return { phase: 'following', nextLine: 1, text: '', truncated: false, runOver: false, idle: 0, failures: 0, error: null }
}

function cap(text: string): { text: string; dropped: boolean } {
  if (text.length <= MAX_TAIL_CHARS) return { text, dropped: false }
  let cut = text.length - MAX_TAIL_CHARS
  const nl = text.indexOf('\n', cut)
  if (nl !== -1 && nl < text.length - 1) cut = nl + 1
  return { text: text.slice(cut), dropped: true }
}

export function reduceTail(s: TailState, e: TailEvent): TailState {
  if (e.type === 'retry') return { ...s, phase: 'following', failures: 0, error: null, idle: 0 }
  if (s.phase === 'ended' || (s.phase === 'error' && e.type !== 'runOver')) return s
  switch (e.type) {
    case 'page': {
      // An answer to an older request (lines already shown): keep what we have.
      if (e.fromLine !== s.nextLine) return s
      const got = e.toLine >= e.fromLine && e.content !== ''
      let text = s.text
      let truncated = s.truncated
      if (got) {
        const c = cap(text + e.content)
        text = c.text
        truncated = truncated || c.dropped
      }
      const idle = got ? 0 : s.idle + 1
      const next = { ...s, text, truncated, nextLine: Math.max(s.nextLine, e.toLine + 1), idle, failures: 0, error: null }
      if (e.isEnd || (s.runOver && idle >= 2)) return { ...next, phase: 'ended' }
      return { ...next, phase: 'following' }
    }
    case 'notReady':
      return { ...s, phase: s.runOver ? 'ended' : 'waiting', failures: 0, error: null }
    case 'failed': {
      const failures = s.failures + 1
      const giveUp = s.runOver || failures >= MAX_FAILURES
      return { ...s, failures, error: e.message, phase: giveUp ? 'error' : s.phase }
    }
    case 'runOver':
      return { ...s, runOver: true }
  }
}

/** Milliseconds until the next request; null: stop polling. */
export function nextPollDelay(s: TailState): number | null {
  if (s.phase === 'ended' || s.phase === 'error') return null
  if (s.failures > 0) return Math.min(2000 * 2 ** (s.failures - 1), 15_000)
  if (s.phase === 'waiting') return 2000
  // New lines came: more may be waiting (a page holds at most 256 KiB), ask again soon.
  if (s.idle === 0) return 250
  return Math.min(1000 * s.idle, 3000)
}

/** The tail is still asking for more. */
export function isTailing(s: TailState): boolean {
  return s.phase === 'waiting' || s.phase === 'following'
}
