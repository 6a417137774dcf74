// A CRON job's daylight-saving policy (openapi.yaml's DstGap and DstRepeat): what it does with a
// wall time its zone's clocks jump over, and with one that happens twice. Quartz's rules are the
// defaults. Only CRON schedules have wall times: the API refuses any other value on the other
// types (400 naming the field), so what a job sends depends on its type (dstFor).
import type { Schemas } from '@/api/client'
import type { ScheduleType } from '@/api/types'

export type DstGap = Schemas['DstGap']
export type DstRepeat = Schemas['DstRepeat']
export interface DstPolicy {
  dstGap: DstGap
  dstRepeat: DstRepeat
}

// Records keyed by the generated unions: a value added to openapi.yaml and not here fails to
// compile. The lists are in the order the editor offers them, the default first.
const GAPS: Record<DstGap, true> = { SKIP: true, FIRE_AFTER: true }
const REPEATS: Record<DstRepeat, true> = { ONCE: true, BOTH: true }
export const DST_GAPS = Object.keys(GAPS) as DstGap[]
export const DST_REPEATS = Object.keys(REPEATS) as DstRepeat[]

export const DEFAULT_DST: Readonly<DstPolicy> = Object.freeze({ dstGap: 'SKIP', dstRepeat: 'ONCE' })

/**
 * What a job of schedule type `type` sends: the form's policy for CRON, the defaults for every
 * other type (so switching a CRON job with a policy to a fixed rate does not earn a 400; the
 * form keeps the policy in case the type is switched back).
 */
export function dstFor(type: ScheduleType, policy: DstPolicy): DstPolicy {
  return type === 'CRON' ? { dstGap: policy.dstGap, dstRepeat: policy.dstRepeat } : { ...DEFAULT_DST }
}

/**
 * A loaded job's policy. A job read without the fields (an older server) has the defaults,
 * which is what such a server does.
 */
export function dstOf(job: { dstGap?: DstGap; dstRepeat?: DstRepeat }): DstPolicy {
  return { dstGap: job.dstGap ?? DEFAULT_DST.dstGap, dstRepeat: job.dstRepeat ?? DEFAULT_DST.dstRepeat }
}
