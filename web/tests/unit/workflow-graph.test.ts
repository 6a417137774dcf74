import { describe, expect, it } from 'vitest'
import {
  NODE_KEY,
  canConnect,
  graphFromWorkflow,
  graphToInput,
  keyFromName,
  localProblems,
  placeProblems,
  withoutNode,
  type EditorGraph,
} from '@/pages/workflows/workflow-graph'

function counter() {
  let n = 0
  return () => `u${++n}`
}

/** A → B, A → C, B → D, C → D with uids u1..u4 (nodes) and u5..u8 (edges). */
function diamond(): EditorGraph {
  return graphFromWorkflow(
    [
      { key: 'A', jobId: 1 },
      { key: 'B', jobId: 2, params: '${nodes.A.output}', onFailure: 'CONTINUE' },
      { key: 'C', jobId: 3 },
      { key: 'D', jobId: 4 },
    ],
    [
      { from: 'A', to: 'B' },
      { from: 'A', to: 'C' },
      { from: 'B', to: 'D' },
      { from: 'C', to: 'D' },
    ],
    counter(),
  )
}

describe('keyFromName', () => {
  it('keeps a name that is a valid key', () => {
    expect(keyFromName('extract', [])).toBe('extract')
    expect(keyFromName('load-rows_2', [])).toBe('load-rows_2')
  })

  it('replaces what a key may not hold and starts it with a letter', () => {
    expect(keyFromName('nightly.report', [])).toBe('nightly_report')
    expect(keyFromName('2fa.check', [])).toBe('job_2fa_check')
    expect(keyFromName('  Nightly backup (eu)  ', [])).toBe('Nightly_backup_eu')
    expect(keyFromName('...', [])).toBe('job')
    expect(keyFromName('', [])).toBe('job')
    expect(keyFromName('备份', [])).toBe('job')
  })

  it('shortens a long name to 64 characters', () => {
    const key = keyFromName('a'.repeat(100), [])
    expect(key).toHaveLength(64)
    expect(key).toMatch(NODE_KEY)
  })

  it('numbers a key already taken, staying within 64 characters', () => {
    expect(keyFromName('extract', ['extract'])).toBe('extract_2')
    expect(keyFromName('extract', ['extract', 'extract_2'])).toBe('extract_3')
    const long = 'b'.repeat(64)
    const key = keyFromName(long, [long])
    expect(key).toBe(`${'b'.repeat(62)}_2`)
    expect(key).toMatch(NODE_KEY)
  })

  it('always answers a valid key', () => {
    for (const name of ['x', '9', '-', '_a', 'a b c', 'ä', 'job.name.with.dots', 'A'.repeat(70)]) {
      expect(keyFromName(name, []), name).toMatch(NODE_KEY)
    }
  })
})

describe('the editor graph and the API', () => {
  it('names nodes by uid and edges by those uids', () => {
    const g = diamond()
    expect(g.nodes.map((n) => [n.uid, n.key])).toEqual([
      ['u1', 'A'],
      ['u2', 'B'],
      ['u3', 'C'],
      ['u4', 'D'],
    ])
    expect(g.edges.map((e) => [e.from, e.to])).toEqual([
      ['u1', 'u2'],
      ['u1', 'u3'],
      ['u2', 'u4'],
      ['u3', 'u4'],
    ])
    expect(g.nodes[1]).toMatchObject({ params: '${nodes.A.output}', onFailure: 'CONTINUE' })
    expect(g.nodes[0]).toMatchObject({ params: '', onFailure: 'FAIL' })
  })

  it('leaves out an edge naming no node', () => {
    const g = graphFromWorkflow([{ key: 'A', jobId: 1 }], [{ from: 'A', to: 'Z' }], counter())
    expect(g.edges).toEqual([])
  })

  it('answers the graph by key, without positions, leaving out an empty template', () => {
    const g = diamond()
    g.nodes[0]!.key = 'start'
    const input = graphToInput(g)
    expect(input.nodes).toEqual([
      { key: 'start', jobId: 1, onFailure: 'FAIL' },
      { key: 'B', jobId: 2, params: '${nodes.A.output}', onFailure: 'CONTINUE' },
      { key: 'C', jobId: 3, onFailure: 'FAIL' },
      { key: 'D', jobId: 4, onFailure: 'FAIL' },
    ])
    expect(input.edges).toEqual([
      { from: 'start', to: 'B' },
      { from: 'start', to: 'C' },
      { from: 'B', to: 'D' },
      { from: 'C', to: 'D' },
    ])
  })

  it('refuses an edge onto its own node or one already drawn, and takes a cycle', () => {
    const g = diamond()
    expect(canConnect(g, 'u1', 'u1')).toBe(false)
    expect(canConnect(g, 'u1', 'u2')).toBe(false)
    expect(canConnect(g, 'u1', 'u9')).toBe(false)
    expect(canConnect(g, 'u4', 'u1')).toBe(true)
    expect(canConnect(g, 'u2', 'u1')).toBe(true)
  })

  it('removes a node with its edges', () => {
    const g = withoutNode(diamond(), 'u2')
    expect(g.nodes.map((n) => n.key)).toEqual(['A', 'C', 'D'])
    expect(g.edges.map((e) => [e.from, e.to])).toEqual([
      ['u1', 'u3'],
      ['u3', 'u4'],
    ])
  })
})

