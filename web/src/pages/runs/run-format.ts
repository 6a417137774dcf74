// What a run's row shows, from the API's JobLog: its state as a user reads it, how late it was
// triggered, how long it ran, and the trigger and handle results. Pure: unit tested.
import type { JobLog } from '@/api/types'
import { formatDuration } from '@/utils/time'

export type RunState = NonNullable<JobLog['state']>
export const RUN_STATES: RunState[] = ['pending', 'triggered', 'succeeded', 'failed', 'lost', 'cancelled']

/** The `status` filter of GET logs. */
export type RunStatusFilter = 'success' | 'failure' | 'running' | 'pending' | 'cancelled'
export const RUN_STATUS_FILTERS: RunStatusFilter[] = ['success', 'failure', 'running', 'pending', 'cancelled']

export function isRunStatusFilter(v: string): v is RunStatusFilter {
  return (RUN_STATUS_FILTERS as string[]).includes(v)
}

/**
 * The run can still change: not yet sent, being sent (an admin node claimed it and is posting it
 * to an executor: the API may answer this state though openapi.yaml does not list it yet), or
 * sent and waiting for its result.
 */
export function isRunActive(log: Pick<JobLog, 'state'>): boolean {
  const state: string | undefined = log.state
  return state === 'pending' || state === 'sending' || state === 'triggered'
}

/** Element Plus tag type of a state. */
export function stateTagType(state: JobLog['state']): 'success' | 'danger' | 'warning' | 'info' | 'primary' {
  switch (state) {
    case 'succeeded':
      return 'success'
    case 'failed':
    case 'lost':
      return 'danger'
    case 'triggered':
      return 'primary'
    case 'pending':
      return 'warning'
    default:
      return (state as string | undefined) === 'sending' ? 'primary' : 'info'
  }
}

/** The i18n key of a state's name, or null for a state this console does not know. */
export function stateKey(state: string | undefined): string | null {
  const known = [...RUN_STATES, 'sending'] as string[]
  return state && known.includes(state) ? `runs.states.${state}` : null
}

/**
 * A pending fire of a group or job with a concurrency limit that waits for a slot
 * (JobLog.waitingForSlot): no admin sends it until one frees, so it is told apart from a fire
 * that is merely not due yet.
 */
export function isWaitingForSlot(log: Pick<JobLog, 'state' | 'waitingForSlot'>): boolean {
  return log.state === 'pending' && log.waitingForSlot === true
}

/** How a run's state shows: its i18n key and badge look, "waiting for a slot" apart from pending. */
export function runStateLook(log: Pick<JobLog, 'state' | 'waitingForSlot'>): {
  key: string | null
  tag: ReturnType<typeof stateTagType>
  slot: boolean
} {
  if (isWaitingForSlot(log)) return { key: 'runs.waitingForSlot', tag: 'warning', slot: true }
  return { key: stateKey(log.state), tag: stateTagType(log.state), slot: false }
}

/** Milliseconds from the due time to the trigger; null before the trigger. */
export function latenessMs(log: Pick<JobLog, 'scheduledTime' | 'triggerTime'>): number | null {
  if (!log.triggerTime || !log.scheduledTime) return null
  return log.triggerTime - log.scheduledTime
}

/** "+1.25 s", "-300 ms" (triggered early), "0 ms"; "" before the trigger. */
export function formatLateness(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return ''
  const text = formatDuration(Math.abs(ms))
  if (ms > 0) return `+${text}`
  if (ms < 0) return `-${text}`
  return text
}

/**
 * Milliseconds from the trigger to the result; for a run still going, to `now` (then
 * `running` is true). Null when it never reached an executor.
 */
export function runDuration(
  log: Pick<JobLog, 'state' | 'triggerTime' | 'handleTime'>,
  now: number,
): { ms: number; running: boolean } | null {
  if (!log.triggerTime) return null
  if (log.handleTime) return { ms: Math.max(0, log.handleTime - log.triggerTime), running: false }
  if (log.state === 'triggered') return { ms: Math.max(0, now - log.triggerTime), running: true }
  return null
}

export type ResultKind = 'ok' | 'failed' | 'none' | 'unconfirmed'

/** 200 is success; 0 means no result yet; anything else failed. */
export function resultKind(code: number | undefined): ResultKind {
  if (!code) return 'none'
  return code === 200 ? 'ok' : 'failed'
}

/**
 * The trigger's result. A trigger that failed ends its run without a result (handle code 0). A
 * run with a trigger code other than 200 that is still waiting for its result, or got one (or
 * was closed as lost), was sent without an answer (neither /run nor /log replied): its delivery
 * was unconfirmed, not failed.
 */
export function triggerKind(log: Pick<JobLog, 'state' | 'triggerCode' | 'handleCode'>): ResultKind {
  const kind = resultKind(log.triggerCode)
  return kind === 'failed' && (log.state === 'triggered' || !!log.handleCode) ? 'unconfirmed' : kind
}

/** The first line of a message, shortened for a table cell. */
export function firstLine(message: string | undefined, max = 80): string {
  const line = (message ?? '').split('\n').find((l) => l.trim() !== '') ?? ''
  const trimmed = line.trim()
  return trimmed.length > max ? `${trimmed.slice(0, max - 1)}…` : trimmed
}

export type AlarmKind = 'undecided' | 'none' | 'sending' | 'sent' | 'failed'

/**
 * Where the run's alarm stands (JobLog.alarmStatus, docs/alarms.md): 0 undecided, 1 none
 * needed, -1 being sent, 2 sent, 3 failed. Null for a value this console does not know.
 */
export function alarmKind(status: number | undefined): AlarmKind | null {
  switch (status ?? 0) {
    case 0:
      return 'undecided'
    case 1:
      return 'none'
    case -1:
      return 'sending'
    case 2:
      return 'sent'
    case 3:
      return 'failed'
    default:
      return null
  }
}

/** Alarms worth a mark in a list: one went out, is going out, or could not be delivered. */
export function alarmNotable(status: number | undefined): boolean {
  const kind = alarmKind(status)
  return kind === 'sent' || kind === 'failed' || kind === 'sending'
}

/** How long after a bad end the run page keeps asking whether its alarm went out. */
export const ALARM_WATCH_MS = 15 * 60_000

/**
 * Whether a run that ended badly may still have its alarm decided or sent (admins decide every
 * few seconds, and retry a failing destination for over a minute): the run page refreshes until
 * it is, for a while after the end.
 */
export function alarmPending(run: Pick<JobLog, 'state' | 'alarmStatus' | 'handleTime' | 'triggerTime'>, now: number): boolean {
  if (run.state !== 'failed' && run.state !== 'lost') return false
  const kind = alarmKind(run.alarmStatus)
  if (kind !== 'undecided' && kind !== 'sending') return false
  const end = run.handleTime ?? run.triggerTime ?? 0
  return now - end < ALARM_WATCH_MS
}
