import { describe, expect, it } from 'vitest'
import type { Schemas } from '@/api/client'
import { bodySnapshot } from '@/pages/workflows/workflow-snapshot'

type WorkflowInput = Schemas['WorkflowInput']

/** A → B, A → C with one input parameter, as the editor sends it. */
function body(): WorkflowInput {
  return {
    jobGroup: 1,
    name: 'nightly',
    description: 'the nightly load',
    scheduleType: 'CRON',
    scheduleConf: '0 0 2 * * ?',
    timezone: 'Europe/Berlin',
    overlap: 'WAIT',
    params: [
      { name: 'day', default: 'monday' },
      { name: 'region', description: 'where' },
    ],
    nodes: [
      { key: 'A', jobId: 10, onFailure: 'FAIL' },
      { key: 'B', jobId: 11, params: '${nodes.A.output}', onFailure: 'CONTINUE' },
      { key: 'C', jobId: 12, onFailure: 'FAIL' },
    ],
    edges: [
      { from: 'A', to: 'B' },
      { from: 'A', to: 'C' },
    ],
  }
}

describe('bodySnapshot', () => {
  it('is the same for the same body', () => {
    expect(bodySnapshot(body())).toBe(bodySnapshot(body()))
  })

  it('does not depend on the order of members', () => {
    const b = body()
    const reordered = Object.fromEntries(Object.entries(b).reverse()) as unknown as WorkflowInput
    reordered.nodes = b.nodes.map((n) => Object.fromEntries(Object.entries(n).reverse()) as unknown as typeof n)
    expect(bodySnapshot(reordered)).toBe(bodySnapshot(b))
  })

  it('treats a member left out and one undefined alike', () => {
    const b = body()
    expect(bodySnapshot({ ...b, author: undefined })).toBe(bodySnapshot(b))
  })

  it('counts a node deleted and added again as unchanged', () => {
    const b = body()
    const again = { ...b, nodes: [b.nodes[0]!, b.nodes[2]!, b.nodes[1]!] }
    expect(bodySnapshot(again)).toBe(bodySnapshot(b))
  })

  it('counts an edge deleted and drawn again as unchanged', () => {
    const b = body()
    expect(bodySnapshot({ ...b, edges: [...b.edges].reverse() })).toBe(bodySnapshot(b))
  })

  it('tells a field changed', () => {
    const b = body()
    expect(bodySnapshot({ ...b, description: 'the nightly load!' })).not.toBe(bodySnapshot(b))
    expect(bodySnapshot({ ...b, jobGroup: 2 })).not.toBe(bodySnapshot(b))
    expect(bodySnapshot({ ...b, scheduleConf: '0 0 3 * * ?' })).not.toBe(bodySnapshot(b))
  })

  it('tells a node, its job, its template or its failure rule changed', () => {
    const b = body()
    const withNode = (i: number, changes: object) => ({ ...b, nodes: b.nodes.map((n, j) => (j === i ? { ...n, ...changes } : n)) })
    expect(bodySnapshot(withNode(1, { key: 'B2' }))).not.toBe(bodySnapshot(b))
    expect(bodySnapshot(withNode(1, { jobId: 99 }))).not.toBe(bodySnapshot(b))
    expect(bodySnapshot(withNode(1, { params: '' }))).not.toBe(bodySnapshot(b))
    expect(bodySnapshot(withNode(0, { onFailure: 'CONTINUE' }))).not.toBe(bodySnapshot(b))
    expect(bodySnapshot({ ...b, nodes: b.nodes.slice(0, 2), edges: b.edges.slice(0, 1) })).not.toBe(bodySnapshot(b))
  })

  it('tells an edge added, removed or turned around', () => {
    const b = body()
    expect(bodySnapshot({ ...b, edges: [...b.edges, { from: 'B', to: 'C' }] })).not.toBe(bodySnapshot(b))
    expect(bodySnapshot({ ...b, edges: b.edges.slice(1) })).not.toBe(bodySnapshot(b))
    expect(bodySnapshot({ ...b, edges: [{ from: 'B', to: 'A' }, b.edges[1]!] })).not.toBe(bodySnapshot(b))
  })

  it('tells a node added twice from a node added once', () => {
    const b = body()
    expect(bodySnapshot({ ...b, nodes: [...b.nodes, b.nodes[2]!] })).not.toBe(bodySnapshot(b))
  })

  it('keeps the order of input parameters', () => {
    const b = body()
    expect(bodySnapshot({ ...b, params: [...b.params!].reverse() })).not.toBe(bodySnapshot(b))
  })

  it('tells a default given from a parameter without one', () => {
    const b = body()
    const noDefault = { ...b, params: [{ name: 'day' }, b.params![1]!] }
    const emptyDefault = { ...b, params: [{ name: 'day', default: '' }, b.params![1]!] }
    expect(bodySnapshot(noDefault)).not.toBe(bodySnapshot(b))
    expect(bodySnapshot(noDefault)).not.toBe(bodySnapshot(emptyDefault))
  })
})
