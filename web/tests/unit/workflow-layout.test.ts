import { describe, expect, it } from 'vitest'
import { NODE_HEIGHT, NODE_WIDTH, layoutGraph } from '@/pages/workflows/workflow-layout'

const diamondEdges: [string, string][] = [
  ['A', 'B'],
  ['A', 'C'],
  ['B', 'D'],
  ['C', 'D'],
]

describe('layoutGraph', () => {
  it('places every node below the nodes it follows', () => {
    const pos = layoutGraph(['A', 'B', 'C', 'D'], diamondEdges)
    expect([...pos.keys()].sort()).toEqual(['A', 'B', 'C', 'D'])
    for (const [from, to] of diamondEdges) {
      expect(pos.get(to)!.y, `${from} → ${to}`).toBeGreaterThanOrEqual(pos.get(from)!.y + NODE_HEIGHT)
    }
    // B and C side by side on one layer, not overlapping.
    expect(pos.get('B')!.y).toBe(pos.get('C')!.y)
    expect(Math.abs(pos.get('B')!.x - pos.get('C')!.x)).toBeGreaterThanOrEqual(NODE_WIDTH)
  })

  it('gives the same drawing for the same graph', () => {
    const a = layoutGraph(['A', 'B', 'C', 'D'], diamondEdges)
    const b = layoutGraph(['A', 'B', 'C', 'D'], diamondEdges)
    expect([...b]).toEqual([...a])
  })

  it('lays out nodes without edges apart from each other', () => {
    const pos = layoutGraph(['x', 'y', 'z'], [])
    const xs = [...pos.values()].map((p) => p.x).sort((p, q) => p - q)
    expect(xs[1]! - xs[0]!).toBeGreaterThanOrEqual(NODE_WIDTH)
    expect(xs[2]! - xs[1]!).toBeGreaterThanOrEqual(NODE_WIDTH)
  })

  it('still draws a graph with a cycle, a self-loop or an edge to an unknown node', () => {
    const pos = layoutGraph(
      ['A', 'B', 'C', 'D'],
      [...diamondEdges, ['D', 'A'], ['B', 'B'], ['C', 'nowhere']],
    )
    expect(pos.size).toBe(4)
    for (const p of pos.values()) {
      expect(Number.isFinite(p.x) && Number.isFinite(p.y)).toBe(true)
    }
  })

  it('answers nothing for no nodes', () => {
    expect(layoutGraph([], []).size).toBe(0)
  })
})
