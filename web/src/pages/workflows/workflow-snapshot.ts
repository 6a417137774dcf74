// What the workflow editor compares to tell whether there is anything unsaved: a canonical JSON
// of the body it would send (WorkflowInput, as POST and PUT workflows take it), taken when a
// workflow is loaded or saved and again as the user edits. Two bodies that save the same workflow
// give the same text however the editor got there, so a change undone by hand is no change:
// - object members in sorted order, members left out and members undefined alike;
// - nodes and edges as the sets they are: the editor holds them in the order they were added, so
//   a node deleted and picked again, or an edge drawn again, comes last without changing what
//   runs (a node's edges name it by key, and keys are unique in a saved workflow);
// - input parameters in their order, which the trigger dialog keeps.
// Node positions are not part of the body: the layout draws them from the nodes and edges alone,
// and nothing saves them. Pure: unit tested.
import type { Schemas } from '@/api/client'

type WorkflowInput = Schemas['WorkflowInput']

/** The body as canonical JSON: equal for bodies that save the same workflow (see above). */
export function bodySnapshot(body: WorkflowInput): string {
  return canonicalJson({
    ...body,
    nodes: sortedByJson(body.nodes ?? []),
    edges: sortedByJson(body.edges ?? []),
  })
}

/** JSON with every object's members in sorted order (arrays keep theirs). */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  )
}

function sortedByJson<T>(items: readonly T[]): T[] {
  return items
    .map((item) => [canonicalJson(item), item] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, item]) => item)
}
