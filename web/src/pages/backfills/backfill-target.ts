// What a backfill runs, a job or a workflow (openapi.yaml Backfill: kind, jobId, workflowId,
// workflowName), as its list, its page and its dialog show it; and a workflow's backfill's
// inputs as the dialog sends them. Pure: unit tested.
import type { Schemas } from '@/api/client'
import type { Backfill } from './backfill-format'

type WorkflowParam = Schemas['WorkflowParam']

/** Whether the backfill runs a workflow (its kind; a backfill without one is a job's). */
export function isWorkflowBackfill(b: Pick<Backfill, 'kind'> | null | undefined): boolean {
  return b?.kind === 'workflow'
}

/** The console page of what the backfill runs: the job's or the workflow's. */
export function backfillTargetPath(b: Pick<Backfill, 'kind' | 'jobId' | 'workflowId'>): string {
  return isWorkflowBackfill(b) ? `/workflows/${b.workflowId ?? ''}` : `/jobs/${b.jobId ?? ''}`
}

/** The list filtered to the backfills of what this one runs. */
export function backfillsOfTargetQuery(b: Pick<Backfill, 'kind' | 'jobId' | 'workflowId'>): Record<string, number | undefined> {
  return isWorkflowBackfill(b) ? { workflowId: b.workflowId ?? undefined } : { jobId: b.jobId ?? undefined }
}

/**
 * The inputs to send: every declared parameter's value as entered, except one without a default
 * left empty, which is left out so that the server says it is required (under that input).
 */
export function backfillInputs(declared: readonly WorkflowParam[], values: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const p of declared) {
    const v = values[p.name] ?? ''
    if (v !== '' || p.default !== undefined) out[p.name] = v
  }
  return out
}

/**
 * The declared input a 400 is about: its field is "inputs" and its message starts with
 * "inputs.NAME:" (or its field names it, "inputs.NAME"); undefined for any other.
 */
export function inputOfError(field: string | undefined, message: string, declared: readonly WorkflowParam[]): string | undefined {
  const named = /^inputs\.([A-Za-z][A-Za-z0-9_-]*)$/.exec(field ?? '')?.[1]
  const said = field === 'inputs' ? /^inputs\.([A-Za-z][A-Za-z0-9_-]*):/.exec(message)?.[1] : undefined
  const name = named ?? said
  return name !== undefined && declared.some((p) => p.name === name) ? name : undefined
}
