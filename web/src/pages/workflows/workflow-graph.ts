// The workflow editor's graph, apart from the page: nodes and edges as the editor holds them,
// their conversion to and from the API's WorkflowInput, a node's key made from its job's name,
// and where each problem of POST workflows/check belongs. Pure: unit tested.
//
// The editor names nodes by a uid of its own, not by their key: a key can be edited (or be
// duplicated while the user types), and edges, the selection and the canvas must keep pointing
// at the same node meanwhile. Keys are what the API sees; uids never leave the page. The order
// of `nodes` and `edges` is the order sent, so `nodes[i]` in a problem is `nodes[i]` here.
import type { Schemas } from '@/api/client'

export type WorkflowNode = Schemas['WorkflowNode']
export type WorkflowEdge = Schemas['WorkflowEdge']
export type OnFailure = NonNullable<WorkflowNode['onFailure']>

/** A node key, as openapi.yaml's WorkflowNode.key and WorkflowParam.name require. */
export const NODE_KEY = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/
export const MAX_KEY_CHARS = 64

export interface EditorNode {
  uid: string
  key: string
  jobId: number
  /** The template of the node's run's parameters; empty: the job's own parameter. */
  params: string
  onFailure: OnFailure
}

export interface EditorEdge {
  uid: string
  /** uids of the nodes. */
  from: string
  to: string
}

export interface EditorGraph {
  nodes: EditorNode[]
  edges: EditorEdge[]
}

/**
 * A valid node key made from a job's name (or any text), unlike every key in `taken`: characters
 * a key may not hold become '_', a key must start with a letter (else "job_" goes first), and a
 * key taken already gets "_2", "_3", ... (the base shortened so the whole stays within 64).
 */
export function keyFromName(name: string, taken: Iterable<string>): string {
  let base = name
    .trim()
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
  if (base === '') base = 'job'
  else if (!/^[A-Za-z]/.test(base)) base = `job_${base}`
  base = base.slice(0, MAX_KEY_CHARS)
  const used = new Set(taken)
  if (!used.has(base)) return base
  for (let n = 2; ; n++) {
    const suffix = `_${n}`
    const key = `${base.slice(0, MAX_KEY_CHARS - suffix.length)}${suffix}`
    if (!used.has(key)) return key
  }
}

/** The editor's graph of a saved workflow; `uid` makes each new uid. Edges naming no node are left out. */
export function graphFromWorkflow(nodes: readonly WorkflowNode[], edges: readonly WorkflowEdge[], uid: () => string): EditorGraph {
  const out: EditorGraph = { nodes: [], edges: [] }
  const byKey = new Map<string, string>()
  for (const n of nodes) {
    const node: EditorNode = { uid: uid(), key: n.key, jobId: n.jobId, params: n.params ?? '', onFailure: n.onFailure ?? 'FAIL' }
    out.nodes.push(node)
    if (!byKey.has(n.key)) byKey.set(n.key, node.uid)
  }
  for (const e of edges) {
    const from = byKey.get(e.from)
    const to = byKey.get(e.to)
    if (from !== undefined && to !== undefined) out.edges.push({ uid: uid(), from, to })
  }
  return out
}

/** The graph as the API takes it: nodes by key, in the editor's order; positions are never part of it. */
export function graphToInput(graph: EditorGraph): { nodes: WorkflowNode[]; edges: WorkflowEdge[] } {
  const keyOf = new Map(graph.nodes.map((n) => [n.uid, n.key]))
  return {
    nodes: graph.nodes.map((n) => ({
      key: n.key,
      jobId: n.jobId,
      ...(n.params.trim() !== '' ? { params: n.params } : {}),
      onFailure: n.onFailure,
    })),
    edges: graph.edges.map((e) => ({ from: keyOf.get(e.from) ?? '', to: keyOf.get(e.to) ?? '' })),
  }
}

/** Whether an edge from → to may be drawn: not onto its own node, and not one already there. */
export function canConnect(graph: EditorGraph, from: string, to: string): boolean {
  if (from === to) return false
  if (!graph.nodes.some((n) => n.uid === from) || !graph.nodes.some((n) => n.uid === to)) return false
  return !graph.edges.some((e) => e.from === from && e.to === to)
}

