// What an apply of a jobs file does (POST /apply's ApplyPlan), as the import dialog lists it: a
// row per group, job and user of the file, with its action and, for an update, each changed
// field from the server's value to the file's. Pure (unit tested).
import type { Schemas } from '@/api/client'

export type ApplyPlan = Schemas['ApplyPlan']
export type ApplyChange = Schemas['ApplyChange']
export type PlanAction = 'create' | 'update' | 'unchanged' | 'delete'

/** A jobs file is read into the page whole: at most what the server takes (jobs_file.h). */
export const MAX_IMPORT_BYTES = 16 * 1024 * 1024

export interface PlanRow {
  kind: 'group' | 'job' | 'workflow' | 'user'
  /** `appName` for a group, `appName/name` for a job or a workflow, the username for a user. */
  key: string
  action: PlanAction
  /** The fields an update changes; empty for any other action. */
  changes: ApplyChange[]
}

/** The rows of a plan: groups, then jobs, then users, each in the server's order. */
export function planRows(plan: ApplyPlan): PlanRow[] {
  const row = (kind: PlanRow['kind'], key: string, action: PlanAction, changes: ApplyChange[]): PlanRow => ({
    kind,
    key,
    action,
    changes: action === 'update' ? changes : [],
  })
  return [
    ...plan.groups.map((g) => row('group', g.appName, g.action, g.changes)),
    ...plan.jobs.map((j) => row('job', `${j.appName}/${j.name}`, j.action, j.changes)),
    ...(plan.workflows ?? []).map((w) => row('workflow', `${w.appName}/${w.name}`, w.action, w.changes)),
    ...plan.users.map((u) => row('user', u.username, u.action, u.changes)),
  ]
}

/** Whether the change has a side: `from` is absent for what is created, `to` for what goes. */
export function hasSide(change: ApplyChange, side: 'from' | 'to'): boolean {
  return Object.prototype.hasOwnProperty.call(change, side) && change[side] !== undefined
}

/** A field's value as the dialog shows it: a string as it is, anything else as compact JSON. */
export function valueText(v: unknown): string {
  if (typeof v === 'string') return v
  if (v === undefined) return ''
  return JSON.stringify(v)
}

/** A value to show as a block rather than inline: a script, or anything long. */
export function isLong(text: string): boolean {
  return text.includes('\n') || text.length > 80
}

/** The file's size as the import dialog names it when it is too large: "17.2 MiB". */
export function mebibytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`
}