describe('placeProblems', () => {
  const settings = ['jobGroup', 'name', 'scheduleConf', 'timezone']

  it('puts node problems on their node and edge problems on their edge', () => {
    const placed = placeProblems(
      [
        { field: 'nodes[1].params', message: 'node B reads ${params.day}' },
        { field: 'nodes[1].key', message: 'node B is defined twice' },
        { field: 'nodes[3].jobId', message: 'node D names no job' },
        { field: 'edges[2].to', message: 'no node X' },
        { field: 'edges[0]', message: 'node A cannot follow itself' },
      ],
      diamond(),
      0,
      settings,
    )
    expect([...placed.nodes]).toEqual([
      ['u2', ['node B reads ${params.day}', 'node B is defined twice']],
      ['u4', ['node D names no job']],
    ])
    expect([...placed.edges]).toEqual([
      ['u7', ['no node X']],
      ['u5', ['node A cannot follow itself']],
    ])
    expect(placed.other).toEqual([])
  })

  it('lists problems of the graph as a whole, unknown fields and indexes past the end', () => {
    const cycle = { field: 'edges', message: 'the edges form a cycle: A → B → D → A' }
    const past = { field: 'nodes[9].key', message: 'no such node' }
    const odd = { field: 'somethingElse', message: 'odd' }
    const none = { field: '', message: 'refused' }
    const placed = placeProblems([cycle, past, odd, none], diamond(), 0, settings)
    expect(placed.other).toEqual([cycle, past, odd, none])
    expect(placed.nodes.size + placed.edges.size + placed.fields.size).toBe(0)
  })

  it('puts settings and parameter problems under their fields', () => {
    const placed = placeProblems(
      [
        { field: 'name', message: 'taken' },
        { field: 'scheduleConf', message: 'not a cron expression' },
        { field: 'params[1].name', message: 'not a name' },
        { field: 'params[2].name', message: 'past the end' },
        { field: 'params', message: 'at most 50' },
      ],
      diamond(),
      2,
      settings,
    )
    expect([...placed.fields]).toEqual([
      ['name', ['taken']],
      ['scheduleConf', ['not a cron expression']],
    ])
    expect([...placed.params]).toEqual([[1, ['not a name']]])
    expect(placed.other.map((p) => p.field)).toEqual(['params[2].name', 'params'])
  })

  it('does not take nodes10 for nodes[1]', () => {
    const placed = placeProblems([{ field: 'nodes[1]x', message: 'm' }], diamond(), 0, settings)
    expect(placed.other).toHaveLength(1)
  })
})

describe('localProblems', () => {
  it('finds nothing in a valid name and parameters', () => {
    expect(localProblems('nightly.etl', ['day', 'region_2'])).toEqual([])
  })

  it('asks for a name, and one the server takes', () => {
    expect(localProblems('', [])).toEqual([{ field: 'name', kind: 'nameRequired' }])
    expect(localProblems('Nightly ETL', [])).toEqual([{ field: 'name', kind: 'nameInvalid' }])
    expect(localProblems('-x', [])).toEqual([{ field: 'name', kind: 'nameInvalid' }])
    expect(localProblems('a'.repeat(101), [])).toEqual([{ field: 'name', kind: 'nameInvalid' }])
    expect(localProblems('a'.repeat(100), [])).toEqual([])
  })

  it('names each parameter that is not a key or is declared twice, by its index', () => {
    expect(localProblems('wf', ['day', '', '9lives', 'day'])).toEqual([
      { field: 'params[1].name', kind: 'paramInvalid', name: '' },
      { field: 'params[2].name', kind: 'paramInvalid', name: '9lives' },
      { field: 'params[3].name', kind: 'paramTwice', name: 'day' },
    ])
  })
})