/** The graph without the node `uid` and its edges. */
export function withoutNode(graph: EditorGraph, uid: string): EditorGraph {
  return { nodes: graph.nodes.filter((n) => n.uid !== uid), edges: graph.edges.filter((e) => e.from !== uid && e.to !== uid) }
}

export interface Problem {
  field: string
  message: string
}

/** Where the problems of a check (or a refused save) are shown. */
export interface PlacedProblems {
  /** By node uid: on that node. */
  nodes: Map<string, string[]>
  /** By edge uid: on that edge. */
  edges: Map<string, string[]>
  /** By input parameter index: on that parameter's row. */
  params: Map<number, string[]>
  /** By settings field (name, scheduleConf, ...): under that field. */
  fields: Map<string, string[]>
  /** Everything else (the graph as a whole: "edges", a cycle): in a list above the canvas. */
  other: Problem[]
}

function add<K>(map: Map<K, string[]>, key: K, message: string) {
  const list = map.get(key)
  if (list) list.push(message)
  else map.set(key, [message])
}

const INDEXED = /^(nodes|edges|params)\[(\d+)\](?:[.[]|$)/

/**
 * Places each problem by its field: `nodes[i]…` on the editor's node i, `edges[i]…` on edge i,
 * `params[i]…` on input parameter i, a field of `settingsFields` (its name before any '.' or
 * '[') under it; a field naming an index the graph does not have, and any other field, in
 * `other`.
 */
export function placeProblems(
  problems: readonly Problem[],
  graph: EditorGraph,
  paramCount: number,
  settingsFields: readonly string[],
): PlacedProblems {
  const placed: PlacedProblems = { nodes: new Map(), edges: new Map(), params: new Map(), fields: new Map(), other: [] }
  for (const p of problems) {
    const m = INDEXED.exec(p.field)
    if (m) {
      const i = Number(m[2])
      if (m[1] === 'nodes' && i < graph.nodes.length) {
        add(placed.nodes, graph.nodes[i]!.uid, p.message)
        continue
      }
      if (m[1] === 'edges' && i < graph.edges.length) {
        add(placed.edges, graph.edges[i]!.uid, p.message)
        continue
      }
      if (m[1] === 'params' && i < paramCount) {
        add(placed.params, i, p.message)
        continue
      }
      placed.other.push(p)
      continue
    }
    const name = /^[A-Za-z]+/.exec(p.field)?.[0] ?? ''
    if (name !== '' && name !== 'nodes' && name !== 'edges' && name !== 'params' && settingsFields.includes(name)) {
      add(placed.fields, name, p.message)
    } else {
      placed.other.push(p)
    }
  }
  return placed
}

/** A workflow's name: openapi.yaml's JobName (the server's is_job_name). */
export const WORKFLOW_NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/

/** What the editor finds wrong before asking the server (see localProblems). */
export interface LocalProblem {
  field: string
  kind: 'nameRequired' | 'nameInvalid' | 'paramInvalid' | 'paramTwice'
  /** The parameter's name (paramInvalid, paramTwice). */
  name?: string
}

/**
 * The problems that make POST workflows/check refuse the whole body (400) instead of listing
 * them: a missing or malformed name, a parameter name that is not a key or is declared twice.
 * The editor shows these itself and asks the server only once there are none.
 */
export function localProblems(name: string, paramNames: readonly string[]): LocalProblem[] {
  const out: LocalProblem[] = []
  if (name === '') out.push({ field: 'name', kind: 'nameRequired' })
  else if (!WORKFLOW_NAME.test(name)) out.push({ field: 'name', kind: 'nameInvalid' })
  const seen = new Set<string>()
  paramNames.forEach((p, i) => {
    if (!NODE_KEY.test(p)) out.push({ field: `params[${i}].name`, kind: 'paramInvalid', name: p })
    else if (seen.has(p)) out.push({ field: `params[${i}].name`, kind: 'paramTwice', name: p })
    seen.add(p)
  })
  return out
}

/** The syntax a node's parameter template may use (shown beside the field; not translated). */
export const TEMPLATE_SYNTAX = ['${params.NAME}', '${nodes.KEY.output}', '${nodes.KEY.output.field}'] as const
