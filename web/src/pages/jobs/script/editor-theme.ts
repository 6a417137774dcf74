// CodeMirror's look from Element Plus's variables, so it follows the light and dark themes.
import { EditorView } from '@codemirror/view'
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language'
import { tags } from '@lezer/highlight'

const base = EditorView.theme({
  '&': {
    color: 'var(--el-text-color-primary)',
    backgroundColor: 'var(--el-bg-color)',
    fontSize: '13px',
    border: '1px solid var(--el-border-color)',
    borderRadius: '4px',
  },
  '&.cm-focused': { outline: '2px solid var(--el-color-primary)', outlineOffset: '-1px' },
  '.cm-content': {
    fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace",
    caretColor: 'var(--el-text-color-primary)',
  },
  '.cm-scroller': { fontFamily: 'inherit' },
  '.cm-gutters': {
    backgroundColor: 'var(--el-fill-color-light)',
    color: 'var(--el-text-color-secondary)',
    borderRight: '1px solid var(--el-border-color-light)',
  },
  '.cm-activeLine': { backgroundColor: 'var(--el-fill-color-lighter)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--el-fill-color)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': {
    backgroundColor: 'var(--el-color-primary-light-7) !important',
  },
  '.cm-cursor': { borderLeftColor: 'var(--el-text-color-primary)' },
  '.cm-panels': { backgroundColor: 'var(--el-bg-color-overlay)', color: 'var(--el-text-color-primary)' },
  '.cm-tooltip': { backgroundColor: 'var(--el-bg-color-overlay)', border: '1px solid var(--el-border-color)' },
})

// Colours readable on both backgrounds.
const highlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.controlKeyword, tags.operatorKeyword, tags.definitionKeyword, tags.moduleKeyword], color: '#c678dd' },
  { tag: [tags.string, tags.special(tags.string), tags.regexp], color: '#3fa34d' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: '#d19a66' },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: '#8b949e', fontStyle: 'italic' },
  { tag: [tags.variableName, tags.special(tags.variableName)], color: '#4d9de0' },
  { tag: [tags.function(tags.variableName), tags.function(tags.propertyName)], color: '#3b8eea' },
  { tag: [tags.typeName, tags.className], color: '#e5a50a' },
  { tag: [tags.meta, tags.processingInstruction], color: '#e06c75' },
  { tag: tags.invalid, color: '#f44747' },
])

export const editorTheme = [base, syntaxHighlighting(highlight)]
