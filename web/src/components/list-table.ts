// A column of ListTable.vue.
export interface ListColumn {
  /** The slot that fills the column's cells (and the row field shown when there is none). */
  key: string
  label: string
  /** As a card: the row's title (first, no label) or its actions (last, no label). */
  card?: 'title' | 'actions'
  /** Right-aligned (numbers). */
  numeric?: boolean
}
