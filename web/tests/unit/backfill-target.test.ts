import { describe, expect, it } from 'vitest'
import {
  backfillInputs,
  backfillTargetPath,
  backfillsOfTargetQuery,
  inputOfError,
  isWorkflowBackfill,
} from '@/pages/backfills/backfill-target'

describe('what a backfill runs', () => {
  it('links a job’s backfill to its job and a workflow’s to its workflow', () => {
    const ofJob = { kind: 'job' as const, jobId: 7, workflowId: null }
    const ofWorkflow = { kind: 'workflow' as const, jobId: null, workflowId: 12 }
    expect(isWorkflowBackfill(ofJob)).toBe(false)
    expect(isWorkflowBackfill(ofWorkflow)).toBe(true)
    expect(isWorkflowBackfill(null)).toBe(false)
    expect(backfillTargetPath(ofJob)).toBe('/jobs/7')
    expect(backfillTargetPath(ofWorkflow)).toBe('/workflows/12')
    expect(backfillsOfTargetQuery(ofJob)).toEqual({ jobId: 7 })
    expect(backfillsOfTargetQuery(ofWorkflow)).toEqual({ workflowId: 12 })
    // A backfill answered without a kind (an older admin) is a job's.
    expect(backfillTargetPath({ jobId: 3 })).toBe('/jobs/3')
  })
})

describe('a workflow backfill’s inputs', () => {
  const declared = [{ name: 'day', default: 'today' }, { name: 'region' }, { name: 'note', default: '' }]

  it('sends each value entered, leaving out an empty one without a default', () => {
    expect(backfillInputs(declared, { day: 'yesterday', region: '', note: '' })).toEqual({ day: 'yesterday', note: '' })
    expect(backfillInputs(declared, { region: 'eu' })).toEqual({ day: '', region: 'eu', note: '' })
    expect(backfillInputs([], { stray: 'x' })).toEqual({})
  })

  it('puts a refusal under the input it names', () => {
    expect(inputOfError('inputs', 'inputs.region: is required (it has no default)', declared)).toBe('region')
    expect(inputOfError('inputs.day', 'day: at most 65536 bytes', declared)).toBe('day')
    expect(inputOfError('inputs', 'inputs.nope: the workflow has no such parameter', declared)).toBeUndefined()
    expect(inputOfError('inputs', 'inputs: expected an object of parameter values', declared)).toBeUndefined()
    expect(inputOfError('to', 'inputs.day: no', declared)).toBeUndefined()
    expect(inputOfError(undefined, 'inputs.day: no', declared)).toBeUndefined()
  })
})
