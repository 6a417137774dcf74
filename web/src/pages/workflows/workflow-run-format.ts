// What a workflow run and its nodes look like and allow, from the API's WorkflowRun. Pure: unit
// tested.
import type { Schemas } from '@/api/client'

export type WorkflowRun = Schemas['WorkflowRun']
export type WorkflowRunNode = Schemas['WorkflowRunNode']
export type WorkflowRunState = Schemas['WorkflowRunState']

export const WORKFLOW_RUN_STATES: WorkflowRunState[] = ['waiting', 'running', 'succeeded', 'failed', 'cancelled', 'skipped', 'timed_out']

export function isWorkflowRunState(v: string): v is WorkflowRunState {
  return (WORKFLOW_RUN_STATES as string[]).includes(v)
}

/** The run can still change (the run view polls it meanwhile). */
export function isWorkflowRunActive(state: WorkflowRunState | undefined): boolean {
  return state === 'waiting' || state === 'running'
}

/** POST workflow-runs/{id}/cancel takes it. */
export function canCancelWorkflowRun(run: Pick<WorkflowRun, 'state'>): boolean {
  return isWorkflowRunActive(run.state)
}

/** POST workflow-runs/{id}/rerun takes this node of this run. */
export function canRerunFrom(run: Pick<WorkflowRun, 'state'>, node: Pick<WorkflowRunNode, 'state'> | null | undefined): boolean {
  if (!node) return false
  const ended = run.state === 'failed' || run.state === 'timed_out' || run.state === 'cancelled'
  return ended && (node.state === 'failed' || node.state === 'cancelled')
}

/**
 * How a node of a run is drawn:
 *   waiting    not started (grey)
 *   queued     started, its run not yet at an executor: pending or being sent (light blue)
 *   running    started, its run at an executor (blue, animated)
 *   succeeded  green; failed red; cancelled grey, dashed
 * A started node whose current run already ended (between its run's end and the node's, or
 * between a failed attempt and its retry) is drawn queued.
 */
export type NodeLook = 'waiting' | 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled'

export function nodeLook(node: Pick<WorkflowRunNode, 'state' | 'runState'>): NodeLook {
  switch (node.state) {
    case 'succeeded':
    case 'failed':
    case 'cancelled':
      return node.state
    case 'started':
      return node.runState === 'triggered' ? 'running' : 'queued'
    default:
      return 'waiting'
  }
}

/** Element Plus tag type of a run's state. */
export function runStateTagType(state: WorkflowRunState | undefined): 'success' | 'danger' | 'warning' | 'info' | 'primary' {
  switch (state) {
    case 'succeeded':
      return 'success'
    case 'failed':
    case 'timed_out':
      return 'danger'
    case 'running':
      return 'primary'
    case 'waiting':
      return 'warning'
    default:
      return 'info'
  }
}

/** A node's output as text for its details: strings as they are, anything else as indented JSON. */
export function outputText(output: unknown): string {
  if (output === undefined || output === null) return ''
  if (typeof output === 'string') return output
  try {
    return JSON.stringify(output, null, 2)
  } catch {
    return String(output)
  }
}

/** Milliseconds the run (or node) took, or has taken until `now` while it goes on; null before its start. */
export function elapsedMs(item: { startedAt?: number | null; endedAt?: number | null }, now: number): number | null {
  if (!item.startedAt) return null
  return Math.max(0, (item.endedAt ?? now) - item.startedAt)
}
