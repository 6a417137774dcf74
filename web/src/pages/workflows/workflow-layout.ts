// Where each node of a workflow's graph is drawn: a top-to-bottom layered layout by dagre, each
// node below every node it follows. Positions are the layout's alone (never saved): the same
// nodes and edges always give the same drawing. Pure: unit tested.
import dagre from '@dagrejs/dagre'

/** The size every node is drawn at (WorkflowNodeCard.vue's box). */
export const NODE_WIDTH = 200
export const NODE_HEIGHT = 64
const NODE_GAP = 48
/** Room between layers, also for the one-line problem shown under a node. */
const RANK_GAP = 72

export interface Position {
  x: number
  y: number
}

/**
 * The top-left corner of each node, by id. Edges naming an unknown node are left out; a cycle
 * is laid out all the same (dagre reverses an edge of it), so a graph being edited into a valid
 * one still draws.
 */
export function layoutGraph(ids: readonly string[], edges: readonly (readonly [string, string])[]): Map<string, Position> {
  const g = new dagre.graphlib.Graph({ multigraph: true })
  g.setGraph({ rankdir: 'TB', nodesep: NODE_GAP, ranksep: RANK_GAP, marginx: 16, marginy: 16 })
  g.setDefaultEdgeLabel(() => ({}))
  const known = new Set(ids)
  for (const id of known) g.setNode(id, { width: NODE_WIDTH, height: NODE_HEIGHT })
  edges.forEach(([from, to], i) => {
    if (known.has(from) && known.has(to) && from !== to) g.setEdge(from, to, {}, `e${i}`)
  })
  dagre.layout(g)
  const out = new Map<string, Position>()
  for (const id of known) {
    const n = g.node(id)
    // dagre places centres; the canvas places corners.
    out.set(id, { x: Math.round(n.x - NODE_WIDTH / 2), y: Math.round(n.y - NODE_HEIGHT / 2) })
  }
  return out
}
